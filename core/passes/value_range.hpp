// Integer value ranges (internal to libkiln): for every scalar i64 value,
// bounds [lo, hi] that hold in every launch, when the kernel proves them.
// Used by the range-based rewrites of simplify_algebra (division and
// modulo by constants, comparisons decided by ranges).
#pragma once

#include "kiln/ir/kernel.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace kiln::passes::detail {

struct Range {
  std::int64_t lo = 0;
  std::int64_t hi = 0;

  bool within(std::int64_t a, std::int64_t b) const { return lo >= a && hi <= b; }
  bool operator==(const Range&) const = default;
};

// Per op: the range of its value, or nullopt when unknown (not a scalar
// i64, or not bounded by what the kernel says). Derived from constants,
// INDEX and LOOP counters (never negative, below their length/count when
// that is bounded), casts from narrower integer types and bool, and
// interval arithmetic over ADD, SUB, MUL, NEG, MAD, DIV/MOD/SHR/SHL by
// constants, BIT_AND with a non-negative mask, MIN, MAX (bounded by one
// known operand) and SELECT. Any
// step that could overflow i64 gives "unknown": a range is never wrong
// because the kernel's arithmetic wrapped.
std::vector<std::optional<Range>> integer_ranges(const ir::Kernel& kernel);

// The range of op `id` alone, from the ranges `of_operand` gives for its
// operands (integer_ranges applies it to every op in order; the bounds
// analysis applies it with ranges narrowed by enclosing IF conditions).
using RangeOf = std::function<std::optional<Range>(ir::ValueId)>;
std::optional<Range> op_range(const ir::Kernel& kernel, ir::ValueId id, const RangeOf& of_operand);

}  // namespace kiln::passes::detail
