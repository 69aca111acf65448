// wgmma_staged: matrix products on the warp-group MMA (WGMMA) with A and B
// tiles copied asynchronously into swizzled LOCAL memory. The rewritten
// kernels run on the dummy device with "wgmma": true (the reference
// interpreter behind the plugin ABI) and must give the untuned kernel's
// outputs exactly: odd shapes (every side guarded), every block and stage
// count, both in-flight forms, f16 and bf16; f32 with tf32=1 within the
// tolerance tf32's inputs allow, and its two ways of staging B (through
// registers, one k or b_vec k a store; b_async=1, copied and transposed in
// LOCAL) bit for bit alike.
#include "passes/mma_support.hpp"

#include "kiln/ir/dtype.hpp"

#include <gmock/gmock.h>

#include <span>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const Optimization& wgmma_staged() { return *find_optimization("wgmma_staged"); }

std::string case_name(const kernels::KernelSize& size, ir::DType dtype, std::string_view step) {
  return std::to_string(size.m) + "x" + std::to_string(size.n) + "x" + std::to_string(size.k) + " " +
         std::string(ir::dtype_name(dtype)) + " " + std::string(step);
}

// The dummy's WGMMA device.
const DeviceInfo& wgmma_device() { return *mma_device_info(true, true); }

std::size_t occurrences(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A tf32 step (its text without the closing parenthesis) and the same step
// with `staging` appended, which stages B another way but must feed the
// WGMMAs the same tiles in the same order.
struct StagingCase {
  kernels::KernelSize size;
  std::string_view step;
  std::string_view staging;
};

// Both forms of each case on the dummy's WGMMA device, same inputs: bit for
// bit alike.
void expect_staging_gives_the_same_bits(std::span<const StagingCase> cases) {
  const DeviceInfo* info = mma_device_info(true, true);
  ASSERT_NE(info, nullptr);
  const Device device = mma_runtime()->device(info->id).value();
  for (const StagingCase& c : cases) {
    const std::string plain = std::string(c.step) + ")", staged = std::string(c.step) + "," + std::string(c.staging) + ")";
    SCOPED_TRACE(case_name(c.size, ir::DType::F32, staged));
    const kernels::StandardKernel k = standard("matmul", c.size);
    const RunOutcome want = run_on_device(device, applied(k.kernel, plain, *info), k.args, 7);
    const RunOutcome got = run_on_device(device, applied(k.kernel, staged, *info), k.args, 7);
    EXPECT_EQ(compare_outcomes(want, got, 0), "");
  }
}

}  // namespace

TEST(WgmmaStaged, MatchesTheUntunedKernelExactlyOnTheDummy) {
  ASSERT_NE(mma_device_info(true, true), nullptr);
  struct Case {
    kernels::KernelSize size;
    std::string_view step;
  };
  const Case cases[] = {
      // Whole blocks: one warp group, two; 64 to 256 columns; 2 to 4 stages, in flight or not.
      {{.m = 64, .n = 64, .k = 128}, "wgmma_staged(bm=64,bn=64,stages=2,inflight=0)"},
      {{.m = 128, .n = 128, .k = 256}, "wgmma_staged(bm=128,bn=128,stages=4,inflight=1)"},
      {{.m = 128, .n = 256, .k = 192}, "wgmma_staged(bm=128,bn=256,stages=3,inflight=1)"},
      {{.m = 64, .n = 192, .k = 320}, "wgmma_staged(bm=64,bn=192,stages=3,inflight=0)"},
      {{.m = 128, .n = 64, .k = 448}, "wgmma_staged(bm=128,bn=64,stages=5,inflight=2)"},
      // The step's WGMMAs issued before the refill's copies.
      {{.m = 128, .n = 128, .k = 320}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,mma_first=1)"},
      {{.m = 72, .n = 88, .k = 136}, "wgmma_staged(bm=64,bn=64,stages=2,inflight=0,mma_first=1)"},
      // Four and three warp groups.
      {{.m = 256, .n = 128, .k = 192}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1)"},
      {{.m = 200, .n = 192, .k = 256}, "wgmma_staged(bm=192,bn=192,stages=3,inflight=1)"},
      // Two and four WGMMAs along n, each into its own accumulator.
      {{.m = 128, .n = 256, .k = 192}, "wgmma_staged(bm=128,bn=256,stages=4,inflight=1,split=2)"},
      {{.m = 64, .n = 256, .k = 128}, "wgmma_staged(bm=64,bn=256,stages=3,inflight=0,split=4)"},
      // One k step (the prologue's empty groups), more stages than steps.
      {{.m = 64, .n = 128, .k = 64}, "wgmma_staged(bm=64,bn=128,stages=4,inflight=1)"},
      // Every side guarded in whole 16-byte chunks (M any, N and K multiples of 8).
      {{.m = 72, .n = 88, .k = 136}, "wgmma_staged(bm=64,bn=64,stages=3,inflight=1)"},
      {{.m = 33, .n = 40, .k = 24}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=0)"},
  };
  for (ir::DType dtype : {ir::DType::F16, ir::DType::BF16})
    for (const Case& c : cases) {
      SCOPED_TRACE(case_name(c.size, dtype, c.step));
      EXPECT_EQ(differs_on_dummy(standard("matmul", c.size, dtype), c.step, 0, 5, true, true), "");
    }
}

