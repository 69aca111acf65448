// unfold_pows: pow by 0, 1, 2, 3, 4 and -1 becomes multiplications.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(UnfoldPows, SmallIntegerExponentsBecomeProducts) {
  EXPECT_EQ(after_pass("unfold_pows", R"(
%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = const f32 2
%6 = pow f32 %4, %5
%7 = const f32 3
%8 = pow f32 %4, %7
%9 = const f32 -1
%10 = pow f32 %4, %9
%11 = const f32 0.5
%12 = pow f32 %4, %11
%13 = add f32 %6, %8
%14 = add f32 %13, %10
%15 = add f32 %14, %12
store f32 %1[%3], %15
)", kiln::passes::cpu_preset(), {}, 1e-6),
            R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = const f32 2
%6 = mul f32 %4, %4
%7 = const f32 3
%8 = mul f32 %4, %4
%9 = mul f32 %8, %4
%10 = const f32 -1
%11 = recip f32 %4
%12 = const f32 0.5
%13 = pow f32 %4, %12
%14 = add f32 %6, %9
%15 = add f32 %14, %11
%16 = add f32 %15, %13
store f32 %1[%3], %16
)");
}

TEST(UnfoldPows, ZeroAndOneExponentsOnVectors) {
  EXPECT_EQ(after_pass("unfold_pows", R"(
%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 0
%3 = load f32x4 %0[%2]
%4 = const f32 0
%5 = broadcast f32x4 %4
%6 = pow f32x4 %3, %5
%7 = const f32 1
%8 = broadcast f32x4 %7
%9 = pow f32x4 %3, %8
%10 = add f32x4 %6, %9
store f32x4 %1[%2], %10
)"),
            R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 0
%3 = load f32x4 %0[%2]
%4 = const f32 0
%5 = broadcast f32x4 %4
%6 = const f32 1
%7 = broadcast f32x4 %6
%8 = const f32 1
%9 = broadcast f32x4 %8
%10 = add f32x4 %7, %3
store f32x4 %1[%2], %10
)");
}
