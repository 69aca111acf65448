// pad: a grid axis rounded up to a multiple, the body guarded.
#include "passes/structural_test_support.hpp"

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

constexpr std::string_view kNeg = R"(
%0 = param 0 global f32[10]
%1 = param 1 global_mut f32[10]
%2 = const i64 10
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = neg f32 %4
store f32 %1[%3], %5
)";

constexpr std::string_view kNegDynamic = R"(
%0 = param 0 global f32[100]
%1 = param 1 global_mut f32[100]
%2 = param 2 var i64
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = neg f32 %4
store f32 %1[%3], %5
)";

}  // namespace

TEST(Pad, ConstantLengthRoundsUpAndGuardsTheBody) {
  EXPECT_EQ(after_step("pad(axis=0,multiple=8)", kNeg), R"(%0 = param 0 global f32[10]
%1 = param 1 global_mut f32[10]
%2 = const i64 10
%3 = const i64 16
%4 = index group 0 %3
%5 = cmplt bool %4, %2
if %5
  %7 = load f32 %0[%4]
  %8 = neg f32 %7
  store f32 %1[%4], %8
endif
)");
}

TEST(Pad, DynamicLengthRoundsUpAtLaunch) {
  const std::vector<double> n = {37};
  EXPECT_EQ(after_step("pad(axis=0,multiple=32)", kNegDynamic, gpu_preset(), n), R"(%0 = param 0 global f32[100]
%1 = param 1 global_mut f32[100]
%2 = param 2 var i64
%3 = const i64 32
%4 = const i64 31
%5 = add i64 %2, %4
%6 = div i64 %5, %3
%7 = mul i64 %6, %3
%8 = index group 0 %7
%9 = cmplt bool %8, %2
if %9
  %11 = load f32 %0[%8]
  %12 = neg f32 %11
  store f32 %1[%8], %12
endif
)");
}

TEST(Pad, AwkwardSizesSplitEvenlyAfterPadding) {
  // 1000 -> 1024 = 4 work-groups of 256 threads.
  const ir::Kernel add = standard("add", {1, 1000, 1});
  EXPECT_FALSE(refusal(add, "split_local(axis=0,factor=256)").empty());
  const ir::Kernel padded = expect_applies(add, "pad(axis=0,multiple=256)", gpu_preset());
  const ir::Kernel split = expect_applies(padded, "split_local(axis=0,factor=256)", gpu_preset());
  EXPECT_NE(ir::print(split).find("index local 0"), std::string::npos);
  // The same on a dynamic length, for several lengths (smaller than one group too).
  const ir::Kernel dynamic = parse_valid(kNegDynamic);
  const ir::Kernel dynamic_padded = expect_applies(dynamic, "pad(axis=0,multiple=64)", gpu_preset(), std::vector<double>{100});
  for (double n : {1.0, 63.0, 64.0, 65.0, 100.0}) {
    const std::vector<double> scalars = {n};
    expect_applies(dynamic_padded, "split_local(axis=0,factor=64)", gpu_preset(), scalars);
    expect_applies(dynamic_padded, "coarsen(axis=0,factor=16,mode=1)", gpu_preset(), scalars);
  }
}

TEST(Pad, BarriersStayLegalUnderTheGroupUniformGuard) {
  constexpr std::string_view kBarrier = R"(
%x = param 0 global f32[6]
%y = param 1 global_mut f32[6]
%n = const i64 6
%g = index group 0 %n
%two = const i64 2
%l = index local 0 %two
%tile = storage local f32[2]
%v = load f32 %x[%g]
store f32 %tile[%l], %v
barrier
%zero = const i64 0
%w = load f32 %tile[%zero]
%first = eq %l, %zero
if %first
  store f32 %y[%g], %w
endif
)";
  const std::string out = after_step("pad(axis=0,multiple=4)", kBarrier);
  EXPECT_NE(out.find("  barrier\n"), std::string::npos) << out;
}

