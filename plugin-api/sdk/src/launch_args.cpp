#include "kiln/sdk/launch_args.hpp"

#include "kiln/sdk/plugin_support.hpp"
#include "kiln/sdk/wire.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <string>

namespace kiln::sdk {

namespace {

std::string describe(const ParamSlot& p) {
  return std::string(param_kind_name(p.kind)) + " " + std::string(dtype_name(p.dtype)) + ", param op " +
         std::to_string(p.op);
}

[[noreturn]] void bad_arg(std::size_t slot, const ParamSlot& p, const std::string& why) {
  fail(KILN_STATUS_INVALID_ARGUMENT, "launch argument " + std::to_string(slot) + " (" + describe(p) + "): " + why);
}

}  // namespace

std::span<const kiln_op> kernel_ops(const kiln_kernel* kernel) {
  if (kernel == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, "kernel is NULL");
  if (kernel->struct_size < KILN_KERNEL_STRUCT_SIZE)
    fail(KILN_STATUS_INVALID_ARGUMENT, "kernel struct_size " + std::to_string(kernel->struct_size) + " < " +
                                           std::to_string(KILN_KERNEL_STRUCT_SIZE));
  if (kernel->op_size != sizeof(kiln_op))
    fail(KILN_STATUS_INVALID_ARGUMENT,
         "kernel op_size " + std::to_string(kernel->op_size) + " (ABI 1 ops are " + std::to_string(sizeof(kiln_op)) +
             " bytes)");
  if (kernel->n_ops != 0 && kernel->ops == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, "kernel ops is NULL");
  return {kernel->ops, kernel->n_ops};
}

std::vector<ParamSlot> collect_params(std::span<const kiln_op> ops) {
  std::size_t count = 0;
  for (const kiln_op& op : ops) count += op.kind == KILN_OP_PARAM ? 1 : 0;
  std::vector<ParamSlot> slots(count);
  std::vector<bool> seen(count, false);
  for (std::uint32_t id = 0; id < ops.size(); ++id) {
    const kiln_op& op = ops[id];
    if (op.kind != KILN_OP_PARAM) continue;
    const std::string where = "op " + std::to_string(id) + ": param slot " + std::to_string(op.attr);
    if (op.attr >= count)
      fail(KILN_STATUS_INVALID_ARGUMENT, where + " out of range (" + std::to_string(count) + " params)", id);
    if (seen[op.attr]) fail(KILN_STATUS_INVALID_ARGUMENT, where + " appears twice", id);
    if (op.code < KILN_PARAM_GLOBAL || op.code > KILN_PARAM_VARIABLE)
      fail(KILN_STATUS_INVALID_ARGUMENT, where + ": unknown param kind " + std::to_string(op.code), id);
    if (!dtype_valid(op.dtype))
      fail(KILN_STATUS_INVALID_ARGUMENT, where + ": invalid dtype " + std::to_string(op.dtype), id);
    seen[op.attr] = true;
    slots[op.attr] = ParamSlot{id, op.code, op.dtype, op.code == KILN_PARAM_VARIABLE ? 0 : op.imm};
  }
  return slots;
}

void check_launch_args(std::span<const ParamSlot> params, std::span<const kiln_arg> args, BufferField field) {
  if (args.size() != params.size())
    fail(KILN_STATUS_INVALID_ARGUMENT, "launch has " + std::to_string(args.size()) + " arguments, the kernel " +
                                           std::to_string(params.size()) + " params");
  if (!args.empty() && args.data() == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, "launch args is NULL");
  for (std::size_t slot = 0; slot < params.size(); ++slot) {
    const ParamSlot& p = params[slot];
    const kiln_arg& a = args[slot];
    if (p.is_buffer()) {
      if (a.kind != KILN_ARG_BUFFER) bad_arg(slot, p, "expected a buffer");
      if (field == BufferField::Handle && a.buffer == nullptr) bad_arg(slot, p, "buffer is NULL");
      if (field == BufferField::HostPointer && a.host_pointer == nullptr) bad_arg(slot, p, "host_pointer is NULL");
      const std::uint64_t needed = p.elements * dtype_bytes(p.dtype);
      if (a.bytes < needed)
        bad_arg(slot, p, std::to_string(a.bytes) + " bytes bound, the kernel uses " + std::to_string(needed));
    } else {
      if (a.kind != KILN_ARG_SCALAR) bad_arg(slot, p, "expected a scalar");
      if (a.dtype != p.dtype) bad_arg(slot, p, "scalar dtype is " + std::string(dtype_name(a.dtype)));
    }
  }
}

unsigned scalar_bytes(const kiln_arg& arg, std::uint8_t dtype, unsigned char (&out)[8]) {
  const unsigned n = dtype_bytes(dtype);
  std::uint64_t bits = arg.scalar_bits;
  if (dtype == KILN_DTYPE_BOOL) bits = bits != 0 ? 1 : 0;
  static_assert(std::endian::native == std::endian::little, "scalar_bytes assumes a little-endian host");
  std::memcpy(out, &bits, sizeof(bits));
  return n;
}

HostArguments host_arguments(const kiln_launch_args& launch, std::span<const ParamSlot> params) {
  if (launch.n_args != 0 && launch.args == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, "launch args is NULL");
  const std::span<const kiln_arg> args(launch.args, launch.n_args);
  check_launch_args(params, args, BufferField::HostPointer);
  HostArguments out;
  out.pointers.assign(params.size(), nullptr);
  out.scalars.assign(params.size(), 0);
  for (std::size_t slot = 0; slot < params.size(); ++slot) {
    if (params[slot].is_buffer()) {
      out.pointers[slot] = args[slot].host_pointer;
    } else {
      out.scalars[slot] = args[slot].scalar_bits;
      out.pointers[slot] = &out.scalars[slot];
    }
  }
  for (int axis = 0; axis < 3; ++axis) {
    const std::uint64_t g = launch.groups[axis];
    if (g == 0 || g > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(KILN_STATUS_INVALID_ARGUMENT, "launch: groups[" + std::to_string(axis) + "] is " + std::to_string(g));
    out.groups[axis] = static_cast<std::int64_t>(g);
  }
  return out;
}

void flush_host_caches(const HostArguments& arguments, const kiln_launch_args& launch) {
#if defined(__x86_64__)
  for (std::size_t slot = 0; slot < launch.n_args; ++slot) {
    const kiln_arg& a = launch.args[slot];
    if (a.kind != KILN_ARG_BUFFER || arguments.pointers[slot] == nullptr) continue;
    const char* p = static_cast<const char*>(arguments.pointers[slot]);
    for (std::uint64_t offset = 0; offset < a.bytes; offset += 64) __builtin_ia32_clflush(p + offset);
  }
  __builtin_ia32_mfence();
#else
  (void)arguments;
  (void)launch;
  // Larger than the last-level caches of the machines kiln runs on.
  static std::vector<char> sweep(std::size_t{256} << 20);
  static char sink = 0;
  for (std::size_t i = 0; i < sweep.size(); i += 64) sweep[i] = static_cast<char>(sweep[i] + 1);
  sink = static_cast<char>(sink + sweep[sweep.size() / 2]);
#endif
}

}  // namespace kiln::sdk
