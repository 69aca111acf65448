#include "kernel_interface.hpp"

#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/wire.hpp>

#include <string>

namespace kiln::vulkan {

namespace {

[[noreturn]] void unsupported(std::uint32_t id, const kiln_op& op, const std::string& why) {
  sdk::fail(KILN_STATUS_UNSUPPORTED, "op " + std::to_string(id) + " (" + std::string(sdk::op_kind_name(op.kind)) + "): " + why, id);
}

}  // namespace

void check_device_support(std::span<const kiln_op> ops, const DeviceCaps& caps) {
  const std::uint64_t shared_limit = caps.limits.maxComputeSharedMemorySize;
  std::uint64_t shared_bytes = 0;
  for (std::uint32_t id = 0; id < ops.size(); ++id) {
    const kiln_op& op = ops[id];
    if (!sdk::dtype_valid(op.dtype)) continue;
    if (!dtype_supported(caps, op.dtype))
      unsupported(id, op, std::string(sdk::dtype_name(op.dtype)) + " is not supported by this Vulkan device");
    if (op.kind == KILN_OP_STORAGE && op.code == KILN_SCOPE_LOCAL) {
      const std::uint64_t bytes = sdk::dtype_bytes(op.dtype);
      if (op.imm > (shared_limit - shared_bytes) / bytes)
        unsupported(id, op, "LOCAL storage of " + std::to_string(op.imm) + " " + std::string(sdk::dtype_name(op.dtype)) +
                                " exceeds the device's " + std::to_string(shared_limit) + " bytes of shared memory (" +
                                std::to_string(shared_bytes) + " already used)");
      shared_bytes += op.imm * bytes;
    }
  }
}

KernelInterface read_interface(const sdk::KernelShape& shape, const VkPhysicalDeviceLimits& limits) {
  KernelInterface iface;
  std::uint64_t threads = 1;
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t n = shape.local_sizes[axis];  // >= 1: the emitter checks
    if (n > limits.maxComputeWorkGroupSize[axis])
      sdk::fail(KILN_STATUS_UNSUPPORTED, "compile: " + std::to_string(n) + " threads on local axis " + std::to_string(axis) +
                                             " (device maximum " + std::to_string(limits.maxComputeWorkGroupSize[axis]) + ")");
    iface.local_size[axis] = static_cast<std::uint32_t>(n);
    threads *= iface.local_size[axis];
  }
  if (threads > limits.maxComputeWorkGroupInvocations)
    sdk::fail(KILN_STATUS_UNSUPPORTED, "compile: " + std::to_string(threads) + " threads per group (device maximum " +
                                           std::to_string(limits.maxComputeWorkGroupInvocations) + ")");

  const std::vector<sdk::GlslArgument> where = sdk::glsl_arguments(shape);
  for (std::size_t slot = 0; slot < shape.params.size(); ++slot) {
    const sdk::ParamSlot& p = shape.params[slot];
    iface.params.push_back({p.op, p.kind, p.dtype, where[slot].binding, where[slot].push_offset, where[slot].push_bytes});
    if (p.kind != KILN_PARAM_VARIABLE) {
      if (++iface.buffer_count > limits.maxPerStageDescriptorStorageBuffers)
        sdk::fail(KILN_STATUS_UNSUPPORTED, "op " + std::to_string(p.op) + " (param): " + std::to_string(iface.buffer_count) +
                                               " buffer params; the device binds at most " +
                                               std::to_string(limits.maxPerStageDescriptorStorageBuffers) + " per shader",
                  p.op);
      continue;
    }
    iface.push_constant_bytes = where[slot].push_offset + where[slot].push_bytes;
    if (iface.push_constant_bytes > limits.maxPushConstantsSize)
      sdk::fail(KILN_STATUS_UNSUPPORTED, "op " + std::to_string(p.op) + " (param var): the scalar params need " +
                                             std::to_string(iface.push_constant_bytes) +
                                             " bytes of push constants; the device has " +
                                             std::to_string(limits.maxPushConstantsSize),
                p.op);
  }
  iface.slots = shape.params;
  return iface;
}

}  // namespace kiln::vulkan
