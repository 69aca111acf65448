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

// C's two columns of a fragment row go out as one 2-lane store where n is
// even (an edge then never splits a pair); odd n keeps element stores. Both
// forms are checked bit for bit on the dummy by the tests above and below
// (n = 64, 48, 40 and n = 17).
TEST(MmaStaged, CStoresColumnPairsWhereNIsEven) {
  const std::string step = "mma_staged(bm=32,bn=32,bk=32,wm=2,wn=1,stages=2)";
  const std::string even = ir::print(applied(standard("matmul", {.m = 40, .n = 48, .k = 40}, ir::DType::F16).kernel, step, mma_preset()));
  EXPECT_THAT(even, HasSubstr("store f16x2 %2["));
  EXPECT_THAT(even, Not(HasSubstr("store f16 %2[")));
  const std::string odd = ir::print(applied(standard("matmul", {.m = 40, .n = 47, .k = 40}, ir::DType::F16).kernel, step, mma_preset()));
  EXPECT_THAT(odd, HasSubstr("store f16 %2["));
  EXPECT_THAT(odd, Not(HasSubstr("store f16x2 %2[")));
  EXPECT_EQ(differs_on_dummy(standard("matmul", {.m = 40, .n = 47, .k = 40}, ir::DType::F16), step), "");
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
              HasSubstr("3 or 4 stages need async copies"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,stages=5)", mma_preset()),
              HasSubstr("stages must be 1 to 4"));
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,async=1)", mma_preset()),
              HasSubstr("async=1 needs a device with asynchronous copies"));
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

// With asynchronous copies (the dummy with "copy_async": true, as the CUDA
// plugin on sm_80+): multi-buffered tiles filled by copy_async, one barrier
// per step, bit for bit the untuned kernel; 3 and 4 stages; zeros past the
// edges (the copies' zero fill); dynamic LOCAL memory past 48 KiB.
TEST(MmaStaged, AsyncCopiesMatchTheUntunedKernelExactlyOnTheDummy) {
  struct Case {
    kernels::KernelSize size;
    std::string_view step;
  };
  const Case cases[] = {
      {{.m = 64, .n = 64, .k = 128}, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,stages=2)"},
      {{.m = 64, .n = 64, .k = 128}, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,stages=3)"},
      {{.m = 64, .n = 128, .k = 96}, "mma_staged(bm=64,bn=128,bk=16,wm=2,wn=2,stages=4)"},  // 6 steps, 4 buffers
      {{.m = 32, .n = 64, .k = 32}, "mma_staged(bm=32,bn=64,bk=32,wm=1,wn=2,stages=4)"},    // one step: two empty groups
      // Every side guarded, in whole 16-byte chunks (M, N, K multiples of 8).
      {{.m = 40, .n = 48, .k = 72}, "mma_staged(bm=32,bn=32,bk=32,wm=2,wn=1,stages=3)"},
      {{.m = 24, .n = 40, .k = 56}, "mma_staged(bm=16,bn=32,bk=16,wm=1,wn=1,stages=2,async=1)"},
      // 128 x 128, bk 64, 3 stages: 107 KiB of LOCAL memory.
      {{.m = 128, .n = 128, .k = 192}, "mma_staged(bm=128,bn=128,bk=64,wm=2,wn=2,stages=3)"},
      // The 8-warp blocks the H200 call of 2026-12-03 times: 2 x 4 and 4 x 2 warps of 64 x 64.
      {{.m = 128, .n = 256, .k = 96}, "mma_staged(bm=128,bn=256,bk=32,wm=2,wn=4,stages=3)"},
      {{.m = 256, .n = 128, .k = 64}, "mma_staged(bm=256,bn=128,bk=32,wm=4,wn=2,stages=3)"},
      // An odd count of B tiles per warp (the last read by ldmatrix.x2.trans).
      {{.m = 32, .n = 48, .k = 64}, "mma_staged(bm=32,bn=24,bk=32,wm=1,wn=1,stages=3)"},
      // Without the matrix loads; and register staging with them (A only).
      {{.m = 64, .n = 64, .k = 128}, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,stages=3,ldmatrix=0)"},
      {{.m = 40, .n = 48, .k = 72}, "mma_staged(bm=32,bn=32,bk=32,wm=2,wn=1,stages=2,async=0)"},
      {{.m = 64, .n = 64, .k = 64}, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,stages=1)"},
  };
  for (ir::DType dtype : {ir::DType::F16, ir::DType::BF16})
    for (const Case& c : cases) {
      SCOPED_TRACE(case_name("matmul", c.size, dtype, c.step));
      EXPECT_EQ(differs_on_dummy(standard("matmul", c.size, dtype), c.step, 0, 5, true), "");
    }
  // tf32 (B was [k][n] already) and the transposed-B product (B k-fastest:
  // no 16-byte chunks along n, so register staging).
  EXPECT_EQ(differs_on_dummy(standard("matmul", {.m = 64, .n = 64, .k = 64}),
                             "mma_staged(bm=64,bn=64,bk=16,wm=2,wn=2,stages=3,tf32=1)", 1e-2, 5, true),
            "");
  EXPECT_EQ(differs_on_dummy(standard("matmul-bt", {.m = 48, .n = 40, .k = 37}, ir::DType::F16),
                             "mma_staged(bm=32,bn=32,bk=16,wm=2,wn=2,stages=2)", 0, 5, true),
            "");
}

