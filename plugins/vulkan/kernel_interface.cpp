#include "kernel_interface.hpp"

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/wire.hpp>

#include <string>

namespace kiln::vulkan {

KernelInterface read_interface(std::span<const kiln_op> ops, std::uint32_t max_push_constant_bytes) {
  KernelInterface iface;
  std::vector<std::uint32_t> param_ops;
  for (std::uint32_t id = 0; id < ops.size(); ++id) {
    const kiln_op& op = ops[id];
    if (op.kind == KILN_OP_PARAM) param_ops.push_back(id);
    if (op.kind == KILN_OP_INDEX && op.code == KILN_SCOPE_LOCAL && op.attr < 3) {
      const std::uint32_t len = op.src[0];
      if (len >= id || ops[len].kind != KILN_OP_CONST)
        sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "op " + std::to_string(id) + " (index local): length must be a CONST", id);
      const std::int64_t n = sdk::int_from_bits(ops[len].imm, ops[len].dtype);
      if (n < 1 || n > (1 << 16))
        sdk::fail(KILN_STATUS_UNSUPPORTED, "op " + std::to_string(id) + " (index local): " + std::to_string(n) +
                                               " threads on one axis", id);
      iface.local_size[op.attr] = static_cast<std::uint32_t>(n);
    }
  }
  iface.params.resize(param_ops.size());
  std::vector<bool> seen(param_ops.size(), false);
  for (std::uint32_t id : param_ops) {
    const kiln_op& op = ops[id];
    if (op.attr >= param_ops.size() || seen[op.attr])
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "op " + std::to_string(id) + " (param): slot " + std::to_string(op.attr) +
                                                  " is out of range or used twice", id);
    if (op.code < KILN_PARAM_GLOBAL || op.code > KILN_PARAM_VARIABLE)
      sdk::fail(KILN_STATUS_UNSUPPORTED, "op " + std::to_string(id) + " (param): unknown param kind " +
                                             std::to_string(op.code), id);
    if (!sdk::dtype_valid(op.dtype))
      sdk::fail(KILN_STATUS_UNSUPPORTED, "op " + std::to_string(id) + " (param): unknown dtype " +
                                             std::to_string(op.dtype), id);
    seen[op.attr] = true;
    iface.params[op.attr] = {id, op.code, op.dtype, 0, 0, 0};
  }
  for (auto& p : iface.params) {
    if (p.kind == KILN_PARAM_VARIABLE) {
      p.push_bytes = sdk::dtype_bytes(p.dtype) == 8 ? 8 : 4;
      iface.push_constant_bytes = (iface.push_constant_bytes + p.push_bytes - 1) / p.push_bytes * p.push_bytes;
      p.push_offset = iface.push_constant_bytes;
      iface.push_constant_bytes += p.push_bytes;
      if (iface.push_constant_bytes > max_push_constant_bytes)
        sdk::fail(KILN_STATUS_UNSUPPORTED, "op " + std::to_string(p.op) + " (param var): the scalar params need " +
                                               std::to_string(iface.push_constant_bytes) +
                                               " bytes of push constants; the device has " +
                                               std::to_string(max_push_constant_bytes), p.op);
    } else {
      p.binding = iface.buffer_count++;
    }
  }
  iface.slots = sdk::collect_params(ops);
  return iface;
}

}  // namespace kiln::vulkan
