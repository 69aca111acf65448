// mma_staged: matrix products on the warp MMA op with A and B tiles staged
// through LOCAL memory. The rewritten kernels run on the dummy device with
// "mma": true (the reference interpreter behind the plugin ABI) and must give
// the untuned kernel's outputs exactly, as mma_tile's do.
#include "passes/mma_support.hpp"

#include "kiln/ir/dtype.hpp"

#include <gmock/gmock.h>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& mma_staged() { return *find_optimization("mma_staged"); }

std::string case_name(std::string_view kernel, const kernels::KernelSize& size, ir::DType dtype, std::string_view step) {
  return std::string(kernel) + " " + std::to_string(size.m) + "x" + std::to_string(size.n) + "x" + std::to_string(size.k) +
         " " + std::string(ir::dtype_name(dtype)) + " " + std::string(step);
}

}  // namespace

TEST(MmaStaged, MatchesTheUntunedKernelExactlyOnTheDummy) {
  struct Case {
    std::string_view kernel;
    kernels::KernelSize size;
    std::string_view step;
  };
  const Case cases[] = {
      // No guards, 16-byte copies of both operands, two stages and one.
      {"matmul", {.m = 64, .n = 64, .k = 64}, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,stages=2)"},
      {"matmul", {.m = 64, .n = 64, .k = 64}, "mma_staged(bm=64,bn=64,bk=16,wm=2,wn=1,stages=1)"},
      {"matmul", {.m = 32, .n = 64, .k = 128}, "mma_staged(bm=32,bn=64,bk=64,wm=1,wn=2,stages=2)"},
      // Every side guarded; K a multiple of 8 keeps A's vector copies, N = 17 makes B's scalar.
      {"matmul", {.m = 33, .n = 17, .k = 40}, "mma_staged(bm=32,bn=32,bk=32,wm=2,wn=1,stages=2)"},
      {"matmul", {.m = 33, .n = 24, .k = 41}, "mma_staged(bm=16,bn=32,bk=16,wm=1,wn=1,stages=1)"},
      {"matmul", {.m = 1, .n = 1, .k = 1}, "mma_staged(bm=16,bn=8,bk=16,wm=1,wn=1,stages=2)"},
      {"matmul", {.m = 8, .n = 64, .k = 48}, "mma_staged(bm=16,bn=64,bk=32,wm=1,wn=2,stages=2)"},
      {"matmul-bt", {.m = 48, .n = 40, .k = 37}, "mma_staged(bm=32,bn=32,bk=16,wm=2,wn=2,stages=2)"},  // B k-fastest
  };
  for (ir::DType dtype : {ir::DType::F16, ir::DType::BF16})
    for (const Case& c : cases) {
      SCOPED_TRACE(case_name(c.kernel, c.size, dtype, c.step));
      EXPECT_EQ(differs_on_dummy(standard(c.kernel, c.size, dtype), c.step), "");
    }
}

TEST(MmaStaged, Tf32OnlyWhenAsked) {
  const kernels::StandardKernel k = standard("matmul", {.m = 40, .n = 36, .k = 40});
  EXPECT_TRUE(mma_staged().configs(k.kernel, mma_preset()).empty());  // f32: never proposed
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=32,bn=32,bk=16,wm=1,wn=1)", mma_preset()), HasSubstr("need tf32=1"));
  for (std::string_view step : {"mma_staged(bm=32,bn=32,bk=16,wm=2,wn=2,tf32=1)", "mma_staged(bm=32,bn=64,bk=32,wm=1,wn=2,stages=1,tf32=1)"}) {
    SCOPED_TRACE(step);
    EXPECT_THAT(ir::print(applied(k.kernel, step, mma_preset())), HasSubstr("mma m16n8k8 tf32"));
    // tf32 keeps 10 mantissa bits of each input (see MmaTile.Tf32OnlyWhenAsked).
    EXPECT_EQ(differs_on_dummy(k, step, 1e-2), "");
  }
  // A 4-aligned f32 product: 16-byte (4-element) copies of both operands.
  EXPECT_EQ(differs_on_dummy(standard("matmul", {.m = 64, .n = 64, .k = 32}), "mma_staged(bm=64,bn=64,bk=16,wm=2,wn=2,tf32=1)", 1e-2),
            "");
}