TEST(WgmmaStaged, TheKernelIsWarpGroupMmasOnSwizzledTiles) {
  const kernels::StandardKernel k = standard("matmul", {.m = 128, .n = 256, .k = 128}, ir::DType::BF16);
  const std::string text = ir::print(applied(k.kernel, "wgmma_staged(bm=128,bn=256,stages=4,inflight=1)", wgmma_device()));
  EXPECT_THAT(text, HasSubstr("wgmma n256 bf16"));
  EXPECT_THAT(text, HasSubstr("wgmma_fence"));
  EXPECT_THAT(text, HasSubstr("wgmma_wait 1"));
  EXPECT_THAT(text, HasSubstr("wgmma_wait 0"));
  EXPECT_THAT(text, HasSubstr("bitxor"));      // the swizzle
  EXPECT_THAT(text, HasSubstr("copy_wait 1"));  // 4 stages, one step's WGMMAs in flight: 2 tiles ahead
  EXPECT_THAT(text, HasSubstr("index local 0 %"));
}

TEST(WgmmaStaged, ConfigsFitTheDevice) {
  const kernels::StandardKernel big = standard("matmul", {.m = 512, .n = 512, .k = 256}, ir::DType::F16);
  const std::vector<std::string> configs = config_texts(wgmma_staged(), big.kernel, wgmma_device());
  ASSERT_FALSE(configs.empty());
  EXPECT_EQ(configs.front(), "wgmma_staged(bm=128,bn=128,stages=3,inflight=0)");
  EXPECT_TRUE(wgmma_staged().configs(big.kernel, *mma_device_info(true)).empty());  // no WGMMA claimed
  EXPECT_TRUE(wgmma_staged().configs(standard("matmul", {.m = 64, .n = 64, .k = 64}).kernel, wgmma_device()).empty());  // f32
  // Every config of an odd shape matches on the dummy.
  const kernels::StandardKernel odd = standard("matmul", {.m = 65, .n = 72, .k = 40}, ir::DType::BF16);
  const std::vector<std::string> small = config_texts(wgmma_staged(), odd.kernel, wgmma_device());
  ASSERT_FALSE(small.empty());
  for (const std::string& step : small) {
    SCOPED_TRACE(step);
    EXPECT_EQ(differs_on_dummy(odd, step, 0, 9, true, true), "");
  }
}

