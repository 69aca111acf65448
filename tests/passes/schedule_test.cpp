// schedule: params by slot, then constants by (dtype, bits), then the rest
// in its order; memory ops and barriers never move relative to each other.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(Schedule, ParamsThenConstantsThenTheRestInOrder) {
  EXPECT_EQ(after_pass("schedule", R"(
%c8 = const i64 8
%out = param 1 global_mut f32[8]
%two = const f32 2
%in = param 0 global f32[8]
%i = index group 0 %c8
%x = load f32 %in[%i]
%y = mul f32 %x, %two
%c0 = const i64 0
store f32 %out[%i], %y
%z = load f32 %out[%c0]
store f32 %out[%i], %z
)"),
            R"(%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[8]
%2 = const f32 2
%3 = const i64 0
%4 = const i64 8
%5 = index group 0 %4
%6 = load f32 %0[%5]
%7 = mul f32 %6, %2
store f32 %1[%5], %7
%9 = load f32 %1[%3]
store f32 %1[%5], %9
)");
}
