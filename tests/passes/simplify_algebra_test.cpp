// simplify_algebra: identities that hold bit for bit, and the range-based
// division rules on index arithmetic.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(SimplifyAlgebra, IntegerIdentities) {
  EXPECT_EQ(after_pass("simplify_algebra", R"(
%0 = param 0 global i32[4]
%1 = param 1 global_mut i32[4]
%2 = const i64 4
%3 = const i32 0
%4 = const i32 1
%5 = index group 0 %2
%6 = load i32 %0[%5]
%7 = add i32 %6, %3
%8 = mul i32 %4, %7
%9 = mul i32 %8, %3
%10 = sub i32 %6, %6
%11 = neg i32 %6
%12 = neg i32 %11
%13 = bitxor i32 %12, %12
%14 = add i32 %9, %10
%15 = add i32 %14, %13
%16 = add i32 %15, %8
store i32 %1[%5], %16
)"),
            R"(%0 = param 0 global i32[4]
%1 = param 1 global_mut i32[4]
%2 = const i64 4
%3 = const i32 0
%4 = const i32 1
%5 = index group 0 %2
%6 = load i32 %0[%5]
%7 = const i32 0
%8 = const i32 0
%9 = neg i32 %6
%10 = const i32 0
%11 = add i32 %7, %8
%12 = add i32 %11, %10
%13 = add i32 %12, %6
store i32 %1[%5], %13
)");
}

TEST(SimplifyAlgebra, FloatRulesKeepSignedZerosAndNaN) {
  // x*1, x/1, x + -0 and x/4 -> x*0.25 are exact; x + 0, x*0 and x - x are not
  // (-0 + 0 = +0, inf*0 = NaN, inf - inf = NaN) and stay.
  EXPECT_EQ(after_pass("simplify_algebra", R"(
%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = const f32 1
%4 = const f32 -0
%5 = const f32 0
%6 = const f32 4
%7 = index group 0 %2
%8 = load f32 %0[%7]
%9 = mul f32 %8, %3
%10 = div f32 %9, %3
%11 = add f32 %10, %4
%12 = add f32 %11, %5
%13 = mul f32 %12, %5
%14 = sub f32 %13, %13
%15 = div f32 %14, %6
store f32 %1[%7], %15
)"),
            R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = const f32 1
%4 = const f32 -0
%5 = const f32 0
%6 = const f32 4
%7 = index group 0 %2
%8 = load f32 %0[%7]
%9 = add f32 %8, %5
%10 = mul f32 %9, %5
%11 = sub f32 %10, %10
%12 = const f32 0.25
%13 = mul f32 %11, %12
store f32 %1[%7], %13
)");
}

TEST(SimplifyAlgebra, SplitsDivisionOfAffineIndices) {
  // i = g*16 + l with 0 <= l < 16: i / 16 = g and i % 16 = l.
  EXPECT_EQ(after_pass("simplify_algebra", R"(
%0 = param 0 global_mut i64[128]
%1 = const i64 8
%2 = const i64 16
%3 = index group 0 %1
%4 = index group 1 %2
%5 = mul i64 %3, %2
%6 = add i64 %5, %4
%7 = div i64 %6, %2
%8 = mod i64 %6, %2
%9 = mul i64 %7, %2
%10 = add i64 %9, %8
store i64 %0[%6], %10
)"),
            R"(%0 = param 0 global_mut i64[128]
%1 = const i64 8
%2 = const i64 16
%3 = index group 0 %1
%4 = index group 1 %2
%5 = mul i64 %3, %2
%6 = add i64 %5, %4
%7 = mul i64 %3, %2
%8 = add i64 %7, %4
store i64 %0[%6], %8
)");
}

TEST(SimplifyAlgebra, SplitsAroundAWideRemainder) {
  // (g*8 + l) / 4 with l < 32: g*2 + l/4; (g*8 + l) % 4 -> l % 4 -> l & 3.
  EXPECT_EQ(after_pass("simplify_algebra", R"(
%0 = param 0 global_mut i64[1024]
%1 = const i64 8
%2 = const i64 32
%3 = const i64 4
%4 = index group 0 %1
%5 = index group 1 %2
%6 = mul i64 %4, %1
%7 = add i64 %6, %5
%8 = div i64 %7, %3
%9 = mod i64 %5, %3
%10 = mul i64 %8, %2
%11 = add i64 %10, %9
store i64 %0[%11], %7
)"),
            R"(%0 = param 0 global_mut i64[1024]
%1 = const i64 8
%2 = const i64 32
%3 = const i64 4
%4 = index group 0 %1
%5 = index group 1 %2
%6 = mul i64 %4, %1
%7 = add i64 %6, %5
%8 = const i64 2
%9 = mul i64 %4, %8
%10 = const i64 4
%11 = div i64 %5, %10
%12 = add i64 %9, %11
%13 = const i64 3
%14 = bitand i64 %5, %13
%15 = mul i64 %12, %2
%16 = add i64 %15, %14
store i64 %0[%16], %7
)");
}

TEST(SimplifyAlgebra, LeavesDivisionOfPossiblyNegativeValues) {
  // A loaded value may be negative: truncation differs from a shift.
  constexpr std::string_view kSigned = R"(%0 = param 0 global i64[4]
%1 = param 1 global_mut i64[4]
%2 = const i64 4
%3 = index group 0 %2
%4 = load i64 %0[%3]
%5 = div i64 %4, %2
%6 = mod i64 %4, %2
%7 = add i64 %5, %6
store i64 %1[%3], %7
)";
  EXPECT_EQ(after_pass("simplify_algebra", kSigned), kSigned);
}

TEST(SimplifyAlgebra, DecidesComparisonsByRange) {
  EXPECT_EQ(after_pass("simplify_algebra", R"(
%0 = param 0 global_mut f32[8]
%1 = const i64 8
%2 = const i64 100
%3 = index group 0 %1
%4 = cmplt bool %3, %2
if %4
  %6 = cast f32 %3
  store f32 %0[%3], %6
endif
)"),
            R"(%0 = param 0 global_mut f32[8]
%1 = const i64 8
%2 = const i64 100
%3 = index group 0 %1
%4 = const bool true
if %4
  %6 = cast f32 %3
  store f32 %0[%3], %6
endif
)");
}

TEST(SimplifyAlgebra, ReassociatesIntegerConstants) {
  EXPECT_EQ(after_pass("simplify_algebra", R"(
%0 = param 0 global_mut i64[64]
%1 = const i64 2
%2 = const i64 3
%3 = const i64 4
%4 = index group 0 %3
%5 = add i64 %4, %1
%6 = add i64 %5, %2
%7 = mul i64 %6, %1
%8 = mul i64 %7, %3
%9 = sub i64 %8, %2
store i64 %0[%9], %4
)"),
            R"(%0 = param 0 global_mut i64[64]
%1 = const i64 2
%2 = const i64 3
%3 = const i64 4
%4 = index group 0 %3
%5 = add i64 %4, %1
%6 = const i64 5
%7 = add i64 %4, %6
%8 = mul i64 %7, %1
%9 = const i64 8
%10 = mul i64 %7, %9
%11 = const i64 -3
%12 = add i64 %10, %11
store i64 %0[%12], %4
)");
}