TEST(WgmmaStaged, RefusesWhatDoesNotFit) {
  const DeviceInfo& d = wgmma_device();
  const kernels::StandardKernel k = standard("matmul", {.m = 64, .n = 64, .k = 64}, ir::DType::F16);
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=64,bn=64,bk=64)", d), HasSubstr("unknown parameter 'bk'"));
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=64)", d), HasSubstr("missing parameter 'bn'"));
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=32,bn=64)", d), HasSubstr("bm must be"));
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=64,bn=96)", d), HasSubstr("bn must be"));
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=64,bn=64,stages=2,inflight=1)", d), HasSubstr("stages must be 3 to 6"));
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=64,bn=64,inflight=3)", d), HasSubstr("inflight must be 0, 1 or 2"));
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=64,bn=128,split=4)", d), HasSubstr("split must divide bn"));
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=192,bn=128)", d), HasSubstr("do not divide the tile copies"));
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=64,bn=64,mma_first=2)", d), HasSubstr("mma_first must be 0 or 1"));
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=64,bn=64,stages=3,inflight=2)", d), HasSubstr("stages must be 4 to 6"));
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=256,bn=256,stages=6)", d), HasSubstr("LOCAL bytes"));
  EXPECT_THAT(step_error_message(k.kernel, "wgmma_staged(bm=64,bn=64)", *mma_device_info(true)),
              HasSubstr("does not run wgmma on f16"));
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 64, .n = 64, .k = 64}).kernel, "wgmma_staged(bm=64,bn=64)", d),
              HasSubstr("f32 inputs need tf32=1"));
  // B k-fastest (matmul-bt): no 16-byte chunks along n.
  EXPECT_THAT(step_error_message(standard("matmul-bt", {.m = 64, .n = 64, .k = 64}, ir::DType::F16).kernel,
                                 "wgmma_staged(bm=64,bn=64)", d),
              HasSubstr("B must be contiguous along n"));
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 64, .n = 60, .k = 64}, ir::DType::F16).kernel,
                                 "wgmma_staged(bm=64,bn=64)", d),
              HasSubstr("B must be contiguous along n"));
}

TEST(WgmmaStaged, Tf32OnlyWhenAsked) {
  const DeviceInfo& d = wgmma_device();
  const kernels::StandardKernel f32 = standard("matmul", {.m = 128, .n = 128, .k = 64});
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=128,bn=128,stages=3)", d), HasSubstr("f32 inputs need tf32=1"));
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 64, .n = 64, .k = 64}, ir::DType::F16).kernel,
                                 "wgmma_staged(bm=64,bn=64,tf32=1)", d),
              HasSubstr("tf32=1 is for f32 inputs"));
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=64,bn=64,tf32=2)", d), HasSubstr("tf32 must be 0 or 1"));
  EXPECT_TRUE(wgmma_staged().configs(f32.kernel, d).empty());  // never proposed: it changes the numerics
  const std::string text = ir::print(applied(f32.kernel, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1)", d));
  EXPECT_THAT(text, HasSubstr("wgmma n128 f32"));
  EXPECT_THAT(text, HasSubstr("copy_async"));  // A; B goes through registers (transposed)
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=128,bn=128,tf32=1,b_async=2)", d), HasSubstr("b_async must be 0 or 1"));
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 64, .n = 64, .k = 64}, ir::DType::F16).kernel,
                                 "wgmma_staged(bm=64,bn=64,b_async=1)", d),
              HasSubstr("b_async=1 is tf32's B staging"));
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=128,bn=128,tf32=1,b_copy=1)", d), HasSubstr("unknown parameter 'b_copy'"));
  // B k-fastest or N not in 16-byte chunks: refused.
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 64, .n = 62, .k = 64}).kernel, "wgmma_staged(bm=64,bn=64,tf32=1)", d),
              HasSubstr("B must be contiguous along n"));
}

