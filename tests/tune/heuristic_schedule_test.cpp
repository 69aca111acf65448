// The schedule a kernel gets without tuning (kiln/tune/heuristic.hpp): it
// uses a GPU's threads, fits ragged lengths, takes the matrix recipe where
// one applies, and computes what the kernel given computes (interpreter).
#include <gtest/gtest.h>

#include "kiln/ir/dtype.hpp"
#include "kiln/kernels/library.hpp"
#include "kiln/passes/device_presets.hpp"
#include "kiln/passes/optimization.hpp"
#include "kiln/tune/heuristic.hpp"
#include "passes/pass_test_support.hpp"

#include <string>
#include <string_view>
#include <tuple>
#include <utility>

using namespace kiln;

namespace {

bool has_local_threads(const ir::Kernel& kernel) {
  for (const ir::Op& op : kernel.ops)
    if (op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Local) return true;
  return false;
}

// A CPU device with groups of `threads` work-items run as SIMD subgroups
// of `warp` (lavapipe: 8; PoCL's pthread device: 1, one after another).
DeviceInfo cpu_with_groups(std::uint32_t warp, std::uint32_t threads, std::uint64_t local_bytes) {
  DeviceInfo d = passes::cpu_preset();
  d.kind = DeviceKind::Cpu;
  d.warp_size = warp;
  d.max_local_threads = threads;
  d.max_local_dims = {threads, threads, threads};
  d.local_memory_bytes = local_bytes;
  return d;
}

bool barriers(const ir::Kernel& kernel) {
  for (const ir::Op& op : kernel.ops)
    if (op.kind == ir::OpKind::Barrier) return true;
  return false;
}

kernels::StandardKernel standard(const std::string& name, kernels::KernelSize size, ir::DType dtype = ir::DType::F32) {
  Result<kernels::StandardKernel> kernel = kernels::make_standard_kernel(name, size, dtype);
  EXPECT_TRUE(kernel.ok()) << kernel.error().to_string();
  return std::move(kernel).value();
}

// The heuristic kernel gives the untuned kernel's outputs on the interpreter
// (the untuned kernel as lowered for the device: exp may become exp2 there).
void expect_same_results(const kernels::StandardKernel& k, const tune::HeuristicSchedule& h, const DeviceInfo& device,
                         double tolerance) {
  Result<ir::Kernel> untuned = passes::optimize(k.kernel, {}, device);
  ASSERT_TRUE(untuned.ok()) << untuned.error().to_string();
  const auto want = passes::test::run_on_interpreter(*untuned, k.args, 11);
  const auto got = passes::test::run_on_interpreter(h.lowered, k.args, 11);
  EXPECT_EQ(passes::test::compare_outcomes(want, got, tolerance), "") << passes::to_string(h.sequence);
}

}  // namespace

TEST(HeuristicSchedule, GivesARaggedElementwiseKernelThreadsOnAGpu) {
  const auto k = standard("exp-chain", {.n = 100003});
  Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::gpu_preset());
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  EXPECT_TRUE(has_local_threads(h->lowered)) << passes::to_string(h->sequence);
  EXPECT_EQ(h->sequence.front().opt, "pad") << passes::to_string(h->sequence);
  EXPECT_GT(h->considered, 2u);
  expect_same_results(k, *h, passes::gpu_preset(), 0);
}

TEST(HeuristicSchedule, TakesTheMatrixRecipeOnAGpu) {
  const auto k = standard("matmul", {.m = 256, .n = 256, .k = 256});
  Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::gpu_preset());
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  ASSERT_FALSE(h->sequence.empty());
  // f32: the warp-tiled, double-buffered SIMT kernel (simt_staged), exact.
  EXPECT_EQ(h->sequence.front().opt, "simt_staged") << passes::to_string(h->sequence);
  expect_same_results(k, *h, passes::gpu_preset(), 0);
}

namespace {

bool has_step(const passes::OptSequence& sequence, std::string_view text) {
  return passes::to_string(sequence).find(text) != std::string::npos;
}

}  // namespace

