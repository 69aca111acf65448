#include "cuda_source.hpp"

#include <kiln/sdk/c_emitter.hpp>

namespace kiln::cuda {

std::string generate_cuda_source(std::span<const kiln_op> ops) {
  sdk::EmitOptions options;
  options.entry = kCudaKernelName;
  return sdk::emit_c_family(ops, sdk::cuda_dialect(), options).source;
}

}  // namespace kiln::cuda