TEST(WgmmaStaged, Tf32MatchesTheUntunedKernelWithinTf32OnTheDummy) {
  ASSERT_NE(mma_device_info(true, true), nullptr);
  struct Case {
    kernels::KernelSize size;
    std::string_view step;
  };
  const Case cases[] = {
      {{.m = 64, .n = 64, .k = 128}, "wgmma_staged(bm=64,bn=64,stages=2,inflight=0,tf32=1)"},
      {{.m = 128, .n = 128, .k = 256}, "wgmma_staged(bm=128,bn=128,stages=4,inflight=1,tf32=1)"},
      {{.m = 128, .n = 128, .k = 160}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1)"},
      {{.m = 128, .n = 256, .k = 96}, "wgmma_staged(bm=128,bn=256,stages=3,inflight=1,tf32=1)"},
      {{.m = 128, .n = 64, .k = 224}, "wgmma_staged(bm=128,bn=64,stages=5,inflight=2,tf32=1)"},
      {{.m = 256, .n = 128, .k = 96}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1)"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1)"},
      {{.m = 128, .n = 256, .k = 96}, "wgmma_staged(bm=128,bn=256,stages=4,inflight=1,split=2,tf32=1)"},
      {{.m = 128, .n = 128, .k = 160}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,mma_first=1,tf32=1)"},
      // One k step with more stages than steps; every side guarded (N and K in 16-byte chunks of 4).
      {{.m = 64, .n = 128, .k = 32}, "wgmma_staged(bm=64,bn=128,stages=4,inflight=1,tf32=1)"},
      {{.m = 72, .n = 92, .k = 68}, "wgmma_staged(bm=64,bn=64,stages=3,inflight=1,tf32=1)"},
      {{.m = 33, .n = 36, .k = 20}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=0,tf32=1)"},
      // B copied asynchronously and transposed in LOCAL (b_async=1).
      {{.m = 256, .n = 128, .k = 96}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1,b_async=1)"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1,b_async=1)"},
      {{.m = 33, .n = 36, .k = 20}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=0,tf32=1,b_async=1)"},
      // B's transposed stores 2 and 4 k wide (b_vec).
      {{.m = 256, .n = 128, .k = 96}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1,b_vec=2)"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1,b_vec=2)"},
      {{.m = 128, .n = 128, .k = 160}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1,b_vec=4)"},
      {{.m = 33, .n = 36, .k = 20}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=0,tf32=1,b_vec=4)"},
      // C^T = B^T A^T, B^T's fragments from registers (swap=1).
      {{.m = 256, .n = 128, .k = 96}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=0,tf32=1,swap=1)"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=128,bn=256,stages=4,inflight=0,mma_first=1,tf32=1,swap=1)"},
      {{.m = 33, .n = 36, .k = 20}, "wgmma_staged(bm=64,bn=64,stages=2,inflight=0,tf32=1,swap=1)"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,mma_first=1,tf32=1,swap=1)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(case_name(c.size, ir::DType::F32, c.step));
    // tf32 keeps 10 mantissa bits of each input (truncated): about 2^-10
    // relative per product (see MmaStaged.Tf32OnlyWhenAsked).
    EXPECT_EQ(differs_on_dummy(standard("matmul", c.size), c.step, 1e-2, 5, true, true), "");
  }
}

