// dce: unused values, stores to storage nobody reads, empty loops and ifs,
// and barriers without LOCAL storage go; effects and the grid stay.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(Dce, DropsUnusedValuesButKeepsParamsAndIndices) {
  EXPECT_EQ(after_pass("dce", R"(
%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[8]
%2 = param 2 global f32[8]
%3 = const i64 8
%4 = index group 0 %3
%5 = const i64 2
%6 = index group 1 %5
%7 = load f32 %0[%4]
%8 = exp f32 %7
%9 = load f32 %2[%4]
store f32 %1[%4], %7
)"),
            R"(%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[8]
%2 = param 2 global f32[8]
%3 = const i64 8
%4 = index group 0 %3
%5 = const i64 2
%6 = index group 1 %5
%7 = load f32 %0[%4]
store f32 %1[%4], %7
)");
}

TEST(Dce, DropsStorageThatIsWrittenButNeverRead) {
  // The register accumulator feeds only itself: the whole loop is dead.
  EXPECT_EQ(after_pass("dce", R"(
%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[1]
%2 = const i64 0
%3 = const i64 8
%4 = storage register f32[1]
%5 = const f32 0
store f32 %4[%2], %5
%7 = loop %3
  %8 = load f32 %0[%7]
  %9 = load f32 %4[%2]
  %10 = add f32 %9, %8
  store f32 %4[%2], %10
endloop %7
store f32 %1[%2], %5
)"),
            R"(%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[1]
%2 = const i64 0
%3 = const f32 0
store f32 %1[%2], %3
)");
}

TEST(Dce, KeepsAccumulatorsThatAreRead) {
  constexpr std::string_view kSum = R"(%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[1]
%2 = const i64 0
%3 = const i64 8
%4 = storage register f32[1]
%5 = const f32 0
store f32 %4[%2], %5
%7 = loop %3
  %8 = load f32 %0[%7]
  %9 = load f32 %4[%2]
  %10 = add f32 %9, %8
  store f32 %4[%2], %10
endloop %7
%13 = load f32 %4[%2]
store f32 %1[%2], %13
)";
  EXPECT_EQ(after_pass("dce", kSum), kSum);
}

TEST(Dce, DropsEmptyBlocksAndBarriersWithoutLocalStorage) {
  EXPECT_EQ(after_pass("dce", R"(
%0 = param 0 global_mut f32[4]
%1 = const i64 4
%2 = index local 0 %1
%3 = const f32 1
%4 = loop %1
  %5 = add f32 %3, %3
  %6 = cmplt bool %4, %2
  if %6
  endif
endloop %4
barrier
store f32 %0[%2], %3
)"),
            R"(%0 = param 0 global_mut f32[4]
%1 = const i64 4
%2 = index local 0 %1
%3 = const f32 1
store f32 %0[%2], %3
)");
}

TEST(Dce, KeepsBarriersThatOrderLocalStorage) {
  constexpr std::string_view kExchange = R"(%0 = param 0 global_mut f32[4]
%1 = const i64 4
%2 = index local 0 %1
%3 = storage local f32[4]
%4 = cast f32 %2
store f32 %3[%2], %4
barrier
%7 = const i64 3
%8 = sub i64 %7, %2
%9 = load f32 %3[%8]
store f32 %0[%2], %9
)";
  EXPECT_EQ(after_pass("dce", kExchange), kExchange);
}
