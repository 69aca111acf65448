#include "kiln/ir/kernel.hpp"

#include <kiln/sdk/wire.hpp>

#include <cstring>

namespace kiln::ir {

bool Op::has_result() const { return sdk::has_result(static_cast<unsigned>(kind)); }
bool Op::is_memory() const {
  return kind == OpKind::Storage || (kind == OpKind::Param && param_kind() != ParamKind::Variable);
}
std::size_t Op::operand_count() const { return sdk::operand_count(static_cast<unsigned>(kind)); }

std::vector<kiln_op> Kernel::to_wire() const {
  std::vector<kiln_op> wire(ops.size());
  if (!ops.empty()) std::memcpy(wire.data(), ops.data(), ops.size() * sizeof(kiln_op));
  return wire;
}

Kernel Kernel::from_wire(std::span<const kiln_op> wire) {
  Kernel kernel;
  kernel.ops.resize(wire.size());
  if (!wire.empty()) std::memcpy(static_cast<void*>(kernel.ops.data()), wire.data(), wire.size() * sizeof(kiln_op));
  return kernel;
}

}  // namespace kiln::ir
