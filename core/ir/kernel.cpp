#include "kiln/ir/kernel.hpp"

#include <cstring>

namespace kiln::ir {

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
