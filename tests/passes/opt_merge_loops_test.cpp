// merge_loops: a perfect nest of two constant LOOPs becomes one LOOP.
#include "passes/structural_test_support.hpp"

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

// y[g] = sum of the 3 x 4 block x[g*12 ..], rows in an outer loop.
constexpr std::string_view kBlockSum = R"(
%0 = param 0 global f32[24]
%1 = param 1 global_mut f32[2]
%2 = const i64 2
%3 = index group 0 %2
%4 = const i64 12
%5 = mul i64 %3, %4
%6 = const f32 0
%7 = storage register f32[1]
%8 = const i64 0
store f32 %7[%8], %6
%10 = const i64 3
%11 = loop %10
  %12 = const i64 4
  %13 = mul i64 %11, %12
  %14 = loop %12
    %15 = add i64 %5, %13
    %16 = add i64 %15, %14
    %17 = load f32 %0[%16]
    %18 = load f32 %7[%8]
    %19 = add f32 %18, %17
    store f32 %7[%8], %19
  endloop %14
endloop %11
%23 = load f32 %7[%8]
store f32 %1[%3], %23
)";

}  // namespace

TEST(MergeLoops, OneLoopOfTheProductWithDivModCounters) {
  EXPECT_EQ(after_step("merge_loops(loop=0)", kBlockSum), R"(%0 = param 0 global f32[24]
%1 = param 1 global_mut f32[2]
%2 = const i64 2
%3 = index group 0 %2
%4 = const i64 12
%5 = mul i64 %3, %4
%6 = const f32 0
%7 = storage register f32[1]
%8 = const i64 0
store f32 %7[%8], %6
%10 = const i64 3
%11 = const i64 12
%12 = loop %11
  %13 = const i64 4
  %14 = div i64 %12, %13
  %15 = mod i64 %12, %13
  %16 = const i64 4
  %17 = mul i64 %14, %16
  %18 = add i64 %5, %17
  %19 = add i64 %18, %15
  %20 = load f32 %0[%19]
  %21 = load f32 %7[%8]
  %22 = add f32 %21, %20
  store f32 %7[%8], %22
endloop %12
%25 = load f32 %7[%8]
store f32 %1[%3], %25
)");
}

TEST(MergeLoops, ConfigsListOnlyPerfectConstantNests) {
  const ir::Kernel block_sum = parse_valid(kBlockSum);
  EXPECT_EQ(config_texts("merge_loops", block_sum, cpu_preset()), std::vector<std::string>{"merge_loops(loop=0)"});
  // The standard kernels have single loops; split, they nest.
  EXPECT_TRUE(config_texts("merge_loops", standard("matmul", {4, 4, 8}), cpu_preset()).empty());
  const ir::Kernel split = expect_applies(standard("matmul", {4, 4, 8}), "split_loop(loop=0,factor=2)", cpu_preset());
  EXPECT_EQ(config_texts("merge_loops", split, cpu_preset()), std::vector<std::string>{"merge_loops(loop=0)"});
  EXPECT_TRUE(config_texts("merge_loops", parse_valid(kDynamicRowSum), cpu_preset()).empty());
}

TEST(MergeLoops, RefusesNestsThatAreNotPerfectOrNotConstant) {
  EXPECT_NE(refusal(kBlockSum, "merge_loops(loop=1)").find("perfect nest"), std::string::npos);
  EXPECT_NE(refusal(kBlockSum, "merge_loops(loop=2)").find("no LOOP number 2"), std::string::npos);
  // A load between the loops (not pure): refused.
  constexpr std::string_view kLoadBetween = R"(
%x = param 0 global f32[6]
%y = param 1 global_mut f32[6]
%two = const i64 2
%three = const i64 3
%i = loop %two
  %v = load f32 %x[%i]
  %j = loop %three
    %r = mul i64 %i, %three
    %k = add i64 %r, %j
    store f32 %y[%k], %v
  endloop %j
endloop %i
)";
  EXPECT_NE(refusal(kLoadBetween, "merge_loops(loop=0)").find("perfect nest"), std::string::npos);
  // A dynamic inner count.
  constexpr std::string_view kDynamicInner = R"(
%x = param 0 global f32[6]
%y = param 1 global_mut f32[6]
%n = param 2 var i64
%two = const i64 2
%i = loop %two
  %j = loop %n
    %v = load f32 %x[%j]
    store f32 %y[%i], %v
  endloop %j
endloop %i
)";
  EXPECT_NE(refusal(kDynamicInner, "merge_loops(loop=0)").find("constants"), std::string::npos);
  EXPECT_TRUE(config_texts("merge_loops", parse_valid(kDynamicInner), cpu_preset()).empty());
}

TEST(MergeLoops, SplitThenMergedKernelsKeepTheResults) {
  for (const ir::Kernel& kernel : odd_standard_kernels())
    for (const std::string& split : config_texts("split_loop", kernel, cpu_preset())) {
      const ir::Kernel nested = expect_applies(kernel, split, cpu_preset());
      for (const std::string& config : config_texts("merge_loops", nested, cpu_preset())) {
        SCOPED_TRACE(split + "; " + config + "\n" + ir::print(kernel));
        expect_applies(nested, config, cpu_preset());
      }
    }
}
