// unroll: a constant LOOP unrolled by a factor (remainder after it) or fully.
#include "passes/structural_test_support.hpp"

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

std::size_t loop_count(const ir::Kernel& kernel) {
  std::size_t loops = 0;
  for (const ir::Op& op : kernel.ops) loops += op.kind == ir::OpKind::Loop ? 1 : 0;
  return loops;
}

// y[0] = sum of x[0..4] through a REGISTER accumulator.
constexpr std::string_view kSum5 = R"(
%0 = param 0 global f32[5]
%1 = param 1 global_mut f32[1]
%2 = const i64 5
%3 = const f32 0
%4 = storage register f32[1]
%5 = const i64 0
store f32 %4[%5], %3
%7 = loop %2
  %8 = load f32 %0[%7]
  %9 = load f32 %4[%5]
  %10 = add f32 %9, %8
  store f32 %4[%5], %10
endloop %7
%13 = load f32 %4[%5]
store f32 %1[%5], %13
)";

}  // namespace

TEST(Unroll, ByAFactorWithTheRemainderAfterTheLoop) {
  EXPECT_EQ(after_step("unroll(loop=0,factor=2)", kSum5), R"(%0 = param 0 global f32[5]
%1 = param 1 global_mut f32[1]
%2 = const i64 5
%3 = const f32 0
%4 = storage register f32[1]
%5 = const i64 0
store f32 %4[%5], %3
%7 = const i64 2
%8 = loop %7
  %9 = const i64 2
  %10 = mul i64 %8, %9
  %11 = load f32 %0[%10]
  %12 = load f32 %4[%5]
  %13 = add f32 %12, %11
  store f32 %4[%5], %13
  %15 = const i64 1
  %16 = add i64 %10, %15
  %17 = load f32 %0[%16]
  %18 = load f32 %4[%5]
  %19 = add f32 %18, %17
  store f32 %4[%5], %19
endloop %8
%22 = const i64 4
%23 = load f32 %0[%22]
%24 = load f32 %4[%5]
%25 = add f32 %24, %23
store f32 %4[%5], %25
%27 = load f32 %4[%5]
store f32 %1[%5], %27
)");
}

TEST(Unroll, FullyWithAConstantCounterPerCopy) {
  EXPECT_EQ(after_step("unroll(loop=0,factor=0)", kSum5), R"(%0 = param 0 global f32[5]
%1 = param 1 global_mut f32[1]
%2 = const i64 5
%3 = const f32 0
%4 = storage register f32[1]
%5 = const i64 0
store f32 %4[%5], %3
%7 = const i64 0
%8 = load f32 %0[%7]
%9 = load f32 %4[%5]
%10 = add f32 %9, %8
store f32 %4[%5], %10
%12 = const i64 1
%13 = load f32 %0[%12]
%14 = load f32 %4[%5]
%15 = add f32 %14, %13
store f32 %4[%5], %15
%17 = const i64 2
%18 = load f32 %0[%17]
%19 = load f32 %4[%5]
%20 = add f32 %19, %18
store f32 %4[%5], %20
%22 = const i64 3
%23 = load f32 %0[%22]
%24 = load f32 %4[%5]
%25 = add f32 %24, %23
store f32 %4[%5], %25
%27 = const i64 4
%28 = load f32 %0[%27]
%29 = load f32 %4[%5]
%30 = add f32 %29, %28
store f32 %4[%5], %30
%32 = load f32 %4[%5]
store f32 %1[%5], %32
)");
}

TEST(Unroll, NestedLoopsInTheBodyAreCopiedWhole) {
  // Unrolling matmul's k loop after splitting it: the copies hold loops.
  const ir::Kernel matmul = standard("matmul", {3, 5, 8});
  const ir::Kernel split = expect_applies(matmul, "split_loop(loop=0,factor=4)", gpu_preset());
  const ir::Kernel unrolled = expect_applies(split, "unroll(loop=0,factor=0)", gpu_preset());
  // Two copies of the inner loop remain, nothing else.
  EXPECT_EQ(loop_count(unrolled), 2u);
}

TEST(Unroll, ConfigsOfferFullForShortLoopsThenFactorsBelowTheCount) {
  EXPECT_EQ(config_texts("unroll", parse_valid(kSum5), cpu_preset()),
            (std::vector<std::string>{"unroll(loop=0,factor=0)", "unroll(loop=0,factor=4)", "unroll(loop=0,factor=2)"}));
  const std::vector<std::string> long_loop = config_texts("unroll", standard("sum-rows", {2, 100, 1}), cpu_preset());
  EXPECT_EQ(long_loop, (std::vector<std::string>{"unroll(loop=0,factor=4)", "unroll(loop=0,factor=8)",
                                                 "unroll(loop=0,factor=2)", "unroll(loop=0,factor=16)"}));
  EXPECT_TRUE(config_texts("unroll", parse_valid(kDynamicRowSum), cpu_preset()).empty());
}

TEST(Unroll, RefusesStepsThatDoNotFit) {
  const ir::Kernel sum5 = parse_valid(kSum5);
  EXPECT_NE(refusal(sum5, "unroll(loop=0,factor=5)").find("factor must be 0 (full) or in 2..4"), std::string::npos);
  EXPECT_NE(refusal(sum5, "unroll(loop=0,factor=1)").find("factor must be"), std::string::npos);
  EXPECT_NE(refusal(sum5, "unroll(loop=2,factor=2)").find("no LOOP number 2"), std::string::npos);
  EXPECT_NE(refusal(standard("sum-rows", {2, 65, 1}), "unroll(loop=0,factor=0)").find("counts up to 64"), std::string::npos);
  EXPECT_NE(refusal(kDynamicRowSum, "unroll(loop=0,factor=2)").find("not a constant"), std::string::npos);
  // 64 copies of 64 copies: the op budget stops it.
  const ir::Kernel nest = expect_applies(standard("sum-rows", {1, 4096, 1}), "split_loop(loop=0,factor=64)", cpu_preset());
  const ir::Kernel inner_unrolled = expect_applies(nest, "unroll(loop=1,factor=0)", cpu_preset());
  EXPECT_NE(refusal(inner_unrolled, "unroll(loop=0,factor=0)").find("would exceed"), std::string::npos);
}

TEST(Unroll, EveryConfigKeepsTheResults) {
  for (const ir::Kernel& kernel : odd_standard_kernels())
    for (const std::string& config : config_texts("unroll", kernel, cpu_preset())) {
      SCOPED_TRACE(config + "\n" + ir::print(kernel));
      expect_applies(kernel, config, cpu_preset());
    }
}
