#include "cuda_source.hpp"

#include <kiln/sdk/plugin_support.hpp>

namespace kiln::cuda {

std::string generate_cuda_source(std::span<const kiln_op>) {
  sdk::fail(KILN_STATUS_NOT_IMPLEMENTED, "compile: CUDA C++ generation waits for the SDK's C-family emitter");
}

}  // namespace kiln::cuda
