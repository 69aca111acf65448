// Integer value ranges (internal to libkiln): for every scalar i64 value,
// bounds [lo, hi] that hold in every launch, when the kernel proves them.
// The analysis is the SDK's (kiln/sdk/integer_ranges.hpp), which the
// C-family emitter uses too; here it reads a kernel. Used by the
// range-based rewrites of simplify_algebra (division and modulo by
// constants, comparisons decided by ranges), the bounds analysis (op by op,
// with ranges narrowed by enclosing IF conditions: sdk::op_range over the
// kernel's wire form) and the cost model's counts.
#pragma once

#include "kiln/ir/kernel.hpp"

#include <kiln/sdk/integer_ranges.hpp>

#include <optional>
#include <vector>

namespace kiln::passes::detail {

using Range = sdk::IntRange;
using RangeOf = sdk::RangeOf;

// Per op: the range of its value, or nullopt when unknown.
inline std::vector<std::optional<Range>> integer_ranges(const ir::Kernel& kernel) {
  return sdk::integer_ranges(kernel.to_wire());
}

}  // namespace kiln::passes::detail
