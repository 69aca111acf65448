// fold_constants: ops over constants become constants (with the value the
// interpreter computes), constant selects and ifs collapse; integer
// division by zero is left to the kernel.
#include "passes/pass_test_support.hpp"

using kiln::passes::test::after_pass;

TEST(FoldConstants, FoldsIntegerAndFloatArithmetic) {
  EXPECT_EQ(after_pass("fold_constants", R"(
%0 = param 0 global_mut f32[12]
%1 = const i64 3
%2 = const i64 4
%3 = mul i64 %1, %2
%4 = index group 0 %3
%5 = const f32 0.5
%6 = exp f32 %5
%7 = cast f32 %3
%8 = add f32 %6, %7
store f32 %0[%4], %8
)"),
            R"(%0 = param 0 global_mut f32[12]
%1 = const i64 3
%2 = const i64 4
%3 = const i64 12
%4 = index group 0 %3
%5 = const f32 0.5
%6 = const f32 1.6487212
%7 = const f32 12
%8 = const f32 13.648722
store f32 %0[%4], %8
)");
}

TEST(FoldConstants, FoldsHalfPrecisionAsTheInterpreterRounds) {
  // f16 arithmetic is f32 rounded to nearest even after each op: 0.1 + 0.2
  // in f16 is 0.2998..., not 0.3.
  EXPECT_EQ(after_pass("fold_constants", R"(
%0 = param 0 global_mut f16[1]
%1 = const f16 0.1
%2 = const f16 0.2
%3 = add f16 %1, %2
%4 = const i64 0
store f16 %0[%4], %3
)"),
            R"(%0 = param 0 global_mut f16[1]
%1 = const f16 0.1
%2 = const f16 0.2
%3 = const f16 0.2998
%4 = const i64 0
store f16 %0[%4], %3
)");
}

TEST(FoldConstants, WrapsNarrowIntegers) {
  EXPECT_EQ(after_pass("fold_constants", R"(
%0 = param 0 global_mut i8[1]
%1 = const i8 100
%2 = add i8 %1, %1
%3 = const i64 0
store i8 %0[%3], %2
)"),
            R"(%0 = param 0 global_mut i8[1]
%1 = const i8 100
%2 = const i8 -56
%3 = const i64 0
store i8 %0[%3], %2
)");
}

TEST(FoldConstants, KeepsDivisionByZero) {
  // Left to the kernel (constant_int does not evaluate it); every backend
  // computes x / 0 = 0 there (kernel_ir.h).
  const kiln::ir::Kernel in = kiln::passes::test::parse_valid(R"(
%0 = param 0 global_mut i32[1]
%1 = const i32 7
%2 = const i32 0
%3 = div i32 %1, %2
%4 = const i64 0
store i32 %0[%4], %3
)");
  const kiln::ir::Kernel out = kiln::passes::find_pass("fold_constants")->run(in, kiln::passes::cpu_preset());
  EXPECT_EQ(kiln::ir::print(out), kiln::ir::print(in));
}

TEST(FoldConstants, PicksTheConstantSelectOperand) {
  EXPECT_EQ(after_pass("fold_constants", R"(
%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 0
%3 = load f32x4 %0[%2]
%4 = const f32 1
%5 = broadcast f32x4 %4
%6 = const bool false
%7 = select f32x4 %6, %3, %5
store f32x4 %1[%2], %7
)"),
            R"(%0 = param 0 global f32[4]
%1 = param 1 global_mut f32[4]
%2 = const i64 0
%3 = load f32x4 %0[%2]
%4 = const f32 1
%5 = broadcast f32x4 %4
%6 = const bool false
store f32x4 %1[%2], %5
)");
}

TEST(FoldConstants, InlinesTrueIfsAndDropsFalseOnes) {
  EXPECT_EQ(after_pass("fold_constants", R"(
%0 = param 0 global_mut i32[2]
%1 = const i64 0
%2 = const i64 1
%3 = const i32 5
%4 = cmplt bool %1, %2
if %4
  store i32 %0[%1], %3
endif
%7 = cmpgt bool %1, %2
if %7
  %9 = const i32 6
  store i32 %0[%1], %9
endif
store i32 %0[%2], %3
)"),
            R"(%0 = param 0 global_mut i32[2]
%1 = const i64 0
%2 = const i64 1
%3 = const i32 5
%4 = const bool true
store i32 %0[%1], %3
%6 = const bool false
store i32 %0[%2], %3
)");
}
