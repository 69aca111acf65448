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

TEST(FoldAccumulators, KeepsWhatAWarpGroupMmaWrites) {
  // One WGMMA step with no loop (a one-step kernel's, removed): the
  // accumulator's zeros are not forwarded past the MMA to the load after its
  // wait, and the zeros' store is not dropped (the MMA reads it).
  constexpr std::string_view kOneStep = R"(%0 = param 0 global f32[8192]
%1 = param 1 global_mut f32[512]
%2 = const i64 0
%3 = const i64 128
%4 = index local 0 %3
%5 = storage local f32[8192]
%6 = storage register f32[4]
%7 = const f32 0
%8 = broadcast f32x4 %7
%30 = const i64 16
%31 = const i64 64
%32 = mul i64 %4, %31
%33 = loop %30
  %34 = const i64 4
  %35 = mul i64 %33, %34
  %36 = add i64 %32, %35
  %37 = load f32x4 %0[%36]
  store f32x4 %5[%36], %37
endloop %33
store f32x4 %6[%2], %8
barrier
wgmma_fence
%14 = const i64 4096
%15 = broadcast i64x2 %2
%16 = insert i64x2 %15[1], %14
wgmma n8 f32 %5[%16], %6
wgmma_commit
wgmma_wait 0
%20 = load f32x4 %6[%2]
%21 = const i64 4
%22 = mul i64 %4, %21
store f32x4 %1[%22], %20
)";
  const std::string after = after_pass("fold_accumulators", kOneStep);
  EXPECT_NE(after.find("store f32x4 %6[%2], %8"), std::string::npos) << after;
  EXPECT_NE(after.find("= load f32x4 %6[%2]"), std::string::npos) << after;
  EXPECT_EQ(after.find("store f32x4 %1[%22], %8"), std::string::npos) << after;
}