// On preset:h200 (what the CUDA plugin reports for an H200): untuned, the f32 matmul
// takes one of what measured best there (docs/passes.md, simt_staged:
// 2026-12-03): at 4096^3 4 warps of 64 x 64 with 8 x 16 a lane in k steps of
// 16 (46.8 TFLOP/s, the best 47.3, against 41.2 for the 8 x 8 kernel the cost
// model took when it counted 8 x 16's accumulators as spills), at 1024^3
// 64 x 64 blocks (one 128 x 128 block per unit leaves half of them idle).
TEST(HeuristicSchedule, TakesTheMeasuredF32MatmulOnAnH200ShapedGpu) {
  const DeviceInfo h200 = passes::h200_preset();
  const std::pair<std::int64_t, std::string_view> cases[] = {
      {4096, "simt_staged(bm=128,bn=128,bk=16,wm=2,wn=2,tm=8,tn=16)"},
      {1024, "simt_staged(bm=64,bn=64,bk=16,wm=2,wn=2,tm=8,tn=4)"},
  };
  for (const auto& [n, want] : cases) {
    const auto k = standard("matmul", {.m = n, .n = n, .k = n});
    Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, h200);
    ASSERT_TRUE(h.ok()) << h.error().to_string();
    EXPECT_EQ(passes::to_string(h->sequence), want) << n;
  }
}

// A transpose on a GPU: threads along the output's contiguous axis, each
// reading a vector of the input's (not one element per sector and row).
TEST(HeuristicSchedule, GivesATransposeVectorReadsOnAGpu) {
  const auto k = standard("transpose", {.m = 512, .n = 256});
  Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::gpu_preset());
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  EXPECT_TRUE(has_local_threads(h->lowered)) << passes::to_string(h->sequence);
  bool vector_load = false;
  for (const ir::Op& op : h->lowered.ops) vector_load = vector_load || (op.kind == ir::OpKind::Load && op.lanes > 1);
  EXPECT_TRUE(vector_load) << passes::to_string(h->sequence);
  expect_same_results(k, *h, passes::gpu_preset(), 0);
}

// A transpose on a CPU: where axis 0 (the input's row) divides by 16, each
// work-item writes a 64-byte output line from 16 input rows, the work-items
// ordered along axis 1 (on a 2-core Xeon, 2048^2 f32: 25.6 GB/s against 12.9
// for 8 x 8 blocks); else the 8 x 8 blocks.
TEST(HeuristicSchedule, GivesATransposeWholeLinesOnACpu) {
  for (const std::int64_t n : {2048, 1000}) {
    SCOPED_TRACE(n);
    const auto k = standard("transpose", {.m = n, .n = 512});
    Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::cpu_preset());
    ASSERT_TRUE(h.ok()) << h.error().to_string();
    EXPECT_EQ(passes::to_string(h->sequence), n == 2048 ? "coarsen(axis=0,factor=16,mode=0); swap_axes(a=0,b=1)"
                                                        : "coarsen(axis=0,factor=8,mode=0); coarsen(axis=1,factor=8,mode=0)");
    expect_same_results(k, *h, passes::cpu_preset(), 0);
  }
}

TEST(HeuristicSchedule, VectorizesElementwiseKernelsOnACpu) {
  const auto k = standard("add", {.n = 4096});
  Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::cpu_preset());
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  EXPECT_FALSE(has_local_threads(h->lowered));
  EXPECT_NE(passes::to_string(h->sequence).find("vectorize"), std::string::npos) << passes::to_string(h->sequence);
  expect_same_results(k, *h, passes::cpu_preset(), 0);
}

// Elementwise kernels on a CPU that prefetches (the C plugin): blocks of 1024
// a work-item, the next block prefetched. With streaming stores a Xeon's own
// prefetch of the inputs fell behind (2^26 f16 exp-chain: 32.1 against 10.6
// GB/s for one vector a work-item). A CPU that claims no PREFETCH (PoCL)
// keeps one vector a work-item.
TEST(HeuristicSchedule, ElementwiseKernelsOnACpuPrefetchTheNextBlock) {
  for (const char* name : {"add", "exp-chain"})
    for (ir::DType dtype : {ir::DType::F32, ir::DType::F16}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)));
      const auto k = standard(name, {.n = 1 << 16}, dtype);
      Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::cpu_preset());
      ASSERT_TRUE(h.ok()) << h.error().to_string();
      EXPECT_TRUE(has_step(h->sequence, "coarsen(axis=0,factor=1024,mode=0)")) << passes::to_string(h->sequence);
      EXPECT_TRUE(has_step(h->sequence, "prefetch_rows(loop=0,distance=1)")) << passes::to_string(h->sequence);
      expect_same_results(k, *h, passes::cpu_preset(), 1e-6);
    }
  DeviceInfo no_prefetch = passes::cpu_preset();
  no_prefetch.op_kind_dtypes[KILN_OP_PREFETCH] = 0;
  Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(standard("exp-chain", {.n = 1 << 16}).kernel, no_prefetch);
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  EXPECT_FALSE(has_step(h->sequence, "prefetch_rows")) << passes::to_string(h->sequence);
  EXPECT_TRUE(has_step(h->sequence, "vectorize(lanes=16)")) << passes::to_string(h->sequence);
}

