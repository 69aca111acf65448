// The rule groups of simplify_algebra (internal to libkiln). Each returns
// the value that replaces old op `id` (emitting what it needs through the
// rewriter), or nullopt when it does not apply. Patterns are matched on the
// old kernel; replacements are built in the new one.
#pragma once

#include "kiln/ir/rewriter.hpp"
#include "value_range.hpp"

#include <optional>
#include <vector>

namespace kiln::passes::detail {

struct AlgebraContext {
  const ir::Kernel& kernel;
  const std::vector<std::optional<Range>>& ranges;
  ir::Rewriter& rw;
};

// Identities that hold bit for bit: x+0, x*1, x*0 (integers), --x, x-x
// (integers), x&x, select(c,a,a), same-type casts, x/2^k -> x*2^-k
// (floats), constants re-associated (integers), comparisons and min/max
// decided by value ranges.
std::optional<ir::Value> simplify_identity(const AlgebraContext& context, ir::ValueId id);

// Division and modulo of non-negative integers by constants, through the
// affine form and value ranges: (a*c+b)/c -> a + b/c and (a*c+b)%c -> b%c
// when a, b >= 0; x/c -> 0 and x%c -> x when 0 <= x < c; x/2^k -> x>>k and
// x%2^k -> x&(2^k-1) when x >= 0.
std::optional<ir::Value> simplify_division(const AlgebraContext& context, ir::ValueId id);

}  // namespace kiln::passes::detail
