// remove_empty_ranges: loops that never run go; indices of length 1 are 0,
// and barriers go with the last LOCAL index.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(RemoveEmptyRanges, DropsLoopsOfCountZeroOrLess) {
  EXPECT_EQ(after_pass("remove_empty_ranges", R"(
%0 = param 0 global_mut f32[2]
%1 = const i64 0
%2 = const i64 -3
%3 = const f32 3
%4 = loop %1
  store f32 %0[%4], %3
endloop %4
%7 = loop %2
  store f32 %0[%7], %3
endloop %7
store f32 %0[%1], %3
)"),
            R"(%0 = param 0 global_mut f32[2]
%1 = const i64 0
%2 = const i64 -3
%3 = const f32 3
store f32 %0[%1], %3
)");
}

TEST(RemoveEmptyRanges, UnitIndicesBecomeZeroAndTheirBarriersGo) {
  EXPECT_EQ(after_pass("remove_empty_ranges", R"(
%0 = param 0 global_mut f32[8]
%1 = const i64 1
%2 = const i64 8
%3 = index group 0 %2
%4 = index group 1 %1
%5 = index local 0 %1
%6 = storage local f32[1]
%7 = cast f32 %3
store f32 %6[%5], %7
barrier
%10 = load f32 %6[%5]
%11 = add i64 %3, %4
store f32 %0[%11], %10
)"),
            R"(%0 = param 0 global_mut f32[8]
%1 = const i64 1
%2 = const i64 8
%3 = index group 0 %2
%4 = const i64 0
%5 = const i64 0
%6 = storage local f32[1]
%7 = cast f32 %3
store f32 %6[%5], %7
%9 = load f32 %6[%5]
%10 = add i64 %3, %4
store f32 %0[%10], %9
)");
}

TEST(RemoveEmptyRanges, KeepsBarriersWhileALocalIndexRemains) {
  constexpr std::string_view kTwoAxes = R"(%0 = param 0 global_mut f32[4]
%1 = const i64 1
%2 = const i64 4
%3 = index local 1 %2
%4 = storage local f32[4]
%5 = cast f32 %3
store f32 %4[%3], %5
barrier
%8 = const i64 3
%9 = sub i64 %8, %3
%10 = load f32 %4[%9]
store f32 %0[%3], %10
)";
  EXPECT_EQ(after_pass("remove_empty_ranges", kTwoAxes), kTwoAxes);
}