// Rows of odd length on a CPU (preset:cpu claims vector accesses at any
// element index, as the C plugin does): the untuned pick vectorizes them,
// with a split writing loop whose rest runs in a loop of its own, and keeps
// the results. On c:0 at 1024 x 50257 f16 that took the untuned softmax from
// 0.29 to 16.5 GB/s, layernorm from 1.26 to 29.1, rmsnorm from 1.14 to 24.0
// (docs/passes.md, "CPU figures").
TEST(HeuristicSchedule, VectorizesRowsOfOddLengthOnACpu) {
  for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"})
    for (ir::DType dtype : {ir::DType::F32, ir::DType::F16}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)));
      const auto k = standard(name, {.m = 6, .n = 1001}, dtype);
      Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::cpu_preset());
      ASSERT_TRUE(h.ok()) << h.error().to_string();
      const std::string sequence = passes::to_string(h->sequence);
      // The row's vectors on split_aligned's aligned blocks (stores that may
      // stream), rather than at any index (each line read before written).
      EXPECT_NE(sequence.find("flat=1"), std::string::npos) << sequence;
      // Softmax's next row prefetched under its exponentials (the model prices
      // both twins alike; on c:0 the prefetched one ran 15-17% faster).
      if (std::string(name) == "softmax-rows") {
        EXPECT_TRUE(has_step(h->sequence, "prefetch_rows")) << sequence;
      }
      const std::string printed = ir::print(h->lowered);
      EXPECT_NE(printed.find("store " + std::string(ir::dtype_name(dtype)) + "x16"), std::string::npos) << sequence;
      EXPECT_EQ(printed.find("store unaligned"), std::string::npos) << sequence;
      expect_same_results(k, *h, passes::cpu_preset(), std::max(1e-4, 16 * k.tolerance));  // sums reassociated
    }
}

// Softmax on a CPU at an aligned n, where rows cannot be pipelined (10 rows:
// neither 8 nor 4 divides them): the next row prefetched under the exps, and no
// row of its own kept for the sum loop, neither an f32 row the caches still
// hold (on c:0, 2026-12-06: 21.0 ms kept against 15.1 ms) nor, since search
// space 27, a widened 16-bit one (the slowest recipe on a Xeon).
TEST(HeuristicSchedule, CpuSoftmaxKeepsNoRowOfItsOwn) {
  for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
    SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
    const auto k = standard("softmax-rows", {.m = 10, .n = 1024}, dtype);
    Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::cpu_preset());
    ASSERT_TRUE(h.ok()) << h.error().to_string();
    const std::string sequence = passes::to_string(h->sequence);
    EXPECT_TRUE(has_step(h->sequence, "prefetch_rows")) << sequence;
    EXPECT_FALSE(has_step(h->sequence, "row_cache(loop=0")) << sequence;
    EXPECT_FALSE(has_step(h->sequence, "pipeline_rows")) << sequence;
    expect_same_results(k, *h, passes::cpu_preset(), std::max(1e-4, 16 * k.tolerance));
  }
}

// Softmax's max on a CPU in two vector accumulators (32 lane partials) where
// the recipe keeps no widened row: vmaxps has 4 cycles of latency on a Xeon,
// and with one accumulator the max loop of a cached row ran at that chain's
// pace (2026-12-06, 4096 x 16384 f16: 20.4-20.7 against 22.6-22.9 GB/s). At an
// aligned n and on rows of odd length alike; at an odd multiple of 16 (272)
// the recipes with one accumulator still vectorize the row.
TEST(HeuristicSchedule, CpuSoftmaxTakesItsMaxInTwoAccumulators) {
  for (std::int64_t n : {1024, 50257, 272}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto k = standard("softmax-rows", {.m = 4, .n = n});
    Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::cpu_preset());
    ASSERT_TRUE(h.ok()) << h.error().to_string();
    const std::string sequence = passes::to_string(h->sequence);
    EXPECT_EQ(sequence.find("lanes=32)") != std::string::npos, n != 272) << sequence;
    EXPECT_TRUE(has_step(h->sequence, "vectorize(lanes=16)")) << sequence;
    expect_same_results(k, *h, passes::cpu_preset(), std::max(1e-4, 16 * k.tolerance));
  }
}

// The norms on a CPU: the next row prefetched under the writing loop at an
// aligned n (c:0, 4096 x 16384: faster in five of six tunings), not on rows
// of odd length (the plain blocks won five of six at 1024 x 50257).
TEST(HeuristicSchedule, CpuNormsPrefetchTheNextRowAtAlignedLengths) {
  for (const char* name : {"layernorm-rows", "rmsnorm-rows"})
    for (std::int64_t n : {1024, 1001}) {
      SCOPED_TRACE(std::string(name) + " n = " + std::to_string(n));
      const auto k = standard(name, {.m = 8, .n = n}, ir::DType::F16);
      Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::cpu_preset());
      ASSERT_TRUE(h.ok()) << h.error().to_string();
      const std::string sequence = passes::to_string(h->sequence);
      EXPECT_EQ(has_step(h->sequence, "prefetch_rows"), n == 1024) << sequence;
    }
}