// b_async=1 stages B another way (16-byte copies into a plain tile, each
// thread transposing its own pieces into the swizzled stage) but feeds the
// WGMMAs the same tiles in the same order: bit for bit the register form's
// outputs on the interpreter, odd shapes (every side guarded), one k step,
// more stages than steps, 0 to 2 groups in flight, split and mma_first
// included.
TEST(WgmmaStaged, Tf32BAsyncGivesTheRegisterFormsBits) {
  const StagingCase cases[] = {
      {{.m = 256, .n = 128, .k = 192}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1", "b_async=1"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1", "b_async=1"},
      {{.m = 128, .n = 256, .k = 96}, "wgmma_staged(bm=128,bn=256,stages=3,inflight=0,tf32=1", "b_async=1"},
      {{.m = 128, .n = 128, .k = 288}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1", "b_async=1"},
      {{.m = 128, .n = 64, .k = 224}, "wgmma_staged(bm=128,bn=64,stages=5,inflight=2,tf32=1", "b_async=1"},
      {{.m = 128, .n = 256, .k = 96}, "wgmma_staged(bm=128,bn=256,stages=4,inflight=1,split=2,tf32=1", "b_async=1"},
      {{.m = 128, .n = 128, .k = 160}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,mma_first=1,tf32=1", "b_async=1"},
      {{.m = 64, .n = 128, .k = 32}, "wgmma_staged(bm=64,bn=128,stages=4,inflight=1,tf32=1", "b_async=1"},
      {{.m = 72, .n = 92, .k = 68}, "wgmma_staged(bm=64,bn=64,stages=2,inflight=0,tf32=1", "b_async=1"},
      {{.m = 33, .n = 36, .k = 20}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=0,tf32=1", "b_async=1"},
  };
  expect_staging_gives_the_same_bits(cases);
}

// b_vec = 2 and 4 store B's transpose 2 or 4 k at a time (each thread
// loading as many k rows): the same tiles into the same WGMMAs, so bit for
// bit the scalar stores' outputs on the interpreter, odd shapes included;
// a misplaced element, or a k row loaded twice, changes them.
TEST(WgmmaStaged, Tf32WideBStoresGiveTheScalarStoresBits) {
  const StagingCase cases[] = {
      {{.m = 256, .n = 128, .k = 192}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1", "b_vec=2"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1", "b_vec=2"},
      {{.m = 128, .n = 256, .k = 96}, "wgmma_staged(bm=128,bn=256,stages=3,inflight=0,tf32=1", "b_vec=4"},
      {{.m = 128, .n = 128, .k = 288}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1", "b_vec=4"},
      {{.m = 128, .n = 128, .k = 288}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1", "b_vec=2"},
      {{.m = 72, .n = 92, .k = 68}, "wgmma_staged(bm=64,bn=64,stages=2,inflight=0,tf32=1", "b_vec=2"},
      {{.m = 33, .n = 36, .k = 20}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=0,tf32=1", "b_vec=4"},
      {{.m = 256, .n = 128, .k = 192}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,mma_first=1,tf32=1", "b_vec=2"},
  };
  expect_staging_gives_the_same_bits(cases);
}

TEST(WgmmaStaged, Tf32WideBStoresAreVectorsOfK) {
  const DeviceInfo& d = wgmma_device();
  const kernels::StandardKernel f32 = standard("matmul", {.m = 256, .n = 128, .k = 256});
  const std::string scalar = ir::print(applied(f32.kernel, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1)", d));
  const std::string pairs = ir::print(applied(f32.kernel, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1,b_vec=2)", d));
  // The staging registers hold as many elements (8 a thread: 2 units of 4,
  // or 1 unit of 2 rows of 4); with b_vec=2 the unit's 4 n go to LOCAL as 4
  // pairs of k, in the prologue's one tile and the loop's refill (C's
  // element pairs are the other f32x2 stores).
  EXPECT_THAT(scalar, HasSubstr("storage register f32[8]"));
  EXPECT_THAT(pairs, HasSubstr("storage register f32[8]"));
  EXPECT_EQ(occurrences(pairs, "store f32x2 "), occurrences(scalar, "store f32x2 ") + 2u * 4u);
  EXPECT_EQ(occurrences(scalar, "store f32 ") - occurrences(pairs, "store f32 "), 2u * 8u);
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=256,bn=128,tf32=1,b_vec=3)", d), HasSubstr("b_vec must be 1, 2 or 4"));
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=256,bn=128,tf32=1,b_async=1,b_vec=2)", d),
              HasSubstr("b_vec is the width of tf32's transposed B stores"));
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 64, .n = 64, .k = 64}, ir::DType::F16).kernel,
                                 "wgmma_staged(bm=64,bn=64,b_vec=2)", d),
              HasSubstr("b_vec is the width of tf32's transposed B stores"));
  // 256 x 128 with 4-wide stores: 256 units of 4 rows over 512 threads.
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=256,bn=128,tf32=1,b_vec=4)", d), HasSubstr("do not divide the tile copies"));
}

TEST(WgmmaStaged, Tf32BAsyncCopiesBAndTransposesItInLocal) {
  const DeviceInfo& d = wgmma_device();
  const kernels::StandardKernel f32 = standard("matmul", {.m = 256, .n = 128, .k = 256});
  const std::string registers = ir::print(applied(f32.kernel, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1)", d));
  const std::string copied = ir::print(applied(f32.kernel, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1,b_async=1)", d));
  // 512 threads: 4 A pieces and 2 B pieces each, in the prologue's one tile
  // and the loop's refill (registers: A's only).
  EXPECT_EQ(occurrences(registers, "copy_async"), 2u * 4u);
  EXPECT_EQ(occurrences(copied, "copy_async"), 2u * (4u + 2u));
  // The B pieces' transpose is fenced before the barrier, the WGMMAs after it.
  EXPECT_EQ(occurrences(copied, "wgmma_fence"), 2u);
  EXPECT_EQ(occurrences(registers, "wgmma_fence"), 1u);
  // No staging registers: the accumulators' storage alone.
  EXPECT_THAT(registers, HasSubstr("storage register f32[8]"));
  EXPECT_THAT(copied, Not(HasSubstr("storage register f32[8]")));
  // 3 stages of A (32 KiB each), B's 3 transposed stages and 1 plain tile (16 KiB each): 160 KiB.
  EXPECT_THAT(copied, HasSubstr("storage local f32[40960]"));
  // Whatever does not fit the device's 227 KiB is refused: 4 stages of 256 x 256.
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 256, .n = 256, .k = 256}).kernel,
                                 "wgmma_staged(bm=256,bn=256,stages=4,inflight=1,tf32=1,b_async=1)", d),
              HasSubstr("LOCAL bytes"));
}