TEST(Pad, ConfigsListMultiplesTheLengthIsNot) {
  const ir::Kernel add = standard("add", {1, 1000, 1});
  EXPECT_EQ(config_texts("pad", add, gpu_preset()),
            (std::vector<std::string>{"pad(axis=0,multiple=32)", "pad(axis=0,multiple=64)", "pad(axis=0,multiple=128)",
                                      "pad(axis=0,multiple=256)"}));
  DeviceInfo wide_warp = gpu_preset();
  wide_warp.warp_size = 64;
  EXPECT_EQ(config_texts("pad", add, wide_warp).front(), "pad(axis=0,multiple=64)");
  // 1000 = 8 * 125: CPUs get 16 and 32.
  EXPECT_EQ(config_texts("pad", add, cpu_preset()),
            (std::vector<std::string>{"pad(axis=0,multiple=16)", "pad(axis=0,multiple=32)"}));
  EXPECT_TRUE(config_texts("pad", standard("add", {1, 1024, 1}), gpu_preset()).empty());
  // A dynamic length gets every multiple; once padded, only larger ones it is not known to divide.
  const ir::Kernel dynamic = parse_valid(kNegDynamic);
  EXPECT_EQ(config_texts("pad", dynamic, gpu_preset()).size(), 4u);
  const ir::Kernel padded = expect_applies(dynamic, "pad(axis=0,multiple=64)", gpu_preset(), std::vector<double>{50});
  EXPECT_EQ(config_texts("pad", padded, gpu_preset()),
            (std::vector<std::string>{"pad(axis=0,multiple=128)", "pad(axis=0,multiple=256)"}));
}

TEST(Pad, RefusesStepsThatDoNotFit) {
  const ir::Kernel neg = parse_valid(kNeg);
  EXPECT_NE(refusal(neg, "pad(axis=0,multiple=5)").find("already a multiple of 5"), std::string::npos);
  EXPECT_NE(refusal(neg, "pad(axis=1,multiple=8)").find("no GROUP index on axis 1"), std::string::npos);
  EXPECT_NE(refusal(neg, "pad(axis=0,multiple=1)").find("multiple must be"), std::string::npos);
  EXPECT_NE(refusal(neg, "pad(axis=0,multiple=8,factor=2)").find("unknown parameter 'factor'"), std::string::npos);
  DeviceInfo narrow = gpu_preset();
  narrow.max_grid_dims[0] = 12;
  EXPECT_NE(refusal(neg, "pad(axis=0,multiple=8)", narrow).find("at most 12 work-groups"), std::string::npos);
  const ir::Kernel padded = expect_applies(parse_valid(kNegDynamic), "pad(axis=0,multiple=8)", gpu_preset(),
                                           std::vector<double>{9});
  EXPECT_NE(refusal(padded, "pad(axis=0,multiple=4)").find("already a multiple of 4"), std::string::npos);
}

TEST(Pad, EveryConfigKeepsTheResults) {
  for (const DeviceInfo& device : presets())
    for (const ir::Kernel& kernel : odd_standard_kernels())
      for (const std::string& config : config_texts("pad", kernel, device)) {
        SCOPED_TRACE(device.id + " " + config + "\n" + ir::print(kernel));
        expect_applies(kernel, config, device);
      }
}

TEST(Pad, NormalizedPaddedDynamicLengthStillSplits) {
  // Through apply_sequence (normalize after each step): the padded length
  // keeps a form split_local and coarsen recognise as a multiple.
  const ir::Kernel dynamic = parse_valid(kNegDynamic);
  for (const DeviceInfo& device : {gpu_preset(), small_preset()}) {
    Result<ir::Kernel> padded = apply_sequence(normalize(dynamic, device), parse_sequence("pad(axis=0,multiple=64)").value(), device);
    ASSERT_TRUE(padded.ok()) << padded.error().to_string();
    const std::vector<std::string> splits = config_texts("split_local", *padded, device);
    ASSERT_FALSE(splits.empty()) << ir::print(*padded);
    EXPECT_EQ(splits.front(), "split_local(axis=0,factor=64)") << ir::print(*padded);
    EXPECT_FALSE(config_texts("coarsen", *padded, device).empty()) << ir::print(*padded);
    for (double n : {1.0, 64.0, 100.0}) {
      const std::vector<double> scalars = {n};
      expect_applies(*padded, splits.front(), device, scalars);
    }
  }
}
