// simt_staged: exact f32 matrix products on FMAs in warp tiles, A and B
// staged through double-buffered LOCAL tiles. The rewritten kernels run on
// the dummy device (the reference interpreter behind the plugin ABI, shaped
// as a GPU) and must give the untuned kernel's outputs bit for bit, odd
// shapes included.
#include "passes/mma_support.hpp"

#include "kiln/ir/dtype.hpp"
#include "kiln/passes/bounds.hpp"

#include <gmock/gmock.h>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const Optimization& simt_staged() { return *find_optimization("simt_staged"); }

std::string case_name(std::string_view kernel, const kernels::KernelSize& size, std::string_view step) {
  return std::string(kernel) + " " + std::to_string(size.m) + "x" + std::to_string(size.n) + "x" + std::to_string(size.k) +
         " " + std::string(step);
}

}  // namespace

TEST(SimtStaged, MatchesTheUntunedKernelExactlyOnTheDummy) {
  struct Case {
    std::string_view kernel;
    kernels::KernelSize size;
    std::string_view step;
  };
  const Case cases[] = {
      // The recipe's shape: 8 warps of 32 x 64, 8 x 8 per lane, 16-byte copies, two stages.
      {"matmul", {.m = 128, .n = 256, .k = 24}, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8)"},
      {"matmul", {.m = 256, .n = 128, .k = 32}, "simt_staged(bm=128,bn=128,bk=16,wm=2,wn=4,tm=8,tn=8)"},
      // 4 warps of 64 x 64, 8 x 16 a lane (cuBLAS's SIMT shape: 128 accumulators a thread).
      {"matmul", {.m = 128, .n = 128, .k = 16}, "simt_staged(bm=128,bn=128,bk=8,wm=2,wn=2,tm=8,tn=16)"},
      {"matmul", {.m = 130, .n = 127, .k = 9}, "simt_staged(bm=128,bn=128,bk=8,wm=2,wn=2,tm=16,tn=8)"},
      {"matmul", {.m = 128, .n = 64, .k = 32}, "simt_staged(bm=128,bn=64,bk=8,wm=4,wn=1,tm=8,tn=8,stages=1)"},
      {"matmul", {.m = 64, .n = 64, .k = 16}, "simt_staged(bm=64,bn=64,bk=8,wm=2,wn=2,tm=8,tn=4)"},
      {"matmul", {.m = 32, .n = 64, .k = 12}, "simt_staged(bm=32,bn=64,bk=4,wm=1,wn=1,tm=8,tn=8)"},
      // Every side guarded; K a multiple of 4 keeps A's vector copies, N = 33 makes B's and C's scalar.
      {"matmul", {.m = 65, .n = 33, .k = 44}, "simt_staged(bm=64,bn=64,bk=16,wm=2,wn=2,tm=8,tn=4)"},
      // Nothing a multiple of 4: scalar copies and stores, every side guarded.
      {"matmul", {.m = 37, .n = 41, .k = 23}, "simt_staged(bm=32,bn=32,bk=8,wm=1,wn=2,tm=4,tn=4)"},
      {"matmul", {.m = 100, .n = 99, .k = 101}, "simt_staged(bm=64,bn=64,bk=8,wm=2,wn=2,tm=8,tn=4,stages=1)"},
      {"matmul", {.m = 1, .n = 1, .k = 1}, "simt_staged(bm=32,bn=32,bk=4,wm=1,wn=1,tm=8,tn=4)"},
      // A skinny product: 16 rows, one partial block along m.
      {"matmul", {.m = 16, .n = 128, .k = 64}, "simt_staged(bm=32,bn=64,bk=8,wm=1,wn=2,tm=4,tn=8)"},
      // B k-fastest (transposed into [k][n] on its way in).
      {"matmul-bt", {.m = 64, .n = 64, .k = 32}, "simt_staged(bm=64,bn=64,bk=8,wm=2,wn=2,tm=8,tn=4)"},
      {"matmul-bt", {.m = 48, .n = 40, .k = 37}, "simt_staged(bm=32,bn=32,bk=8,wm=1,wn=2,tm=4,tn=4)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(case_name(c.kernel, c.size, c.step));
    EXPECT_EQ(differs_on_dummy(standard(c.kernel, c.size), c.step), "");
  }
}

// With asynchronous copies (the dummy with "copy_async": true, as the CUDA
// plugin on sm_80+): A's tile [row][k], 2 to 4 buffers filled by
// copy_async, one barrier per step, zeros past the edges (the copies' zero
// fill); bit for bit the untuned kernel.
TEST(SimtStaged, AsyncCopiesMatchTheUntunedKernelExactlyOnTheDummy) {
  struct Case {
    kernels::KernelSize size;
    std::string_view step;
  };
  const Case cases[] = {
      {{.m = 128, .n = 128, .k = 32}, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8,stages=3,async=1)"},
      {{.m = 128, .n = 128, .k = 64}, "simt_staged(bm=128,bn=128,bk=16,wm=2,wn=4,tm=8,tn=8,stages=2,async=1)"},
      {{.m = 64, .n = 128, .k = 40}, "simt_staged(bm=64,bn=128,bk=8,wm=2,wn=2,tm=8,tn=8,stages=4,async=1)"},  // 5 steps, 4 buffers
      {{.m = 32, .n = 64, .k = 8}, "simt_staged(bm=32,bn=64,bk=8,wm=1,wn=1,tm=8,tn=8,stages=4,async=1)"},     // one step: two empty groups
      // Every side guarded, in whole 16-byte chunks (M, N, K multiples of 4).
      {{.m = 68, .n = 36, .k = 44}, "simt_staged(bm=64,bn=64,bk=16,wm=2,wn=2,tm=8,tn=4,stages=3,async=1)"},
      {{.m = 20, .n = 100, .k = 12}, "simt_staged(bm=32,bn=32,bk=8,wm=1,wn=1,tm=4,tn=8,stages=2,async=1)"},
      {{.m = 132, .n = 128, .k = 24}, "simt_staged(bm=128,bn=128,bk=8,wm=2,wn=2,tm=8,tn=16,stages=3,async=1)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(case_name("matmul", c.size, c.step));
    EXPECT_EQ(differs_on_dummy(standard("matmul", c.size), c.step, 0, 5, true), "");
  }
  const DeviceInfo* info = mma_device_info(true);
  ASSERT_NE(info, nullptr);
  const std::string printed = ir::print(applied(standard("matmul", {.m = 256, .n = 256, .k = 64}).kernel,
                                                "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8,stages=3,async=1)", *info));
  EXPECT_THAT(printed, HasSubstr("copy_async f32x4 %"));
  EXPECT_THAT(printed, HasSubstr("  copy_wait 1\n  barrier\n"));
  EXPECT_THAT(printed, HasSubstr("storage local f32[4608]"));  // A: 3 stages of 128 rows of 8 + 4
  EXPECT_THAT(printed, HasSubstr("storage local f32[3168]"));  // B: 3 stages of 8 k rows of 128 + 4
  // The transposed-B product and ragged k have no 16-byte chunks to copy.
  EXPECT_THAT(step_error_message(standard("matmul-bt", {.m = 64, .n = 64, .k = 32}).kernel,
                                 "simt_staged(bm=64,bn=64,bk=8,wm=2,wn=2,tm=8,tn=4,async=1)", *info),
              HasSubstr("async copies move 16-byte chunks"));
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 64, .n = 64, .k = 30}).kernel,
                                 "simt_staged(bm=64,bn=64,bk=8,wm=2,wn=2,tm=8,tn=4,async=1)", *info),
              HasSubstr("async copies move 16-byte chunks"));
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 64, .n = 64, .k = 32}).kernel,
                                 "simt_staged(bm=64,bn=64,bk=8,wm=2,wn=2,tm=8,tn=4,async=1)", gpu_preset()),
              HasSubstr("async=1 needs a device with asynchronous copies"));
}