// swap=1 computes C^T = B^T A^T: B copied as it is, its fragments read into
// registers as the WGMMA's A (code 1), A's stage as its B. The products are
// the same (each a single rounding, operands swapped) summed k ascending in
// the same steps, so bit for bit the register form's outputs on the
// interpreter: odd shapes (every side guarded), one k step, more stages than
// steps, each block shape; a fragment element out of place, or C^T's
// element stored at the wrong (m, n), changes them.
TEST(WgmmaStaged, Tf32SwapGivesTheRegisterFormsBits) {
  const StagingCase cases[] = {
      {{.m = 256, .n = 128, .k = 192}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=0,tf32=1", "swap=1"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=0,tf32=1", "swap=1"},
      {{.m = 128, .n = 256, .k = 96}, "wgmma_staged(bm=128,bn=256,stages=3,inflight=0,tf32=1", "swap=1"},
      {{.m = 128, .n = 128, .k = 288}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=0,mma_first=1,tf32=1", "swap=1"},
      {{.m = 64, .n = 128, .k = 32}, "wgmma_staged(bm=64,bn=128,stages=4,inflight=0,tf32=1", "swap=1"},
      {{.m = 72, .n = 92, .k = 68}, "wgmma_staged(bm=64,bn=64,stages=2,inflight=0,tf32=1", "swap=1"},
      {{.m = 33, .n = 36, .k = 20}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=0,tf32=1", "swap=1"},
      // One group in flight, two steps an iteration: even and odd step
      // counts (the odd one's last on zero tiles), one step, more stages
      // than steps.
      {{.m = 256, .n = 128, .k = 192}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1", "swap=1"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,mma_first=1,tf32=1", "swap=1"},
      {{.m = 128, .n = 256, .k = 96}, "wgmma_staged(bm=128,bn=256,stages=3,inflight=1,tf32=1", "swap=1"},
      {{.m = 64, .n = 128, .k = 32}, "wgmma_staged(bm=64,bn=128,stages=5,inflight=1,tf32=1", "swap=1"},
      {{.m = 33, .n = 36, .k = 20}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1", "swap=1"},
  };
  expect_staging_gives_the_same_bits(cases);
}

TEST(WgmmaStaged, Tf32SwapTakesBFromRegisters) {
  const DeviceInfo& d = wgmma_device();
  const kernels::StandardKernel f32 = standard("matmul", {.m = 256, .n = 128, .k = 256});
  const std::string text = ir::print(applied(f32.kernel, "wgmma_staged(bm=256,bn=128,stages=3,inflight=0,tf32=1,swap=1)", d));
  // Two warp groups along n, each C^T's 64 x 256 (N = bm) from its fragments
  // (4 WGMMAs of k 8 a step): 128 accumulators, then 4 fragments of 4.
  EXPECT_THAT(text, HasSubstr("index local 0"));
  EXPECT_EQ(occurrences(text, "wgmma n256 a_regs f32"), 4u);
  EXPECT_EQ(occurrences(text, "wgmma n"), 4u);
  EXPECT_THAT(text, HasSubstr("storage register f32[144]"));
  // 256 threads: 8 A and 4 B copies each, in the prologue's two tiles and the refill.
  EXPECT_EQ(occurrences(text, "copy_async"), 3u * (8u + 4u));
  // 3 stages of A (32 KiB) and B (16 KiB).
  EXPECT_THAT(text, HasSubstr("storage local f32[36864]"));
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=256,bn=128,tf32=1,swap=2)", d), HasSubstr("swap must be 0 or 1"));
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=256,bn=128,stages=4,inflight=2,tf32=1,swap=1)", d),
              HasSubstr("swap=1 keeps at most one WGMMA group in flight"));
  // With one group in flight: two fragment sets, the loop two steps an
  // iteration (8 WGMMAs, each set's register indices constant).
  const std::string two = ir::print(applied(f32.kernel, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1,swap=1)", d));
  EXPECT_THAT(two, HasSubstr("storage register f32[160]"));
  EXPECT_EQ(occurrences(two, "wgmma n256 a_regs f32"), 8u);
  EXPECT_EQ(occurrences(two, "wgmma_wait 1"), 2u);
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=256,bn=128,inflight=0,tf32=1,b_vec=2,swap=1)", d),
              HasSubstr("swap=1 is tf32's other B staging"));
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 64, .n = 64, .k = 64}, ir::DType::F16).kernel,
                                 "wgmma_staged(bm=64,bn=64,inflight=0,swap=1)", d),
              HasSubstr("swap=1 is tf32's other B staging"));
  // An H200's registers (255 a thread at 256 threads, 128 at 512): 128 x
  // 256 (512 threads) holds 64 accumulators and one fragment set, not two.
  DeviceInfo h200 = d;
  h200.register_bytes = 256, h200.max_local_threads = 1024;
  applied(f32.kernel, "wgmma_staged(bm=128,bn=256,stages=4,inflight=0,tf32=1,swap=1)", h200);
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=128,bn=256,stages=4,inflight=1,tf32=1,swap=1)", h200),
              HasSubstr("REGISTER bytes per thread"));
  applied(f32.kernel, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1,swap=1)", h200);
  // A device without A from registers is never given the form.
  DeviceInfo without = d;
  without.features[KILN_FEATURE_WORD(KILN_FEATURE_WGMMA_TF32_A_REGISTERS)] &= ~KILN_FEATURE_MASK(KILN_FEATURE_WGMMA_TF32_A_REGISTERS);
  EXPECT_THAT(step_error_message(f32.kernel, "wgmma_staged(bm=256,bn=128,inflight=0,tf32=1,swap=1)", without),
              HasSubstr("does not run the tf32 wgmma with A from registers"));
}