// Rows pipelined on a CPU (pipeline_rows, eight rows a work-item, or four
// where 4 divides the rows and 8 does not, or eight with the last row
// repeated in place of those past m, coarsen mode 2, where 4 does not either
// and the repeats cost under 5%: kPipelineDiscount): softmax and the norms in
// every dtype, at an aligned n and on rows of odd length (split_aligned's
// blocks); 42 rows (6 of 48 repeated) stay unpipelined.
TEST(HeuristicSchedule, CpuRowsArePipelinedWhereThatPays) {
  for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"})
    for (const ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16})
      for (const auto& [m, n] :
           {std::pair<std::int64_t, std::int64_t>{256, 1024}, {252, 1024}, {250, 1024}, {42, 1024}, {256, 1001}}) {
        SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)) + " " + std::to_string(m) + " x " +
                     std::to_string(n));
        const auto k = standard(name, {.m = m, .n = n}, dtype);
        Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::cpu_preset());
        ASSERT_TRUE(h.ok()) << h.error().to_string();
        const bool pipelined = m != 42;
        EXPECT_EQ(has_step(h->sequence, "pipeline_rows"), pipelined) << passes::to_string(h->sequence);
        if (pipelined) {
          EXPECT_TRUE(has_step(h->sequence, m % 8 != 0 && m % 4 == 0 ? "coarsen(axis=0,factor=4" : "coarsen(axis=0,factor=8"))
              << passes::to_string(h->sequence);
          EXPECT_FALSE(has_step(h->sequence, "pad(")) << passes::to_string(h->sequence);
          expect_same_results(k, *h, passes::cpu_preset(), std::max(1e-4, 16 * k.tolerance));
        }
      }
}

// A row reduction alone (sum-rows, max-rows) on a CPU: 32 lane partials in
// two vector accumulators over the row, in every dtype. Before, 16-bit sums
// took the elementwise recipe (16 rows a work-item: each vector a gather
// across rows) and f32 ones scalar lane partials: on c:0, 2048^2, f16 sum
// 2.3 ms against 0.12 ms, f32 max 0.29 ms against 0.09 ms. Only where the
// device claims PREFETCH (the C plugin; PoCL's 16-wide vectors ran slower
// than its scalar lane partials).
TEST(HeuristicSchedule, RowReductionsOnACpuKeepTwoVectorAccumulators) {
  for (const char* name : {"sum-rows", "max-rows"})
    for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)));
      const auto k = standard(name, {.m = 32, .n = 2048}, dtype);
      Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::cpu_preset());
      ASSERT_TRUE(h.ok()) << h.error().to_string();
      EXPECT_EQ(passes::to_string(h->sequence),
                "lane_reduce(loop=0,lanes=32); vectorize(lanes=16); prefetch_rows(loop=0,distance=1)");
      const std::string printed = ir::print(h->lowered);
      EXPECT_NE(printed.find("load " + std::string(ir::dtype_name(dtype)) + "x16"), std::string::npos) << printed;
      expect_same_results(k, *h, passes::cpu_preset(), std::max(1e-5, 16 * k.tolerance));  // sums reassociated
    }
  // A CPU that claims no PREFETCH (PoCL) keeps scalar lane partials.
  DeviceInfo no_prefetch = passes::cpu_preset();
  no_prefetch.op_kind_dtypes[KILN_OP_PREFETCH] = 0;
  const auto k = standard("sum-rows", {.m = 32, .n = 2048});
  Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, no_prefetch);
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  EXPECT_FALSE(has_step(h->sequence, "vectorize")) << passes::to_string(h->sequence);
}

TEST(HeuristicSchedule, KeepsRowKernelsRightOnEveryPreset) {
  for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows", "sum-rows", "transpose"})
    for (const DeviceInfo& device : {passes::gpu_preset(), passes::small_preset(), passes::cpu_preset()}) {
      SCOPED_TRACE(std::string(name) + " on " + device.id);
      const auto k = standard(name, {.m = 24, .n = 1000});
      Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, device);
      ASSERT_TRUE(h.ok()) << h.error().to_string();
      if (device.max_local_threads > 1) {
        EXPECT_TRUE(has_local_threads(h->lowered)) << passes::to_string(h->sequence);
      }
      expect_same_results(k, *h, device, 1e-5);
    }
}

