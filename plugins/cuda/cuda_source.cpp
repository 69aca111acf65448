#include "cuda_source.hpp"

#include <kiln/sdk/c_emitter.hpp>

#include <utility>

namespace kiln::cuda {

CudaSource emit_cuda(std::span<const kiln_op> ops) {
  sdk::EmitOptions options;
  options.entry = kCudaKernelName;
  sdk::EmittedKernel emitted = sdk::emit_c_family(ops, sdk::cuda_dialect(), options);
  return {std::move(emitted.source), emitted.dynamic_local_bytes};
}

std::string generate_cuda_source(std::span<const kiln_op> ops) { return emit_cuda(ops).text; }

}  // namespace kiln::cuda