TEST(MmaStaged, TheRecipeStagesPaddedTilesWithVectorCopies) {
  const kernels::StandardKernel k = standard("matmul", {.m = 256, .n = 256, .k = 128}, ir::DType::F16);
  const std::string printed = ir::print(applied(k.kernel, "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=2)", mma_preset()));
  // Two stages of A (128 rows of 32 + 8) and of B (16 pair rows of 128 + 8 words).
  EXPECT_THAT(printed, HasSubstr("storage local f16[10240]"));
  EXPECT_THAT(printed, HasSubstr("storage local f16[8704]"));
  EXPECT_THAT(printed, HasSubstr("load f16x8 %"));   // 16-byte global copies
  EXPECT_THAT(printed, HasSubstr("store f16x8 %"));  // ... into LOCAL
  EXPECT_THAT(printed, HasSubstr("load f16x2 %"));   // 32-bit fragment pieces
  EXPECT_THAT(printed, HasSubstr("barrier"));
}

TEST(MmaStaged, ConfigsFitTheDevice) {
  const DeviceInfo* info = mma_device_info();
  ASSERT_NE(info, nullptr);
  const kernels::StandardKernel big = standard("matmul", {.m = 512, .n = 512, .k = 256}, ir::DType::F16);
  const std::vector<std::string> configs = config_texts(mma_staged(), big.kernel, mma_preset());
  ASSERT_FALSE(configs.empty());
  EXPECT_EQ(configs.front(), "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=2)");
  EXPECT_TRUE(mma_staged().configs(big.kernel, gpu_preset()).empty());  // no MMA claimed
  // Each config applies (a sample: every one costs a rebuilt kernel of thousands of ops).
  for (std::size_t i = 0; i < configs.size(); i += 7)
    EXPECT_TRUE(apply_sequence(big.kernel, parse_sequence(configs[i]).value(), mma_preset()).ok()) << configs[i];
  // Every config of an odd shape matches on the dummy.
  const kernels::StandardKernel odd = standard("matmul", {.m = 33, .n = 17, .k = 40}, ir::DType::BF16);
  const std::vector<std::string> small = config_texts(mma_staged(), odd.kernel, *info);
  ASSERT_FALSE(small.empty());
  for (const std::string& step : small) {
    SCOPED_TRACE(step);
    EXPECT_EQ(differs_on_dummy(odd, step, 0, 9), "");
  }
}

TEST(MmaStaged, RefusesWhatDoesNotFit) {
  const kernels::StandardKernel k = standard("matmul", {.m = 64, .n = 64, .k = 64}, ir::DType::F16);
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,tm=2)", mma_preset()),
              HasSubstr("unknown parameter 'tm'"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=64,bn=64,wm=2,wn=2)", mma_preset()), HasSubstr("missing parameter 'bk'"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=64,bn=64,bk=24,wm=2,wn=2)", mma_preset()), HasSubstr("bk must be"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,stages=3)", mma_preset()),
              HasSubstr("stages must be 1 or 2"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=48,bn=64,bk=32,wm=2,wn=2)", mma_preset()),
              HasSubstr("multiple of 16 * wm"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=256,bn=256,bk=64,wm=2,wn=4)", mma_preset()), HasSubstr("LOCAL bytes"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=128,bn=128,bk=32,wm=1,wn=1)", mma_preset()),
              HasSubstr("REGISTER bytes"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2)", gpu_preset()),
              HasSubstr("does not run mma m16n8k16 f16"));
  EXPECT_THAT(step_error_message(standard("sum-rows", {.m = 64, .n = 64}, ir::DType::F16).kernel,
                                 "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2)", mma_preset()),
              HasSubstr("not a matrix product"));
}