// Short rows on an H200-shaped device (warp shuffles, 8-lane vectors): one
// warp per row, each warp doing two rows (coarsen; on the H200 0.89x of add
// against 0.73x for softmax at n = 768 in f16), whatever the row count: an
// odd one repeats the last row in the last warp (coarsen mode 2), priced a
// row dearer, which the heuristic's tie precision absorbs.
TEST(HeuristicSchedule, ShortRowsOnAGpuTakeTwoRowsAWarp) {
  DeviceInfo h200 = passes::gpu_preset();
  h200.register_bytes = 256;
  for (unsigned lanes : {3u, 8u, 16u}) h200.vector_width_mask |= 1u << lanes;
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt)
    if (dt != KILN_DTYPE_BOOL) h200.op_kind_dtypes[KILN_OP_SUBGROUP_REDUCE] |= KILN_DTYPE_BIT(dt);
  for (const char* name : {"softmax-rows", "rmsnorm-rows"})
    for (const std::int64_t m : {2048, 2047}) {
      SCOPED_TRACE(std::string(name) + " m=" + std::to_string(m));
      const auto k = standard(name, {.m = m, .n = 768}, ir::DType::F16);
      Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, h200);
      ASSERT_TRUE(h.ok()) << h.error().to_string();
      const std::string text = passes::to_string(h->sequence);
      EXPECT_NE(text.find("local=32"), std::string::npos) << text;
      EXPECT_NE(text.find("coarsen(axis=0,factor=2,mode=2)"), std::string::npos) << text;
      expect_same_results(k, *h, h200, 1e-3);
    }
}


// Rows of n = 50257 in f16 on the H200 (m = 5342, 2^28 elements): the
// register-cached row at 1024 threads holds one group per SM, whose loads,
// trees and writes run in turn (0.41-0.55x of add), which the cost model
// prices by its barrier phases; the untuned picks keep the row in LOCAL
// memory at 512 threads, two groups per SM, copied in asynchronously (every
// block of a thread in flight at once), which the heuristic ranks
// kAsyncCopyDiscount below the model's price: the copied rows were the H200's
// tuned winners for five of the six 16-bit rows (2026-12-06), and an H100
// ran them at 0.88-0.95x of add against 0.65-0.78x for the LOCAL rows loaded
// through registers (softmax, layernorm) and 0.71x for rmsnorm bf16's row in
// registers, which spills. Without the copies softmax keeps its LOCAL row,
// loaded through registers. rmsnorm's weights, which start anywhere beside
// split_aligned's blocks, are one vector load a block (the CUDA plugin
// claims loads at any index).
TEST(HeuristicSchedule, LongOddRowsOnAnH200ShapedGpuAreCopiedIntoLocalMemory) {
  const DeviceInfo h200 = passes::h200_preset();
  DeviceInfo no_copies = h200;
  no_copies.op_kind_dtypes[KILN_OP_COPY_ASYNC] = 0;
  for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"}) {
    SCOPED_TRACE(name);
    const auto k = standard(name, {.m = 5342, .n = 50257}, ir::DType::F16);
    Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, h200);
    ASSERT_TRUE(h.ok()) << h.error().to_string();
    const std::string text = passes::to_string(h->sequence);
    EXPECT_TRUE(has_step(h->sequence, "local=512")) << text;
    EXPECT_TRUE(has_step(h->sequence, ",local=1)")) << text;  // row_cache into LOCAL
    EXPECT_FALSE(has_step(h->sequence, "local=1024")) << text;
    EXPECT_TRUE(has_step(h->sequence, "split_aligned(loop=0,factor=8)")) << text;
    EXPECT_TRUE(has_step(h->sequence, "async_copies()")) << text;
    if (std::string_view(name) == "softmax-rows") {
      Result<tune::HeuristicSchedule> plain = tune::heuristic_schedule(k.kernel, no_copies);
      ASSERT_TRUE(plain.ok()) << plain.error().to_string();
      EXPECT_TRUE(has_step(plain->sequence, ",local=1)")) << passes::to_string(plain->sequence);
      EXPECT_FALSE(has_step(plain->sequence, "async_copies()")) << passes::to_string(plain->sequence);
    }
    if (std::string_view(name) == "rmsnorm-rows") {
      Result<ir::Kernel> optimized = passes::optimize(k.kernel, h->sequence, h200);
      ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
      EXPECT_NE(ir::print(*optimized).find("load unaligned f16x8 %1["), std::string::npos);  // the weights
    }
  }
}

