// licm: invariant arithmetic leaves loops (to the outermost loop it is
// invariant in); loads only when that is safe.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(Licm, HoistsInvariantArithmeticOutOfNestedLoops) {
  EXPECT_EQ(after_pass("licm", R"(
%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[16]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = loop %2
  %6 = loop %2
    %7 = exp f32 %4
    %8 = mul i64 %5, %2
    %9 = add i64 %8, %6
    %10 = cast f32 %9
    %11 = add f32 %7, %10
    store f32 %1[%9], %11
  endloop %6
endloop %5
)"),
            R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[16]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = exp f32 %4
%6 = loop %2
  %7 = mul i64 %6, %2
  %8 = loop %2
    %9 = add i64 %7, %8
    %10 = cast f32 %9
    %11 = add f32 %5, %10
    store f32 %1[%9], %11
  endloop %8
endloop %6
)");
}

TEST(Licm, HoistsLoadsOfUnwrittenMemoryFromLoopsThatRun) {
  EXPECT_EQ(after_pass("licm", R"(
%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[16]
%2 = const i64 4
%3 = index group 0 %2
%4 = loop %2
  %5 = load f32 %0[%3]
  %6 = mul i64 %3, %2
  %7 = add i64 %6, %4
  store f32 %1[%7], %5
endloop %4
)"),
            R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[16]
%2 = const i64 4
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = mul i64 %3, %2
%6 = loop %2
  %7 = add i64 %5, %6
  store f32 %1[%7], %4
endloop %6
)");
}

TEST(Licm, KeepsLoadsThatMightNotRunOrSeeStores) {
  // n may be 0 (the load could be out of range when the loop would not
  // run); the register is written in the loop; the division might fault.
  constexpr std::string_view kUnsafe = R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = param 2 var i64
%3 = param 3 var i64
%4 = const i64 0
%5 = const i64 4
%6 = index group 0 %5
%7 = storage register f32[1]
%8 = const f32 0
store f32 %7[%4], %8
%10 = loop %2
  %11 = load f32 %0[%6]
  %12 = load f32 %7[%4]
  %13 = add f32 %12, %11
  store f32 %7[%4], %13
  %15 = div i64 %6, %3
  %16 = cast f32 %15
  store f32 %1[%6], %16
endloop %10
%19 = load f32 %7[%4]
store f32 %1[%6], %19
)";
  const double scalars[] = {3, 2};
  EXPECT_EQ(after_pass("licm", kUnsafe, kiln::passes::cpu_preset(), scalars), kUnsafe);
}

TEST(Licm, KeepsLocalLoadsInLoopsWithBarriers) {
  constexpr std::string_view kBarrierLoop = R"(%0 = param 0 global_mut f32[4]
%1 = const i64 4
%2 = const i64 3
%3 = index local 0 %1
%4 = storage local f32[4]
%5 = cast f32 %3
store f32 %4[%3], %5
%7 = loop %1
  barrier
  %9 = sub i64 %2, %3
  %10 = load f32 %4[%9]
  store f32 %0[%3], %10
endloop %7
)";
  EXPECT_EQ(after_pass("licm", kBarrierLoop, kiln::passes::gpu_preset()), R"(%0 = param 0 global_mut f32[4]
%1 = const i64 4
%2 = const i64 3
%3 = index local 0 %1
%4 = storage local f32[4]
%5 = cast f32 %3
store f32 %4[%3], %5
%7 = sub i64 %2, %3
%8 = loop %1
  barrier
  %10 = load f32 %4[%7]
  store f32 %0[%3], %10
endloop %8
)");
}

TEST(Licm, KeepsLoadsOfMutableBuffersWhenTheLoopStoresToAnother) {
  // %0 and %1 may be one buffer.
  constexpr std::string_view kMaybeAliased = R"(%0 = param 0 global_mut f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 0
%3 = const i64 4
%4 = loop %3
  %5 = load f32 %0[%2]
  store f32 %1[%4], %5
endloop %4
)";
  EXPECT_EQ(after_pass("licm", kMaybeAliased), kMaybeAliased);
}
