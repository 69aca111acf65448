// coarsen: each thread handles `factor` elements of a grid axis in a loop.
#include "passes/structural_test_support.hpp"

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

constexpr std::string_view kScale = R"(
%0 = param 0 global f32[12]
%1 = param 1 global_mut f32[12]
%2 = const i64 12
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = const f32 3
%6 = mul f32 %4, %5
store f32 %1[%3], %6
)";

// Sums of 4 through LOCAL memory: every group's 4 threads write %tile, a
// barrier, thread 0 adds. Looping over two groups per thread needs a
// barrier between iterations, or iteration 1 overwrites what thread 0 of
// iteration 0 still reads.
constexpr std::string_view kLocalSums = R"(
%x = param 0 global f32[32]
%y = param 1 global_mut f32[8]
%groups = const i64 8
%g = index group 0 %groups
%four = const i64 4
%l = index local 0 %four
%tile = storage local f32[4]
%gbase = mul i64 %g, %four
%i = add i64 %gbase, %l
%v = load f32 %x[%i]
store f32 %tile[%l], %v
barrier
%zero = const i64 0
%first = eq %l, %zero
if %first
  %a = load f32 %tile[%zero]
  %k1 = const i64 1
  %b = load f32 %tile[%k1]
  %k2 = const i64 2
  %c = load f32 %tile[%k2]
  %k3 = const i64 3
  %d = load f32 %tile[%k3]
  %ab = add f32 %a, %b
  %cd = add f32 %c, %d
  %s = add f32 %ab, %cd
  store f32 %y[%g], %s
endif
)";

}  // namespace

TEST(Coarsen, ContiguousLoopsOverNeighbouringElements) {
  EXPECT_EQ(after_step("coarsen(axis=0,factor=4,mode=0)", kScale, cpu_preset()), R"(%0 = param 0 global f32[12]
%1 = param 1 global_mut f32[12]
%2 = const i64 12
%3 = const i64 3
%4 = index group 0 %3
%5 = const i64 4
%6 = loop %5
  %7 = const i64 4
  %8 = mul i64 %4, %7
  %9 = add i64 %8, %6
  %10 = load f32 %0[%9]
  %11 = const f32 3
  %12 = mul f32 %10, %11
  store f32 %1[%9], %12
endloop %6
)");
}

TEST(Coarsen, StridedKeepsNeighbouringThreadsOnNeighbouringElements) {
  EXPECT_EQ(after_step("coarsen(axis=0,factor=4,mode=1)", kScale), R"(%0 = param 0 global f32[12]
%1 = param 1 global_mut f32[12]
%2 = const i64 12
%3 = const i64 3
%4 = index group 0 %3
%5 = const i64 4
%6 = loop %5
  %7 = mul i64 %6, %3
  %8 = add i64 %7, %4
  %9 = load f32 %0[%8]
  %10 = const f32 3
  %11 = mul f32 %9, %10
  store f32 %1[%8], %11
endloop %6
)");
}

TEST(Coarsen, AnyLengthRepeatsTheLastGroupInPlaceOfThoseAfterIt) {
  // 12 elements, 5 a work-item: three work-items, the third runs elements
  // 10, 11, 11, 11, 11 (each a repeat of the same element's work).
  EXPECT_EQ(after_step("coarsen(axis=0,factor=5,mode=2)", kScale, cpu_preset()), R"(%0 = param 0 global f32[12]
%1 = param 1 global_mut f32[12]
%2 = const i64 12
%3 = const i64 3
%4 = const i64 11
%5 = index group 0 %3
%6 = const i64 5
%7 = loop %6
  %8 = const i64 5
  %9 = mul i64 %5, %8
  %10 = add i64 %9, %7
  %11 = min i64 %10, %4
  %12 = load f32 %0[%11]
  %13 = const f32 3
  %14 = mul f32 %12, %13
  store f32 %1[%11], %14
endloop %7
)");
  // Where the factor divides the length, mode 2 is mode 0.
  EXPECT_EQ(after_step("coarsen(axis=0,factor=4,mode=2)", kScale, cpu_preset()),
            after_step("coarsen(axis=0,factor=4,mode=0)", kScale, cpu_preset()));
  // A dynamic length: ceil(rows / 4) work-items, rows clamped to rows - 1.
  expect_applies(parse_valid(kDynamicRowSum), "coarsen(axis=0,factor=4,mode=2)", cpu_preset(), std::vector<double>{11, 8});
  // A group that reads what it writes would read its own output when run again.
  constexpr std::string_view kInPlace = R"(
%0 = param 0 global_mut f32[12]
%1 = const i64 12
%2 = index group 0 %1
%3 = load f32 %0[%2]
%4 = mul f32 %3, %3
store f32 %0[%2], %4
)";
  EXPECT_NE(refusal(parse_valid(kInPlace), "coarsen(axis=0,factor=5,mode=2)").find("both read and written"), std::string::npos);
  expect_applies(parse_valid(kInPlace), "coarsen(axis=0,factor=4,mode=2)", cpu_preset());
}

