// split_loop: one constant LOOP becomes two nested LOOPs.
#include "passes/structural_test_support.hpp"

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

// y[g] = sum of x[g*12 .. g*12+11]
constexpr std::string_view kRowSum = R"(
%0 = param 0 global f32[24]
%1 = param 1 global_mut f32[2]
%2 = const i64 2
%3 = const i64 12
%4 = index group 0 %2
%5 = mul i64 %4, %3
%6 = const f32 0
%7 = storage register f32[1]
%8 = const i64 0
store f32 %7[%8], %6
%10 = loop %3
  %11 = add i64 %5, %10
  %12 = load f32 %0[%11]
  %13 = load f32 %7[%8]
  %14 = add f32 %13, %12
  store f32 %7[%8], %14
endloop %10
%17 = load f32 %7[%8]
store f32 %1[%4], %17
)";

}  // namespace

TEST(SplitLoop, CounterBecomesOuterTimesFactorPlusInner) {
  EXPECT_EQ(after_step("split_loop(loop=0,factor=4)", kRowSum), R"(%0 = param 0 global f32[24]
%1 = param 1 global_mut f32[2]
%2 = const i64 2
%3 = const i64 12
%4 = index group 0 %2
%5 = mul i64 %4, %3
%6 = const f32 0
%7 = storage register f32[1]
%8 = const i64 0
store f32 %7[%8], %6
%10 = const i64 3
%11 = loop %10
  %12 = const i64 4
  %13 = loop %12
    %14 = const i64 4
    %15 = mul i64 %11, %14
    %16 = add i64 %15, %13
    %17 = add i64 %5, %16
    %18 = load f32 %0[%17]
    %19 = load f32 %7[%8]
    %20 = add f32 %19, %18
    store f32 %7[%8], %20
  endloop %13
endloop %11
%24 = load f32 %7[%8]
store f32 %1[%4], %24
)");
}

TEST(SplitLoop, ConfigsListFactorsDividingConstantCounts) {
  const ir::Kernel row_sum = parse_valid(kRowSum);
  EXPECT_EQ(config_texts("split_loop", row_sum, cpu_preset()),
            (std::vector<std::string>{"split_loop(loop=0,factor=4)", "split_loop(loop=0,factor=2)"}));
  // softmax: three loops over 16 columns.
  EXPECT_EQ(config_texts("split_loop", standard("softmax-rows", {2, 16, 1}), gpu_preset()).size(), 9u);
  // A dynamic count is never split.
  EXPECT_TRUE(config_texts("split_loop", parse_valid(kDynamicRowSum), gpu_preset()).empty());
}

TEST(SplitLoop, RefusesStepsThatDoNotFit) {
  const ir::Kernel row_sum = parse_valid(kRowSum);
  EXPECT_NE(refusal(row_sum, "split_loop(loop=0,factor=5)").find("not a multiple of 5 (tail=1"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "split_loop(loop=0,factor=7,tail=1)").find("factor must be in 2..6"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "split_loop(loop=0,factor=5,tail=2)").find("tail must be 0 or 1"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "split_loop(loop=0,factor=4,size=2)").find("unknown parameter 'size'"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "split_loop(loop=0,factor=12)").find("factor must be in 2..6"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "split_loop(loop=1,factor=2)").find("no LOOP number 1"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "split_loop(loop=-1,factor=2)").find("no LOOP number -1"), std::string::npos);
  EXPECT_NE(refusal(kDynamicRowSum, "split_loop(loop=0,factor=2)").find("not a constant"), std::string::npos);
}

// tail=1 and a count the factor does not divide (rows of odd length on a
// CPU, whose vector accesses take any index): the blocks, then the last
// n % factor iterations as a LOOP of their own, in order.
TEST(SplitLoop, ACountTheFactorDoesNotDivideEndsInATailLoop) {
  const std::string out = after_step("split_loop(loop=0,factor=5,tail=1)", kRowSum);
  EXPECT_NE(out.find(R"(%10 = const i64 2
%11 = loop %10
  %12 = const i64 5
  %13 = loop %12
)"), std::string::npos) << out;
  EXPECT_NE(out.find(R"(endloop %13
endloop %11
%24 = const i64 2
%25 = loop %24
  %26 = const i64 10
  %27 = add i64 %26, %25
  %28 = add i64 %5, %27
  %29 = load f32 %0[%28]
)"), std::string::npos) << out;
  expect_applies(parse_valid(kRowSum), "split_loop(loop=0,factor=5,tail=1)", cpu_preset());
  for (const ir::Kernel& kernel : odd_standard_kernels())
    for (const char* step : {"split_loop(loop=0,factor=3,tail=1)", "split_loop(loop=1,factor=4,tail=1)"}) {
      SCOPED_TRACE(step + std::string("\n") + ir::print(kernel));
      if (passes::optimize(kernel, passes::parse_sequence(step).value(), gpu_preset()).ok()) expect_applies(kernel, step, gpu_preset());
    }
}

TEST(SplitLoop, EveryConfigKeepsTheResults) {
  for (const ir::Kernel& kernel : odd_standard_kernels())
    for (const std::string& config : config_texts("split_loop", kernel, gpu_preset())) {
      SCOPED_TRACE(config + "\n" + ir::print(kernel));
      expect_applies(kernel, config, gpu_preset());
    }
}
