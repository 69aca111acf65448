// constants_to_top: every constant once, at the start, out of every loop.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(ConstantsToTop, HoistsAndMergesConstants) {
  EXPECT_EQ(after_pass("constants_to_top", R"(
%0 = param 0 global_mut f32[4]
%1 = const i64 4
%2 = loop %1
  %3 = const f32 2
  %4 = cast f32 %2
  %5 = mul f32 %4, %3
  %6 = const f32 2
  %7 = add f32 %5, %6
  store f32 %0[%2], %7
endloop %2
)"),
            R"(%0 = const i64 4
%1 = const f32 2
%2 = param 0 global_mut f32[4]
%3 = loop %0
  %4 = cast f32 %3
  %5 = mul f32 %4, %1
  %6 = add f32 %5, %1
  store f32 %2[%3], %6
endloop %3
)");
}

TEST(ConstantsToTop, KeepsEqualBitsOfDifferentTypesApart) {
  // f32 1 and i32 1065353216 share their bits; -0 and +0 differ in them.
  EXPECT_EQ(after_pass("constants_to_top", R"(
%0 = param 0 global_mut f32[1]
%1 = param 1 global_mut i32[1]
%2 = const i64 0
%3 = const f32 1
%4 = const i32 1065353216
%5 = const f32 -0
%6 = const f32 0
%7 = add f32 %3, %5
%8 = add f32 %7, %6
store f32 %0[%2], %8
store i32 %1[%2], %4
)"),
            R"(%0 = const i64 0
%1 = const f32 1
%2 = const i32 1065353216
%3 = const f32 -0
%4 = const f32 0
%5 = param 0 global_mut f32[1]
%6 = param 1 global_mut i32[1]
%7 = add f32 %1, %3
%8 = add f32 %7, %4
store f32 %5[%0], %8
store i32 %6[%0], %2
)");
}