TEST(Coarsen, LocalStorageGetsABarrierBetweenIterations) {
  const std::string out = after_step("coarsen(axis=0,factor=2,mode=0)", kLocalSums);
  // The last two lines of the loop: the added barrier, then its end.
  EXPECT_NE(out.find("  barrier\nendloop"), std::string::npos) << out;
}

TEST(Coarsen, ConfigsListFactorsDividingTheLengthInTheDevicesPreferredMode) {
  const ir::Kernel scale = parse_valid(kScale);
  EXPECT_EQ(config_texts("coarsen", scale, cpu_preset()),
            (std::vector<std::string>{"coarsen(axis=0,factor=4,mode=0)", "coarsen(axis=0,factor=2,mode=0)",
                                      "coarsen(axis=0,factor=4,mode=1)", "coarsen(axis=0,factor=2,mode=1)"}));
  EXPECT_EQ(config_texts("coarsen", scale, gpu_preset()).front(), "coarsen(axis=0,factor=4,mode=1)");
  // 1 x 7 matmul: one grid axis, of a prime length, which only mode 2
  // coarsens (by 2: 7 is less than twice 4).
  EXPECT_EQ(config_texts("coarsen", standard("matmul", {1, 7, 3}), cpu_preset()),
            (std::vector<std::string>{"coarsen(axis=0,factor=2,mode=2)"}));
  EXPECT_EQ(config_texts("coarsen", standard("add", {1, 4096, 1}), cpu_preset()).size(), 8u);
  // 13 rows: mode 2 where the factor does not divide them and they are at
  // least twice the factor.
  EXPECT_EQ(config_texts("coarsen", standard("softmax-rows", {.m = 13, .n = 8}), cpu_preset()),
            (std::vector<std::string>{"coarsen(axis=0,factor=4,mode=2)", "coarsen(axis=0,factor=2,mode=2)"}));
}

TEST(Coarsen, DynamicLengthsAreSkippedUnlessPadded) {
  const ir::Kernel dynamic = parse_valid(kDynamicRowSum);
  EXPECT_TRUE(config_texts("coarsen", dynamic, cpu_preset()).empty());
  EXPECT_NE(refusal(dynamic, "coarsen(axis=0,factor=2,mode=0)").find("dynamic"), std::string::npos);
  const std::vector<double> sizes = {11, 8};
  const ir::Kernel padded = expect_applies(dynamic, "pad(axis=0,multiple=16)", cpu_preset(), sizes);
  const std::vector<std::string> configs = config_texts("coarsen", padded, cpu_preset());
  EXPECT_EQ(configs.size(), 8u);
  for (const std::string& config : configs) expect_applies(padded, config, cpu_preset(), sizes);
}

TEST(Coarsen, RefusesStepsThatDoNotFit) {
  const ir::Kernel scale = parse_valid(kScale);
  EXPECT_NE(refusal(scale, "coarsen(axis=0,factor=5,mode=0)").find("not a multiple of 5"), std::string::npos);
  EXPECT_NE(refusal(scale, "coarsen(axis=0,factor=24,mode=0)").find("not a multiple of 24"), std::string::npos);
  EXPECT_NE(refusal(scale, "coarsen(axis=2,factor=2,mode=0)").find("no GROUP index on axis 2"), std::string::npos);
  EXPECT_NE(refusal(scale, "coarsen(axis=0,factor=2,mode=3)").find("mode must be"), std::string::npos);
  EXPECT_NE(refusal(scale, "coarsen(axis=0,factor=0,mode=0)").find("at least 2"), std::string::npos);
  EXPECT_NE(refusal(scale, "coarsen(axis=0,factor=2)").find("missing parameter 'mode'"), std::string::npos);
}

TEST(Coarsen, EveryConfigKeepsTheResults) {
  std::vector<ir::Kernel> kernels = odd_standard_kernels();
  kernels.push_back(parse_valid(kLocalSums));
  for (const DeviceInfo& device : presets())
    for (const ir::Kernel& kernel : kernels)
      for (const std::string& config : config_texts("coarsen", kernel, device)) {
        SCOPED_TRACE(device.id + " " + config + "\n" + ir::print(kernel));
        expect_applies(kernel, config, device);
      }
}
