// CUDA C++ for a wire kernel, from the SDK's C-family emitter with its CUDA
// dialect: one extern "C" __global__ function named kCudaKernelName whose
// parameters are the kernel's PARAMs in slot order.
#pragma once

#include <kiln/kernel_ir.h>

#include <cstdint>
#include <span>
#include <string>

namespace kiln::cuda {

inline constexpr const char* kCudaKernelName = "kiln_kernel";

struct CudaSource {
  std::string text;
  // Dynamic shared memory the launch passes (LOCAL storage past the 48 KiB
  // of static __shared__ arrays); 0: none.
  std::uint64_t dynamic_shared_bytes = 0;
};

// Throws PluginError(UNSUPPORTED, failed_op) for a kernel the dialect cannot
// express.
CudaSource emit_cuda(std::span<const kiln_op> ops);
// The text alone.
std::string generate_cuda_source(std::span<const kiln_op> ops);

}  // namespace kiln::cuda
