// remove_unit_loops: a loop of count 1 runs its body once, in place.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(RemoveUnitLoops, InlinesTheBodyWithCounterZero) {
  EXPECT_EQ(after_pass("remove_unit_loops", R"(
%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 1
%3 = const i64 4
%4 = index group 0 %3
%5 = loop %2
  %6 = add i64 %4, %5
  %7 = load f32 %0[%6]
  store f32 %1[%6], %7
endloop %5
)"),
            R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 1
%3 = const i64 4
%4 = index group 0 %3
%5 = const i64 0
%6 = add i64 %4, %5
%7 = load f32 %0[%6]
store f32 %1[%6], %7
)");
}

TEST(RemoveUnitLoops, KeepsOtherLoops) {
  constexpr std::string_view kTwo = R"(%0 = param 0 global_mut f32[2]
%1 = const i64 2
%2 = const f32 3
%3 = loop %1
  store f32 %0[%3], %2
endloop %3
)";
  EXPECT_EQ(after_pass("remove_unit_loops", kTwo), kTwo);
}
