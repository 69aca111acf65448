// fold_accumulators: a register load right after a store to the same
// element is the stored value; loop/if boundaries and unknown indices stop it.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(FoldAccumulators, ForwardsStoredValuesInStraightLineCode) {
  // An unrolled two-term sum: the accumulator is forwarded through.
  EXPECT_EQ(after_pass("fold_accumulators", R"(
%0 = param 0 global f32[2]
%1 = param 1 global_mut f32[1]
%2 = const i64 0
%3 = const i64 1
%4 = storage register f32[1]
%5 = const f32 0
store f32 %4[%2], %5
%7 = load f32 %4[%2]
%8 = load f32 %0[%2]
%9 = add f32 %7, %8
store f32 %4[%2], %9
%11 = load f32 %4[%2]
%12 = load f32 %0[%3]
%13 = add f32 %11, %12
store f32 %4[%2], %13
%15 = load f32 %4[%2]
store f32 %1[%2], %15
)"),
            R"(%0 = param 0 global f32[2]
%1 = param 1 global_mut f32[1]
%2 = const i64 0
%3 = const i64 1
%4 = storage register f32[1]
%5 = const f32 0
store f32 %4[%2], %5
%7 = load f32 %0[%2]
%8 = add f32 %5, %7
store f32 %4[%2], %8
%10 = load f32 %0[%3]
%11 = add f32 %8, %10
store f32 %4[%2], %11
store f32 %1[%2], %11
)");
}

TEST(FoldAccumulators, StopsAtLoopsAndUnknownIndices) {
  constexpr std::string_view kBlocked = R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 0
%3 = const i64 4
%4 = index group 0 %3
%5 = storage register f32[4]
%6 = const f32 0
store f32 %5[%2], %6
%8 = loop %3
  %9 = load f32 %5[%2]
  %10 = load f32 %0[%8]
  %11 = add f32 %9, %10
  store f32 %5[%2], %11
endloop %8
store f32 %5[%4], %6
%15 = load f32 %5[%2]
store f32 %1[%4], %15
)";
  EXPECT_EQ(after_pass("fold_accumulators", kBlocked), kBlocked);
}

TEST(FoldAccumulators, DropsStoresOverwrittenBeforeAnyRead) {
  EXPECT_EQ(after_pass("fold_accumulators", R"(
%0 = param 0 global f32[2]
%1 = param 1 global_mut f32[2]
%2 = const i64 0
%3 = const i64 1
%4 = storage register f32[2]
%5 = load f32 %0[%2]
%6 = load f32 %0[%3]
store f32 %4[%2], %5
store f32 %4[%3], %5
store f32 %4[%2], %6
%10 = load f32 %4[%2]
%11 = load f32 %4[%3]
%12 = add f32 %10, %11
store f32 %1[%2], %12
)"),
            R"(%0 = param 0 global f32[2]
%1 = param 1 global_mut f32[2]
%2 = const i64 0
%3 = const i64 1
%4 = storage register f32[2]
%5 = load f32 %0[%2]
%6 = load f32 %0[%3]
store f32 %4[%3], %5
store f32 %4[%2], %6
%9 = add f32 %6, %5
store f32 %1[%2], %9
)");
}