TEST(MmaStaged, AsyncCopiesReplaceTheRegisterStaging) {
  const DeviceInfo* info = mma_device_info(true);
  ASSERT_NE(info, nullptr);
  const kernels::StandardKernel k = standard("matmul", {.m = 256, .n = 256, .k = 128}, ir::DType::F16);
  const std::string printed = ir::print(applied(k.kernel, "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=3)", *info));
  // Three stages of A (128 rows of 32 + 8) and of B (32 k rows of 128 + 8).
  EXPECT_THAT(printed, HasSubstr("storage local f16[15360]"));
  EXPECT_THAT(printed, HasSubstr("storage local f16[13056]"));
  EXPECT_THAT(printed, HasSubstr("copy_async f16x8 %"));
  EXPECT_THAT(printed, HasSubstr("  copy_wait 1\n  barrier\n"));
  EXPECT_THAT(printed, HasSubstr("load_matrix x4 f16 %"));        // A's fragments
  EXPECT_THAT(printed, HasSubstr("load_matrix x4 trans f16 %"));  // two B fragments each
  EXPECT_THAT(printed, ::testing::Not(HasSubstr("store f16x8 %")));  // nothing staged through registers
  // async=0 keeps the register staging (two stages at most).
  const std::string registers = ir::print(applied(k.kernel, "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=2,async=0)", *info));
  EXPECT_THAT(registers, ::testing::Not(HasSubstr("copy_async")));
  EXPECT_THAT(step_error_message(k.kernel, "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=3,async=0)", *info),
              HasSubstr("3 or 4 stages need async copies"));
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 64, .n = 17, .k = 64}, ir::DType::F16).kernel,
                                 "mma_staged(bm=64,bn=32,bk=32,wm=2,wn=2,stages=3,async=1)", *info),
              HasSubstr("16-byte chunks"));
  // Where the device copies asynchronously the configs' two stages are
  // async (now that LOCAL memory holds bk 64 twice); the deep pipelines are
  // recipes only (a config equal to a recipe hides the recipe from the tuner).
  const kernels::StandardKernel big = standard("matmul", {.m = 512, .n = 512, .k = 256}, ir::DType::F16);
  const std::vector<std::string> configs = config_texts(mma_staged(), big.kernel, *info);
  ASSERT_FALSE(configs.empty());
  EXPECT_EQ(configs.front(), "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=2)");
  for (const std::string& config : configs) EXPECT_THAT(config, ::testing::Not(HasSubstr("stages=3")));
}
