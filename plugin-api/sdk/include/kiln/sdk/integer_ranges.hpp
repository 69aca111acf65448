// kiln/sdk/integer_ranges.hpp - integer value ranges over a kernel's ops:
// for every scalar i64 value, bounds [lo, hi] that hold in every launch,
// when the kernel proves them.
//
// Shared by the core (its range-based rewrites: division, modulo and
// comparisons decided by ranges; the bounds analysis, with ranges narrowed
// by enclosing IF conditions) and the C-family emitter (index arithmetic
// that fits 32 bits declared as a 32-bit int where the dialect asks: on a
// GPU a 64-bit integer op takes two instructions or more).
#pragma once

#include <kiln/kernel_ir.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace kiln::sdk {

struct IntRange {
  std::int64_t lo = 0;
  std::int64_t hi = 0;

  bool within(std::int64_t a, std::int64_t b) const { return lo >= a && hi <= b; }
  bool operator==(const IntRange&) const = default;
};

// The range of op `id` alone, from the ranges `of_operand` gives for its
// operands (earlier ops only), or nullopt when unknown (not a scalar i64,
// or not bounded by what the kernel says). Derived from constants, INDEX
// and LOOP counters (never negative, below their length/count when that is
// bounded), casts from narrower integer types and bool, and interval
// arithmetic over ADD, SUB, MUL, NEG, ABS, MAD, DIV/MOD/SHR/SHL by
// constants, BIT_AND/AND with a non-negative mask, MIN, MAX (bounded by
// one known operand) and SELECT. Any step that could overflow i64 gives
// "unknown": a range is never wrong because the kernel's arithmetic
// wrapped.
using RangeOf = std::function<std::optional<IntRange>(std::uint32_t)>;
std::optional<IntRange> op_range(std::span<const kiln_op> ops, std::uint32_t id, const RangeOf& of_operand);

// op_range applied to every op in order.
std::vector<std::optional<IntRange>> integer_ranges(std::span<const kiln_op> ops);

// The range of MAD's product (src[0] x src[1]) from its operands' ranges:
// what a 32-bit declaration of a MAD must also hold.
std::optional<IntRange> product_range(const std::optional<IntRange>& a, const std::optional<IntRange>& b);

}  // namespace kiln::sdk