// Layernorm rows of n = 50257 in f32 on the H200: a guarded block (the 13th
// block of 4 a thread, lid + 12288 < 12563: 275 of 1024 threads) moves
// global bytes only in the threads that take it, which the cost model now
// counts (and the rolled rows' last block, k * 1024 + lid < n, alike). The
// untuned pick becomes the split_aligned blocks of 4
// at 1024 threads with 12 of them cached in registers, which measured 0.91x
// of add there (docs/passes.md, "12 aligned blocks a thread in registers"),
// not the register-cached scalar row (0.68-0.78x for the f32 rows). Its
// statistics' reduction runs the warps first (subgroup_first, one barrier):
// the twin is ranked at the tree's price and comes first, so it takes the
// tree's place (1-2 points faster on an H100); the 16-bit rows, where the
// tree's form loses to the copied LOCAL rows, keep those (the test above).
TEST(HeuristicSchedule, LongOddF32LayernormRowsOnAnH200ShapedGpuTakeTheAlignedRegisterBlocks) {
  const auto k = standard("layernorm-rows", {.m = 5342, .n = 50257});
  Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::h200_preset());
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  EXPECT_EQ(passes::to_string(h->sequence),
            "split_aligned(loop=1,factor=4); unroll(loop=3,factor=0); split_aligned(loop=0,factor=4); "
            "unroll(loop=2,factor=0); unroll(loop=0,factor=0); "
            "tiled_reduce(loop=0,local=1024,branch=4,subgroup=32,subgroup_first=1); "
            "tiled_reduce(loop=1,local=1024,branch=4); "
            "tiled_reduce(loop=2,local=1024,branch=4); tiled_reduce(loop=3,local=1024,branch=4); "
            "peel_loop(loop=2,count=12); peel_loop(loop=0,count=12); row_cache(loop=0); unroll(loop=2,factor=0); "
            "unroll(loop=0,factor=0); vectorize(lanes=4)");
}

// Softmax rows of n = 50257 in f32 on the H200: split_aligned's scalar
// loose ends (up to 3 and 5 elements a pass in blocks of 4) are read
// in every thread of the group, at the same address, which the L1 serves
// after the first warp: the cost model now moves their sectors once per
// group, not once per warp. The untuned pick becomes the split_aligned
// blocks of 4 at 1024 threads with 12 of them cached in registers, the
// recipe that measured 0.80x of add there for softmax f32 (docs/passes.md,
// "12 aligned blocks a thread in registers"), not the register-cached
// scalar row (0.68x untuned in the call of 2026-12-04 late, 0.76x by
// `--opt` earlier that day).
TEST(HeuristicSchedule, LongOddF32SoftmaxRowsOnAnH200ShapedGpuTakeTheAlignedRegisterBlocks) {
  const auto k = standard("softmax-rows", {.m = 5342, .n = 50257});
  Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::h200_preset());
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  EXPECT_EQ(passes::to_string(h->sequence),
            "reciprocal_divide(); split_aligned(loop=2,factor=4); unroll(loop=4,factor=0); "
            "split_aligned(loop=1,factor=4); unroll(loop=3,factor=0); unroll(loop=1,factor=0); "
            "split_aligned(loop=0,factor=4); unroll(loop=2,factor=0); unroll(loop=0,factor=0); "
            "tiled_reduce(loop=0,local=1024,branch=4,subgroup=32); "
            "tiled_reduce(loop=1,local=1024,branch=4,subgroup=32); tiled_reduce(loop=2,local=1024,branch=4); "
            "tiled_reduce(loop=3,local=1024,branch=4); tiled_reduce(loop=4,local=1024,branch=4); "
            "peel_loop(loop=3,count=12); peel_loop(loop=1,count=12); peel_loop(loop=0,count=12); "
            "row_cache(loop=0); unroll(loop=3,factor=0); unroll(loop=1,factor=0); unroll(loop=0,factor=0); "
            "vectorize(lanes=4)");
}

