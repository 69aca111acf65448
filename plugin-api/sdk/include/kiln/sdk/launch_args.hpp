// kiln/sdk/launch_args.hpp - a kernel's PARAMs and the launch arguments that
// bind them, for every plugin: the kernel handed to compile, its params by
// slot, and the check that a launch's kiln_args match them (count, kinds,
// scalar dtypes, buffer sizes), so that a bad launch is an INVALID_ARGUMENT
// naming the argument, never a device fault.
//
// Buffers reach a plugin in one of two ways (kiln_arg in plugin.h):
//   - device plugins (OpenCL, CUDA, Vulkan) read kiln_arg.buffer, a handle
//     they allocated;
//   - host-memory plugins (KILN_DEVICE_HOST_MEMORY: C, CBLAS, dummy) read
//     kiln_arg.host_pointer, which the host always sets for them, also for
//     a buffer another host-memory plugin allocated (kiln_arg.buffer is then
//     NULL): a c:0 buffer runs on cblas:0 as is. host_arguments() turns such
//     a launch into plain pointers.
#pragma once

#include <kiln/plugin.h>

#include <array>
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
// op) when a slot is missing, repeated or out of range, or a param's kind or
// dtype is invalid.
std::vector<ParamSlot> collect_params(std::span<const kiln_op> ops);

// Which field of a BUFFER kiln_arg the plugin reads.
enum class BufferField { Handle, HostPointer };

// Checks launch arguments against the params: count, kind, scalar dtype,
// a non-NULL buffer handle or host pointer (as `field` says), and
// bytes >= elements * dtype size where the element count is known. Throws
// INVALID_ARGUMENT naming the argument.
void check_launch_args(std::span<const ParamSlot> params, std::span<const kiln_arg> args,
                       BufferField field = BufferField::Handle);

// The bytes of a SCALAR argument as the device expects them: the low
// dtype_bytes(dtype) bytes of scalar_bits, little-endian (bool: one byte).
// Returns the number of bytes written to `out` (at most 8).
unsigned scalar_bytes(const kiln_arg& arg, std::uint8_t dtype, unsigned char (&out)[8]);

// ------------------------------------------------- host-memory plugins --

// The arguments of one launch, by slot. Not copyable: pointers[] of a
// VARIABLE points into scalars[].
struct HostArguments {
  std::vector<void*> pointers;          // a buffer's bytes, or &scalars[slot]
  std::vector<std::uint64_t> scalars;   // VARIABLE value bits (0 for buffers)
  std::array<std::int64_t, 3> groups{1, 1, 1};

  HostArguments() = default;
  HostArguments(HostArguments&&) = default;
  HostArguments& operator=(HostArguments&&) = default;
  HostArguments(const HostArguments&) = delete;
  HostArguments& operator=(const HostArguments&) = delete;
};

// check_launch_args(BufferField::HostPointer), group counts >= 1, and the
// pointers gathered. Throws INVALID_ARGUMENT naming the argument.
HostArguments host_arguments(const kiln_launch_args& launch, std::span<const ParamSlot> params);

// Evicts the launch's buffers from every cache level (KILN_TIMED_FLUSH_CACHE):
// clflush on x86-64, a sweep through a large scratch buffer elsewhere.
void flush_host_caches(const HostArguments& arguments, const kiln_launch_args& launch);

}  // namespace kiln::sdk
