// CUDA C++ for a wire kernel, from the SDK's C-family emitter with its CUDA
// dialect: one extern "C" __global__ function named kCudaKernelName whose
// parameters are the kernel's PARAMs in slot order.
#pragma once

#include <kiln/kernel_ir.h>

#include <span>
#include <string>

namespace kiln::cuda {

inline constexpr const char* kCudaKernelName = "kiln_kernel";

// Throws PluginError(UNSUPPORTED, failed_op) for a kernel the dialect cannot
// express.
std::string generate_cuda_source(std::span<const kiln_op> ops);

}  // namespace kiln::cuda