// ... while the shapes whose picks measured well keep them: softmax 16384^2
// f32 its LOCAL rows of 256 threads in blocks of 4 (several groups per SM:
// no phases to pay), layernorm 16384^2 f32 its 512-thread register-cached
// blocks (room for two groups per SM by the registers ptxas allocates).
TEST(HeuristicSchedule, RowsThatMeasuredWellOnAnH200ShapedGpuKeepTheirPicks) {
  const DeviceInfo h200 = passes::h200_preset();
  const std::tuple<const char*, std::int64_t, std::string_view> cases[] = {
      {"softmax-rows", 16384,
       "reciprocal_divide(); split_loop(loop=2,factor=4); unroll(loop=3,factor=0); split_loop(loop=1,factor=4); "
       "unroll(loop=2,factor=0); split_loop(loop=0,factor=4); unroll(loop=1,factor=0); "
       "tiled_reduce(loop=0,local=256,branch=4,subgroup=32); tiled_reduce(loop=1,local=256,branch=4,subgroup=32); "
       "tiled_reduce(loop=2,local=256,branch=4); row_cache(loop=0,local=1); vectorize(lanes=4)"},
      {"layernorm-rows", 16384,
       "split_loop(loop=1,factor=4); unroll(loop=2,factor=0); split_loop(loop=0,factor=4); unroll(loop=1,factor=0); "
       "tiled_reduce(loop=0,local=512,branch=4); tiled_reduce(loop=1,local=512,branch=4); row_cache(loop=0); "
       "unroll(loop=1,factor=0); unroll(loop=0,factor=0); vectorize(lanes=4)"},
  };
  for (const auto& [name, n, want] : cases) {
    SCOPED_TRACE(name);
    const auto k = standard(name, {.m = n, .n = n});
    Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, h200);
    ASSERT_TRUE(h.ok()) << h.error().to_string();
    EXPECT_EQ(passes::to_string(h->sequence), want);
  }
}

// lavapipe: a CPU whose groups run as SIMD subgroups of 8 that take turns at
// each barrier (the cost model prices each switch). A barrier-free row
// split the model prices lower wins there over the recipes (sum-rows 2048^2:
// 5.6-6.5 ms against 17-20 ms for tiled_reduce(local=64)); LOCAL-tiled
// matrix products keep their tiles.
TEST(HeuristicSchedule, PrefersBarrierFreeRowsWhereSubgroupsTakeTurnsAtBarriers) {
  // As lavapipe (Mesa 22.3) describes itself: no units, clock, caches or
  // peaks, so the model prices it with its defaults.
  DeviceInfo lavapipe = cpu_with_groups(8, 1024, 32 * 1024);
  lavapipe.register_bytes = 0;
  lavapipe.compute_units = 0;
  lavapipe.clock_mhz = 0;
  lavapipe.cache_bytes = {0, 0, 0};
  lavapipe.peak_gflops = 0;
  lavapipe.memory_bandwidth_gbps = 0;
  lavapipe.vector_width_mask = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4);
  const auto sum_rows = standard("sum-rows", {.m = 2048, .n = 2048});
  Result<tune::HeuristicSchedule> rows = tune::heuristic_schedule(sum_rows.kernel, lavapipe);
  ASSERT_TRUE(rows.ok()) << rows.error().to_string();
  EXPECT_FALSE(barriers(rows->lowered)) << passes::to_string(rows->sequence);
  EXPECT_TRUE(has_local_threads(rows->lowered)) << passes::to_string(rows->sequence);

  const auto matmul = standard("matmul", {.m = 256, .n = 256, .k = 256});
  Result<tune::HeuristicSchedule> tiles = tune::heuristic_schedule(matmul.kernel, lavapipe);
  ASSERT_TRUE(tiles.ok()) << tiles.error().to_string();
  // LOCAL tiles (local_tile or simt_staged: 453 and 436 ms at 1024^3 on
  // lavapipe) keep their barriers.
  EXPECT_TRUE(barriers(tiles->lowered)) << passes::to_string(tiles->sequence);

  // A GPU (the same shape, kind GPU) keeps the cost model's tree reduction.
  DeviceInfo gpu = lavapipe;
  gpu.kind = DeviceKind::Gpu;
  Result<tune::HeuristicSchedule> tree = tune::heuristic_schedule(sum_rows.kernel, gpu);
  ASSERT_TRUE(tree.ok()) << tree.error().to_string();
  EXPECT_TRUE(barriers(tree->lowered)) << passes::to_string(tree->sequence);
}

TEST(HeuristicSchedule, IsDeterministic) {
  const auto k = standard("softmax-rows", {.m = 64, .n = 4096});
  Result<tune::HeuristicSchedule> a = tune::heuristic_schedule(k.kernel, passes::gpu_preset());
  Result<tune::HeuristicSchedule> b = tune::heuristic_schedule(k.kernel, passes::gpu_preset());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(passes::to_string(a->sequence), passes::to_string(b->sequence));
  EXPECT_EQ(a->lowered, b->lowered);
}

