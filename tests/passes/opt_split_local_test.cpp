// split_local: a grid axis becomes GROUP x LOCAL.
#include "passes/structural_test_support.hpp"

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

constexpr std::string_view kExp = R"(
%0 = param 0 global f32[64]
%1 = param 1 global_mut f32[64]
%2 = const i64 64
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = exp f32 %4
store f32 %1[%3], %5
)";

}  // namespace

TEST(SplitLocal, GroupIndexBecomesGroupTimesFactorPlusLocal) {
  EXPECT_EQ(after_step("split_local(axis=0,factor=16)", kExp), R"(%0 = param 0 global f32[64]
%1 = param 1 global_mut f32[64]
%2 = const i64 64
%3 = const i64 4
%4 = index group 0 %3
%5 = const i64 16
%6 = index local 0 %5
%7 = const i64 16
%8 = mul i64 %4, %7
%9 = add i64 %8, %6
%10 = load f32 %0[%9]
%11 = exp f32 %10
store f32 %1[%9], %11
)");
}

TEST(SplitLocal, ConfigsPreferWarpMultiplePowersOfTwoNear256) {
  const ir::Kernel add = standard("add", {1, 4096, 1});
  const std::vector<std::string> gpu = config_texts("split_local", add, gpu_preset());
  const std::vector<std::string> want = {
      "split_local(axis=0,factor=256)", "split_local(axis=0,factor=128)", "split_local(axis=0,factor=512)",
      "split_local(axis=0,factor=64)",  "split_local(axis=0,factor=1024)", "split_local(axis=0,factor=32)",
      "split_local(axis=0,factor=16)",  "split_local(axis=0,factor=8)"};
  EXPECT_EQ(gpu, want);
  // Warp 8, at most 256 threads per group.
  const std::vector<std::string> small = config_texts("split_local", add, small_preset());
  ASSERT_FALSE(small.empty());
  EXPECT_EQ(small.front(), "split_local(axis=0,factor=256)");
  for (const std::string& s : small) EXPECT_EQ(s.find("factor=512"), std::string::npos) << s;
  // One thread per group: nothing to split.
  EXPECT_TRUE(config_texts("split_local", add, cpu_preset()).empty());
}

TEST(SplitLocal, ConfigsRespectThreadsAlreadyUsedOnOtherAxes) {
  // 30 x 64 matmul (columns on axis 0, rows on axis 1): axis 0 split by 64
  // leaves 1024 / 64 = 16 threads for axis 1, so its factor 30 is out.
  const ir::Kernel split = expect_applies(standard("matmul", {30, 64, 3}), "split_local(axis=0,factor=64)", gpu_preset());
  const std::vector<std::string> configs = config_texts("split_local", split, gpu_preset());
  EXPECT_EQ(configs, (std::vector<std::string>{"split_local(axis=1,factor=2)", "split_local(axis=1,factor=15)",
                                               "split_local(axis=1,factor=10)", "split_local(axis=1,factor=6)",
                                               "split_local(axis=1,factor=5)", "split_local(axis=1,factor=3)"}));
}

TEST(SplitLocal, DynamicLengthsAreSkippedUnlessPadded) {
  const ir::Kernel dynamic = parse_valid(kDynamicRowSum);
  EXPECT_TRUE(config_texts("split_local", dynamic, gpu_preset()).empty());
  EXPECT_NE(refusal(dynamic, "split_local(axis=0,factor=4)").find("dynamic"), std::string::npos);
  // Padded to a multiple of 64, the length is known to divide by 64's divisors.
  const std::vector<double> sizes = {10, 9};  // 10 rows of 9
  const ir::Kernel padded = expect_applies(dynamic, "pad(axis=0,multiple=64)", gpu_preset(), sizes);
  const std::vector<std::string> configs = config_texts("split_local", padded, gpu_preset());
  ASSERT_FALSE(configs.empty());
  EXPECT_EQ(configs.front(), "split_local(axis=0,factor=64)");
  for (const std::string& config : configs) expect_applies(padded, config, gpu_preset(), sizes);
}

TEST(SplitLocal, RefusesStepsThatDoNotFit) {
  const ir::Kernel exp = parse_valid(kExp);
  EXPECT_NE(refusal(exp, "split_local(axis=0,factor=6)").find("not a multiple of 6"), std::string::npos);
  EXPECT_NE(refusal(exp, "split_local(axis=1,factor=2)").find("no GROUP index on axis 1"), std::string::npos);
  EXPECT_NE(refusal(exp, "split_local(axis=3,factor=2)").find("axis must be"), std::string::npos);
  EXPECT_NE(refusal(exp, "split_local(axis=0,factor=1)").find("at least 2"), std::string::npos);
  EXPECT_NE(refusal(exp, "split_local(axis=0)").find("missing parameter 'factor'"), std::string::npos);
  EXPECT_NE(refusal(exp, "split_local(axis=0,factor=2,fator=4)").find("unknown parameter 'fator'"), std::string::npos);
  EXPECT_NE(refusal(exp, "split_local(axis=0,factor=2)", cpu_preset()).find("at most 1 threads"), std::string::npos);
  const ir::Kernel once = expect_applies(exp, "split_local(axis=0,factor=2)", gpu_preset());
  EXPECT_NE(refusal(once, "split_local(axis=0,factor=2)").find("already has a LOCAL index"), std::string::npos);
  // 128 x 128 threads exceed 1024 per group.
  const ir::Kernel two_d = expect_applies(standard("transpose", {128, 128, 1}), "split_local(axis=0,factor=128)", gpu_preset());
  EXPECT_NE(refusal(two_d, "split_local(axis=1,factor=16)").find("at most 8 threads"), std::string::npos);
}

TEST(SplitLocal, RefusesKernelsWithLocalStorage) {
  // Work-groups merged into one would share %tile.
  constexpr std::string_view kWithLocal = R"(
%x = param 0 global f32[8]
%y = param 1 global_mut f32[8]
%n = const i64 8
%g = index group 0 %n
%one = const i64 1
%l = index local 1 %one
%tile = storage local f32[1]
%zero = const i64 0
%v = load f32 %x[%g]
store f32 %tile[%zero], %v
barrier
%w = load f32 %tile[%zero]
store f32 %y[%g], %w
)";
  EXPECT_NE(refusal(kWithLocal, "split_local(axis=0,factor=2)").find("LOCAL storage"), std::string::npos);
  EXPECT_TRUE(config_texts("split_local", parse_valid(kWithLocal), gpu_preset()).empty());
}

TEST(SplitLocal, RefusesWhenABarrierWouldBecomeThreadDependent) {
  // The padded body (with a barrier) is guarded by g < 5; split, g would vary per thread.
  constexpr std::string_view kBarrier = R"(
%x = param 0 global f32[5]
%y = param 1 global_mut f32[5]
%n = const i64 5
%g = index group 0 %n
%one = const i64 1
%l = index local 1 %one
%v = load f32 %x[%g]
barrier
store f32 %y[%g], %v
)";
  const ir::Kernel padded = expect_applies(parse_valid(kBarrier), "pad(axis=0,multiple=8)", gpu_preset());
  EXPECT_NE(refusal(padded, "split_local(axis=0,factor=8)").find("barrier"), std::string::npos);
}

TEST(SplitLocal, EveryConfigKeepsTheResults) {
  for (const DeviceInfo& device : presets())
    for (const ir::Kernel& kernel : odd_standard_kernels())
      for (const std::string& config : config_texts("split_local", kernel, device)) {
        SCOPED_TRACE(device.id + " " + config + "\n" + ir::print(kernel));
        expect_applies(kernel, config, device);
      }
}
