// kiln/sdk/integer_ranges.hpp on its own: the bounds each op kind gives, and
// "unknown" wherever a bound could be wrong (a dynamic length's upper end,
// arithmetic that could overflow i64, a division by a non-constant).
#include <gtest/gtest.h>

#include "kiln/sdk/integer_ranges.hpp"
#include "support/wire_builder.hpp"

#include <limits>

namespace {

using kiln::sdk::IntRange;
using kiln::sdk::integer_ranges;
using kiln::test::WireBuilder;

TEST(IntegerRanges, IndicesLoopsAndArithmeticOnThem) {
  WireBuilder w;
  const auto n = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 0);
  const auto g = w.group_index(0, w.const_i64(1000));
  const auto l = w.local_index(0, w.const_i64(256));
  const auto i = w.mad(KILN_DTYPE_I64, g, w.const_i64(256), l);
  const auto free = w.group_index(1, n);
  const auto k = w.loop(w.const_i64(7));
  const auto sum = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, i, k);
  const auto quotient = w.binary(KILN_BINARY_DIV, KILN_DTYPE_I64, sum, w.const_i64(3));
  const auto remainder = w.binary(KILN_BINARY_MOD, KILN_DTYPE_I64, free, w.const_i64(8));
  const auto shifted = w.binary(KILN_BINARY_SHR, KILN_DTYPE_I64, i, w.const_i64(4));
  const auto masked = w.binary(KILN_BINARY_BIT_AND, KILN_DTYPE_I64, free, w.const_i64(15));
  const auto negated = w.unary(KILN_UNARY_NEG, KILN_DTYPE_I64, k);
  const auto clamped = w.binary(KILN_BINARY_MIN, KILN_DTYPE_I64, free, w.const_i64(99));
  const auto by_free = w.binary(KILN_BINARY_DIV, KILN_DTYPE_I64, i, free);
  const auto huge = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, w.const_i64(std::int64_t{1} << 40), w.const_i64(std::int64_t{1} << 30));
  const auto narrow = w.cast(KILN_DTYPE_I64, w.cast(KILN_DTYPE_I16, g));
  w.end_loop(k);
  const auto ranges = integer_ranges(w.ops);
  auto range = [&](std::uint32_t id) { return ranges.at(id); };
  EXPECT_EQ(range(g), (IntRange{0, 999}));
  EXPECT_EQ(range(l), (IntRange{0, 255}));
  EXPECT_EQ(range(i), (IntRange{0, 999 * 256 + 255}));
  EXPECT_EQ(range(free), (IntRange{0, std::numeric_limits<std::int64_t>::max() - 1})) << "never negative, unbounded above";
  EXPECT_EQ(range(k), (IntRange{0, 6}));
  EXPECT_EQ(range(sum), (IntRange{0, 999 * 256 + 255 + 6}));
  EXPECT_EQ(range(quotient), (IntRange{0, (999 * 256 + 255 + 6) / 3}));
  EXPECT_EQ(range(remainder), (IntRange{0, 7}));
  EXPECT_EQ(range(shifted), (IntRange{0, (999 * 256 + 255) >> 4}));
  EXPECT_EQ(range(masked), (IntRange{0, 15}));
  EXPECT_EQ(range(negated), (IntRange{-6, 0}));
  EXPECT_EQ(range(clamped), (IntRange{0, 99}));
  EXPECT_FALSE(range(by_free)) << "a division by a value that is not a constant";
  EXPECT_FALSE(range(huge)) << "2^70 overflows i64: unknown, never a wrapped bound";
  EXPECT_EQ(range(narrow), (IntRange{-32768, 32767})) << "a cast from i16";
  EXPECT_FALSE(range(n)) << "a VARIABLE param";
}

// MAD's product alone (what a 32-bit declaration of it must also hold):
// the sum may fit where the product does not.
TEST(IntegerRanges, MadProductIsBoundedOnItsOwn) {
  WireBuilder w;
  const auto g = w.group_index(0, w.const_i64(1000));
  const auto c = w.const_i64(3000000);
  const auto mad = w.mad(KILN_DTYPE_I64, g, c, w.const_i64(-2000000000));
  const auto ranges = integer_ranges(w.ops);
  EXPECT_EQ(ranges.at(mad), (IntRange{-2000000000, 999LL * 3000000 - 2000000000}));
  EXPECT_EQ(kiln::sdk::product_range(ranges.at(g), ranges.at(c)), (IntRange{0, 999LL * 3000000}));
  EXPECT_FALSE(kiln::sdk::product_range(ranges.at(g), std::nullopt));
}

}  // namespace