// Past the matrix the loads read a clamped row, column or k (their values
// SELECTed away) and C's stores sit under IFs the analysis reads: every
// access of a guarded kernel is proved in range, so Device::compile's bounds
// policy adds nothing to what the tuner measured.
TEST(SimtStaged, GuardedKernelsAreProvedInRange) {
  const DeviceInfo* async = mma_device_info(true);
  ASSERT_NE(async, nullptr);
  struct Case {
    kernels::KernelSize size;
    std::string_view step;
  };
  const Case cases[] = {
      {{.m = 100, .n = 99, .k = 101}, "simt_staged(bm=64,bn=64,bk=8,wm=2,wn=2,tm=8,tn=4)"},
      {{.m = 68, .n = 36, .k = 44}, "simt_staged(bm=64,bn=64,bk=16,wm=2,wn=2,tm=8,tn=4)"},
      {{.m = 68, .n = 36, .k = 44}, "simt_staged(bm=64,bn=64,bk=16,wm=2,wn=2,tm=8,tn=4,stages=3,async=1)"},
      {{.m = 16, .n = 32, .k = 8}, "simt_staged(bm=128,bn=128,bk=8,wm=2,wn=2,tm=8,tn=16,stages=3,async=1)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(case_name("matmul", c.size, c.step));
    const Result<ir::Kernel> lowered = optimize(standard("matmul", c.size).kernel, parse_sequence(c.step).value(), *async);
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    for (const AccessBounds& a : classify_accesses(*lowered))
      EXPECT_EQ(a.verdict, AccessVerdict::InRange) << describe_access(*lowered, a);
  }
}

TEST(SimtStaged, TheRecipeReadsLocalTilesInSixteenByteVectors) {
  const kernels::StandardKernel k = standard("matmul", {.m = 256, .n = 256, .k = 64});
  const std::string printed =
      ir::print(applied(k.kernel, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8)", gpu_preset()));
  // Two stages of A and B, 8 k rows of 128 + 4 elements each.
  EXPECT_THAT(printed, HasSubstr("storage local f32[2112]"));
  EXPECT_THAT(printed, HasSubstr("storage register f32[64]"));
  EXPECT_THAT(printed, HasSubstr("load f32x4 %1["));  // 16-byte global copies (A is %0, B %1)
  EXPECT_THAT(printed, HasSubstr("mad f32x4 "));      // 4 FMAs of one A value and 4 B values
  // One barrier per k step, and the one before the loop.
  std::size_t barriers = 0;
  for (std::size_t at = printed.find("barrier"); at != std::string::npos; at = printed.find("barrier", at + 1)) ++barriers;
  EXPECT_EQ(barriers, 2u) << printed;
}

TEST(SimtStaged, ConfigsFitTheDeviceAndMatch) {
  const kernels::StandardKernel big = standard("matmul", {.m = 512, .n = 512, .k = 256});
  const std::vector<std::string> configs = config_texts(simt_staged(), big.kernel, gpu_preset());
  ASSERT_FALSE(configs.empty());
  EXPECT_EQ(configs.front(), "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8,stages=1)");
  EXPECT_LE(configs.size(), 40u);
  for (const std::string& step : configs) EXPECT_TRUE(apply_sequence(big.kernel, parse_sequence(step).value(), gpu_preset()).ok()) << step;
  EXPECT_TRUE(simt_staged().configs(big.kernel, cpu_preset()).empty());  // one thread per group
  EXPECT_TRUE(simt_staged().configs(standard("matmul", {.m = 64, .n = 64, .k = 64}, ir::DType::F16).kernel, gpu_preset()).empty());
  // Every config of an odd shape matches on the dummy.
  const kernels::StandardKernel odd = standard("matmul", {.m = 33, .n = 70, .k = 19});
  const DeviceInfo* info = mma_device_info();
  ASSERT_NE(info, nullptr);
  const std::vector<std::string> small = config_texts(simt_staged(), odd.kernel, *info);
  ASSERT_FALSE(small.empty());
  for (const std::string& step : small) {
    SCOPED_TRACE(step);
    EXPECT_EQ(differs_on_dummy(odd, step, 0, 9), "");
  }
}

TEST(SimtStaged, RefusesWhatDoesNotFit) {
  const kernels::StandardKernel k = standard("matmul", {.m = 128, .n = 128, .k = 64});
  const DeviceInfo gpu = gpu_preset();
  EXPECT_THAT(step_error_message(k.kernel, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8,unroll=2)", gpu),
              HasSubstr("unknown parameter 'unroll'"));
  EXPECT_THAT(step_error_message(k.kernel, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8)", gpu), HasSubstr("missing parameter 'tn'"));
  EXPECT_THAT(step_error_message(k.kernel, "simt_staged(bm=128,bn=128,bk=12,wm=4,wn=2,tm=8,tn=8)", gpu), HasSubstr("bk must be"));
  EXPECT_THAT(step_error_message(k.kernel, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8,stages=3)", gpu),
              HasSubstr("stages must be 1 or 2"));
  EXPECT_THAT(step_error_message(k.kernel, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8,async=2)", gpu),
              HasSubstr("async must be 0 or 1"));
  EXPECT_THAT(step_error_message(k.kernel, "simt_staged(bm=128,bn=128,bk=8,wm=2,wn=2,tm=8,tn=8)", gpu),
              HasSubstr("32 lanes' tiles"));
  EXPECT_THAT(step_error_message(k.kernel, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=6,tn=8)", gpu), HasSubstr("tm must be"));
  DeviceInfo narrow = gpu;
  narrow.max_local_threads = 128;
  EXPECT_THAT(step_error_message(k.kernel, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8)", narrow),
              HasSubstr("threads per group exceed"));
  EXPECT_THAT(step_error_message(k.kernel, "simt_staged(bm=64,bn=64,bk=8,wm=4,wn=2,tm=4,tn=4)", gpu),
              HasSubstr("do not divide the tile copies"));
  EXPECT_THAT(step_error_message(k.kernel, "simt_staged(bm=64,bn=64,bk=8,wm=2,wn=2,tm=8,tn=4)", small_preset()),
              HasSubstr("no 4-lane vectors"));
  EXPECT_THAT(step_error_message(standard("matmul", {.m = 64, .n = 64, .k = 64}, ir::DType::F16).kernel,
                                 "simt_staged(bm=64,bn=64,bk=8,wm=2,wn=2,tm=4,tn=4)", gpu),
              HasSubstr("simt_staged takes f32"));
  EXPECT_THAT(step_error_message(standard("sum-rows", {.m = 64, .n = 64}).kernel, "simt_staged(bm=64,bn=64,bk=8,wm=2,wn=2,tm=4,tn=4)", gpu),
              HasSubstr("not a matrix product"));
}
