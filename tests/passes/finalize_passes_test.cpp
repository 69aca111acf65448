// The finalize passes: fused multiply-add, and exp/ln in the device's base.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(FuseMultiplyAdd, FusesSingleUseProductsInTheSameBlock) {
  EXPECT_EQ(after_pass("fuse_mad", R"(
%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = mul f32 %4, %4
%6 = add f32 %5, %4
%7 = mul f32 %4, %6
%8 = loop %2
  %9 = add f32 %4, %7
  store f32 %1[%3], %9
endloop %8
%12 = mul f32 %6, %6
%13 = add f32 %12, %12
store f32 %1[%3], %13
)"),
            R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = mul f32 %4, %4
%6 = mad f32 %4, %4, %4
%7 = mul f32 %4, %6
%8 = loop %2
  %9 = add f32 %4, %7
  store f32 %1[%3], %9
endloop %8
%12 = mul f32 %6, %6
%13 = add f32 %12, %12
store f32 %1[%3], %13
)");
}

namespace {

constexpr std::string_view kExpLn = R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = exp f32 %4
%6 = exp2 f32 %4
%7 = add f32 %5, %6
%8 = abs f32 %7
%9 = ln f32 %8
store f32 %1[%3], %9
)";

}  // namespace

TEST(ExpBase, UsesExp2OnDevicesWithANativeOne) {
  EXPECT_EQ(after_pass("exp_base", kExpLn, kiln::passes::gpu_preset(), {}, 1e-6), R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = const f32 1.442695
%6 = mul f32 %4, %5
%7 = exp2 f32 %6
%8 = exp2 f32 %4
%9 = add f32 %7, %8
%10 = abs f32 %9
%11 = log2 f32 %10
%12 = const f32 0.6931472
%13 = mul f32 %11, %12
store f32 %1[%3], %13
)");
}

TEST(ExpBase, UsesExpElsewhere) {
  EXPECT_EQ(after_pass("exp_base", kExpLn, kiln::passes::cpu_preset(), {}, 1e-6), R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = exp f32 %4
%6 = const f32 0.6931472
%7 = mul f32 %4, %6
%8 = exp f32 %7
%9 = add f32 %5, %8
%10 = abs f32 %9
%11 = ln f32 %10
store f32 %1[%3], %11
)");
}

TEST(FuseMultiplyAdd, LeavesIntegerIndexArithmetic) {
  constexpr std::string_view kIndex = R"(%0 = param 0 global_mut i64[64]
%1 = const i64 8
%2 = index group 0 %1
%3 = index group 1 %1
%4 = mul i64 %2, %1
%5 = add i64 %4, %3
store i64 %0[%5], %4
)";
  EXPECT_EQ(after_pass("fuse_mad", kIndex), kIndex);
}