// PoCL's pthread device: a CPU with 4096 threads per group run one after
// another (warp 1). A barrier there is a loop over the group per phase: the
// matrix product takes the register-blocked recipe, not LOCAL tiles, and a
// row kernel a barrier-free recipe; elementwise kernels keep their threads.
TEST(HeuristicSchedule, AvoidsBarriersOnACpuWhoseGroupThreadsRunOneAfterAnother) {
  DeviceInfo pocl = cpu_with_groups(1, 4096, 4u << 20);
  const auto matmul = standard("matmul", {.m = 128, .n = 128, .k = 128});
  Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(matmul.kernel, pocl);
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  ASSERT_FALSE(h->sequence.empty());
  EXPECT_EQ(h->sequence.front().opt, "register_block") << passes::to_string(h->sequence);
  EXPECT_FALSE(barriers(h->lowered));
  expect_same_results(matmul, *h, pocl, 1e-5);

  const auto softmax = standard("softmax-rows", {.m = 8, .n = 1024});
  Result<tune::HeuristicSchedule> rows = tune::heuristic_schedule(softmax.kernel, pocl);
  ASSERT_TRUE(rows.ok()) << rows.error().to_string();
  EXPECT_FALSE(barriers(rows->lowered)) << passes::to_string(rows->sequence);

  const auto add = standard("add", {.n = 1 << 16});
  Result<tune::HeuristicSchedule> elementwise = tune::heuristic_schedule(add.kernel, pocl);
  ASSERT_TRUE(elementwise.ok()) << elementwise.error().to_string();
  EXPECT_TRUE(has_local_threads(elementwise->lowered)) << passes::to_string(elementwise->sequence);

  // A group whose threads are SIMD lanes (lavapipe: warp 8) keeps the GPU ranking.
  DeviceInfo lanes = pocl;
  lanes.warp_size = 8;
  Result<tune::HeuristicSchedule> simd = tune::heuristic_schedule(matmul.kernel, lanes);
  ASSERT_TRUE(simd.ok()) << simd.error().to_string();
  EXPECT_TRUE(has_local_threads(simd->lowered)) << passes::to_string(simd->sequence);
}

// The candidates are lowered and priced on several threads, then ranked in
// their order: among equally priced recipes the first that applies wins,
// as it does on one thread, whatever thread lowered it. 48 recipes the
// kernel cannot take (a thread split of a grid axis it lacks) come first.
TEST(HeuristicSchedule, EquallyPricedRecipesKeepTheirOrderAcrossThreads) {
  const auto k = standard("add", {.n = 1 << 12});
  tune::SearchSpace space = tune::default_search_space();
  space.cost = [](const ir::Kernel&, const DeviceInfo&) { return 1.0; };
  space.recipes.clear();
  for (int i = 0; i < 48; ++i) space.recipes.push_back(passes::parse_sequence("split_local(axis=2,factor=64)").value());
  for (const char* recipe : {"split_local(axis=0,factor=128)", "split_local(axis=0,factor=64)", "split_local(axis=0,factor=256)",
                             "split_local(axis=0,factor=32)"})
    for (int i = 0; i < 8; ++i) space.recipes.push_back(passes::parse_sequence(recipe).value());
  for (int run = 0; run < 4; ++run) {
    Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, passes::gpu_preset(), space);
    ASSERT_TRUE(h.ok()) << h.error().to_string();
    EXPECT_EQ(passes::to_string(h->sequence), "split_local(axis=0,factor=128)");
    EXPECT_GE(h->considered, 33u);  // the untuned kernel and the 32 recipes that apply (then generic bodies)
    Result<ir::Kernel> lowered = space.lower(k.kernel, h->sequence, passes::gpu_preset());
    ASSERT_TRUE(lowered.ok());
    EXPECT_EQ(h->lowered, *lowered);
  }
}

// Row sums in f16 on a GPU: the elementwise recipe (four rows a thread,
// vectorized through their consecutive outputs) fits them, with a row's
// stride between the threads of a warp, priced 14.8 ms at 16384^2 on the
// H200-shaped description against 119 us for a tiled reduction of each
// row. Its tier no longer outranks a candidate priced over 8 times cheaper:
// the untuned pick is the tiled reduction, as for f32 rows and at n = 50257.
TEST(HeuristicSchedule, SixteenBitRowSumsOnAGpuAreReducedAcrossThreadsNotCoarsenedByRow) {
  for (const DeviceInfo& device : {passes::h200_preset(), passes::gpu_preset()}) {
    SCOPED_TRACE(device.id);
    for (ir::DType dtype : {ir::DType::F16, ir::DType::BF16}) {
      const auto k = standard("sum-rows", {.m = 16384, .n = 16384}, dtype);
      Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k.kernel, device);
      ASSERT_TRUE(h.ok()) << h.error().to_string();
      EXPECT_TRUE(has_step(h->sequence, "tiled_reduce(loop=0")) << passes::to_string(h->sequence);
      EXPECT_FALSE(has_step(h->sequence, "coarsen(")) << passes::to_string(h->sequence);
    }
  }
}
