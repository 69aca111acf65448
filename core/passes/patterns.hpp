// Small pattern helpers the always-on passes share (internal to libkiln).
#pragma once

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/kernel.hpp"

#include <optional>

namespace kiln::passes::detail {

// The constant every lane of `id` holds: a scalar CONST (or constant integer
// expression, as ir::constant_double), or a BROADCAST of one.
inline std::optional<double> splat_constant(const ir::Kernel& kernel, ir::ValueId id) {
  if (id >= kernel.size()) return std::nullopt;
  if (kernel[id].kind == ir::OpKind::Broadcast) return ir::constant_double(kernel, kernel[id].src[0]);
  return ir::constant_double(kernel, id);
}

}  // namespace kiln::passes::detail
