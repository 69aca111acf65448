// kiln/sdk/launch_params.hpp - what a device plugin needs to bind launch
// arguments: the kernel's PARAMs by slot, and a check that the kiln_args a
// launch brings match them (kinds, dtypes, buffer sizes), so that a bad
// launch is an INVALID_ARGUMENT naming the argument, never a device fault.
//
// Used by the plugins whose buffers are device objects (OpenCL, CUDA, Vulkan).
#pragma once

#include <kiln/plugin.h>

#include <cstdint>
#include <span>
#include <vector>

namespace kiln::sdk {

// One PARAM of a kernel, in slot order.
struct ParamSlot {
  std::uint32_t op = 0;        // index of the PARAM op
  std::uint8_t kind = 0;       // kiln_param_kind
  std::uint8_t dtype = 0;      // kiln_dtype (element type for buffers)
  std::uint64_t elements = 0;  // GLOBAL/GLOBAL_MUT: known element count, 0 if unknown

  bool is_buffer() const { return kind == KILN_PARAM_GLOBAL || kind == KILN_PARAM_GLOBAL_MUT; }
};

// The ops of a kernel handed over the ABI, after checking the kiln_kernel
// header (struct_size, op_size, non-NULL ops). Throws INVALID_ARGUMENT.
std::span<const kiln_op> kernel_ops(const kiln_kernel* kernel);

// The kernel's PARAMs indexed by slot. Throws INVALID_ARGUMENT (naming the
// op) when a slot is missing, repeated or out of range.
std::vector<ParamSlot> collect_params(std::span<const kiln_op> ops);

// Checks launch arguments against the params: count, kind, scalar dtype,
// non-NULL buffers, and bytes >= elements * dtype size where the element
// count is known. Throws INVALID_ARGUMENT naming the argument.
void check_launch_args(std::span<const ParamSlot> params, std::span<const kiln_arg> args);

// The bytes of a SCALAR argument as the device expects them: the low
// dtype_bytes(dtype) bytes of scalar_bits, little-endian (bool: one byte).
// Returns the number of bytes written to `out` (at most 8).
unsigned scalar_bytes(const kiln_arg& arg, std::uint8_t dtype, unsigned char (&out)[8]);

}  // namespace kiln::sdk