// A kernel of one k step, through the whole lowering pipeline as the tuner
// and `kiln run --opt` compile it (the always-on passes remove its unit
// loop): the accumulators the WGMMAs write reach C, not the zeros they were
// set to (fold_accumulators once forwarded those; the H200 stored zeros).
TEST(WgmmaStaged, OneStepKernelsThroughThePipelineMatchTheUntunedKernel) {
  const DeviceInfo* info = mma_device_info(true, true);
  ASSERT_NE(info, nullptr);
  const Device device = mma_runtime()->device(info->id).value();
  struct Case {
    kernels::KernelSize size;
    ir::DType dtype;
    std::string_view step;
    double tolerance;
  };
  const Case cases[] = {
      {{.m = 64, .n = 64, .k = 64}, ir::DType::F16, "wgmma_staged(bm=64,bn=64,stages=2,inflight=0)", 0},
      {{.m = 72, .n = 92, .k = 20}, ir::DType::F32, "wgmma_staged(bm=64,bn=64,stages=3,inflight=1,tf32=1)", 1e-2},
      {{.m = 130, .n = 260, .k = 36}, ir::DType::F32, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1,swap=1)", 1e-2},
      {{.m = 33, .n = 36, .k = 20}, ir::DType::F32, "wgmma_staged(bm=64,bn=64,stages=2,inflight=0,tf32=1,swap=1)", 1e-2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(case_name(c.size, c.dtype, c.step));
    const kernels::StandardKernel k = standard("matmul", c.size, c.dtype);
    const auto lowered = optimize(k.kernel, parse_sequence(c.step).value(), *info);
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    EXPECT_EQ(compare_outcomes(run_on_interpreter(k.kernel, k.args, 9), run_on_device(device, *lowered, k.args, 9), c.tolerance), "");
  }
}
