// simplify_accumulating_loops: loops that fold an invariant into a register
// run in closed form.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(SimplifyAccumulatingLoops, IntegerSumBecomesAProduct) {
  EXPECT_EQ(after_pass("simplify_accumulating_loops", R"(
%0 = param 0 global i32[4]
%1 = param 1 global_mut i32[4]
%2 = const i64 0
%3 = const i64 4
%4 = const i64 7
%5 = index group 0 %3
%6 = load i32 %0[%5]
%7 = storage register i32[1]
store i32 %7[%2], %6
%9 = loop %4
  %10 = load i32 %7[%2]
  %11 = add i32 %10, %6
  store i32 %7[%2], %11
endloop %9
%14 = load i32 %7[%2]
store i32 %1[%5], %14
)"),
            R"(%0 = param 0 global i32[4]
%1 = param 1 global_mut i32[4]
%2 = const i64 0
%3 = const i64 4
%4 = const i64 7
%5 = index group 0 %3
%6 = load i32 %0[%5]
%7 = storage register i32[1]
store i32 %7[%2], %6
%9 = load i32 %7[%2]
%10 = cast i32 %4
%11 = mul i32 %6, %10
%12 = add i32 %9, %11
store i32 %7[%2], %12
%14 = load i32 %7[%2]
store i32 %1[%5], %14
)");
}

TEST(SimplifyAccumulatingLoops, IdempotentOpsRunOnceAndDynamicCountsAreGuarded) {
  const double scalars[] = {5};
  EXPECT_EQ(after_pass("simplify_accumulating_loops", R"(
%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = param 2 var i64
%3 = const i64 0
%4 = const i64 4
%5 = index group 0 %4
%6 = load f32 %0[%5]
%7 = storage register f32[1]
%8 = const f32 -inf
store f32 %7[%3], %8
%10 = loop %2
  %11 = load f32 %7[%3]
  %12 = max f32 %11, %6
  store f32 %7[%3], %12
endloop %10
%15 = load f32 %7[%3]
store f32 %1[%5], %15
)", kiln::passes::cpu_preset(), scalars),
            R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = param 2 var i64
%3 = const i64 0
%4 = const i64 4
%5 = index group 0 %4
%6 = load f32 %0[%5]
%7 = storage register f32[1]
%8 = const f32 -inf
store f32 %7[%3], %8
%10 = const i64 0
%11 = cmpgt bool %2, %10
if %11
  %13 = load f32 %7[%3]
  %14 = max f32 %13, %6
  store f32 %7[%3], %14
endif
%17 = load f32 %7[%3]
store f32 %1[%5], %17
)");
}

TEST(SimplifyAccumulatingLoops, LeavesFloatSums) {
  constexpr std::string_view kFloatSum = R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 0
%3 = const i64 4
%4 = index group 0 %3
%5 = load f32 %0[%4]
%6 = storage register f32[1]
store f32 %6[%2], %5
%8 = loop %3
  %9 = load f32 %6[%2]
  %10 = add f32 %9, %5
  store f32 %6[%2], %10
endloop %8
%13 = load f32 %6[%2]
store f32 %1[%4], %13
)";
  EXPECT_EQ(after_pass("simplify_accumulating_loops", kFloatSum), kFloatSum);
}
