// canonicalize_operands: constants right, earlier operand left, comparisons
// flipped to match.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(CanonicalizeOperands, ConstantsRightThenDefinitionOrder) {
  EXPECT_EQ(after_pass("canonicalize_operands", R"(
%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = const f32 2
%4 = index group 0 %2
%5 = load f32 %0[%4]
%6 = mul f32 %3, %5
%7 = add f32 %6, %5
%8 = max f32 %3, %7
%9 = sub f32 %3, %8
%10 = mad f32 %9, %5, %3
store f32 %1[%4], %10
)"),
            R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = const f32 2
%4 = index group 0 %2
%5 = load f32 %0[%4]
%6 = mul f32 %5, %3
%7 = add f32 %5, %6
%8 = max f32 %7, %3
%9 = sub f32 %3, %8
%10 = mad f32 %5, %9, %3
store f32 %1[%4], %10
)");
}

TEST(CanonicalizeOperands, FlipsComparisons) {
  EXPECT_EQ(after_pass("canonicalize_operands", R"(
%0 = param 0 global_mut i32[8]
%1 = const i64 8
%2 = const i64 3
%3 = index group 0 %1
%4 = cmplt bool %2, %3
%5 = cast i32 %4
%6 = loop %1
  %7 = cmpgt bool %6, %3
  %8 = cast i32 %7
  %9 = add i32 %8, %5
  store i32 %0[%3], %9
endloop %6
)"),
            R"(%0 = param 0 global_mut i32[8]
%1 = const i64 8
%2 = const i64 3
%3 = index group 0 %1
%4 = cmpgt bool %3, %2
%5 = cast i32 %4
%6 = loop %1
  %7 = cmplt bool %3, %6
  %8 = cast i32 %7
  %9 = add i32 %5, %8
  store i32 %0[%3], %9
endloop %6
)");
}
