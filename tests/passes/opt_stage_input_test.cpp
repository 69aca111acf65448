// stage_input(param): each group copies a read-only param whole into LOCAL
// memory at its start (chunks shared by its threads), a barrier before the
// first load of it, and the loads read the copy. The results are the
// unstaged kernel's bit for bit (the interpreter checks every LOCAL access
// for races between threads and, after async_copies, for copies still in
// flight); async_copies turns the chunks into copies waited for only before
// the kernel's first top-level barrier.
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/passes/device_presets.hpp"

#include <gmock/gmock.h>

#include <algorithm>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& stage_input() { return *find_optimization("stage_input"); }

// rmsnorm's rows split into aligned blocks across 64 threads, vectorized: the
// weights read as vectors at any element index (rows of odd n start anywhere).
std::string rmsnorm_blocks(int lanes) {
  const std::string f = std::to_string(lanes);
  return "split_aligned(loop=1,factor=" + f + "); unroll(loop=3,factor=0); split_aligned(loop=0,factor=" + f +
         "); unroll(loop=2,factor=0); unroll(loop=0,factor=0); tiled_reduce(loop=0,local=64,branch=4); "
         "tiled_reduce(loop=1,local=64,branch=4); tiled_reduce(loop=2,local=64,branch=4); "
         "tiled_reduce(loop=3,local=64,branch=4); vectorize(lanes=" + f + ")";
}

std::size_t count_kind(const ir::Kernel& k, ir::OpKind kind) {
  return static_cast<std::size_t>(
      std::count_if(k.ops.begin(), k.ops.end(), [&](const ir::Op& op) { return op.kind == kind; }));
}

// The first top-level BARRIER, or the kernel's size.
ir::ValueId first_top_level_barrier(const ir::Kernel& k) {
  const ir::Blocks blocks = ir::analyze_blocks(k);
  for (ir::ValueId id = 0; id < k.size(); ++id)
    if (k[id].kind == ir::OpKind::Barrier && blocks.parent[id] == ir::kNoValue) return id;
  return static_cast<ir::ValueId>(k.size());
}

// Loads of param `slot` after op `after`.
std::size_t param_loads_after(const ir::Kernel& k, std::uint32_t slot, ir::ValueId after) {
  std::size_t count = 0;
  for (ir::ValueId id = after + 1; id < k.size(); ++id) {
    const ir::Op& op = k[id];
    if (op.kind == ir::OpKind::Load && k[op.src[0]].kind == ir::OpKind::Param && k[op.src[0]].attr == slot) ++count;
  }
  return count;
}

}  // namespace

TEST(StageInput, RmsnormReadsItsWeightsFromTheGroupsCopy) {
  const DeviceInfo device = h200_preset();
  for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
    const int lanes = dtype == ir::DType::F32 ? 4 : 8;
    // Rows at every residue, 1 and 3 elements left after the whole chunks;
    // 64 threads do not divide the chunks (zero-filled ones past the end).
    for (std::int64_t n : {2001, 1027}) {
      SCOPED_TRACE(std::string(ir::dtype_name(dtype)) + " n=" + std::to_string(n));
      const kernels::StandardKernel k = standard("rmsnorm-rows", {.m = 3, .n = n}, dtype);
      const std::string blocks = rmsnorm_blocks(lanes);
      Result<ir::Kernel> before = optimize(k.kernel, parse_sequence(blocks).value(), device);
      ASSERT_TRUE(before.ok()) << before.error().to_string();
      Result<ir::Kernel> staged = optimize(k.kernel, parse_sequence(blocks + "; stage_input(param=1)").value(), device);
      ASSERT_TRUE(staged.ok()) << staged.error().to_string();
      const std::string text = ir::print(*staged);
      // Nothing reads the weights from global memory after the first
      // barrier: the writing loop reads the copy.
      const ir::ValueId barrier = first_top_level_barrier(*staged);
      ASSERT_LT(barrier, staged->size()) << text;
      EXPECT_GT(param_loads_after(*before, 1, 0), 0u);
      EXPECT_EQ(param_loads_after(*staged, 1, barrier), 0u) << text;
      // Bit for bit the unstaged kernel's results, and within the kernel's
      // tolerance of the reference.
      EXPECT_EQ(compare_outcomes(run_on_interpreter(*before, k.args, 7), run_on_interpreter(*staged, k.args, 7), 0), "");
      EXPECT_EQ(compare_standard(k, *staged, 7, 4), "");
      // With async_copies: every chunk a copy (the chunks past the end
      // zero-filled), one commit, the wait just before the first barrier,
      // the same results.
      Result<ir::Kernel> copied =
          optimize(k.kernel, parse_sequence(blocks + "; stage_input(param=1); async_copies()").value(), device);
      ASSERT_TRUE(copied.ok()) << copied.error().to_string();
      const std::string copied_text = ir::print(*copied);
      const std::int64_t chunks = n / lanes, rounds = (chunks + 63) / 64;
      EXPECT_EQ(count_kind(*copied, ir::OpKind::CopyAsync), static_cast<std::size_t>(rounds)) << copied_text;
      EXPECT_EQ(count_kind(*copied, ir::OpKind::CopyCommit), 1u) << copied_text;
      EXPECT_EQ(count_kind(*copied, ir::OpKind::CopyWait), 1u) << copied_text;
      const ir::ValueId first_barrier = first_top_level_barrier(*copied);
      ASSERT_GT(first_barrier, 0u);
      EXPECT_EQ((*copied)[first_barrier - 1].kind, ir::OpKind::CopyWait) << copied_text;
      EXPECT_EQ(compare_outcomes(run_on_interpreter(*before, k.args, 7), run_on_interpreter(*copied, k.args, 7), 0), "");
    }
  }
}

TEST(StageInput, VectorsAtAnyIndexAreReadLaneByLaneWhereOnlyParamsAllowThem) {
  // preset:h200 reads vectors at any index from params only (the CUDA
  // dialect): the staged weights are read lane by lane; a device that
  // claims them everywhere keeps the vectors.
  const kernels::StandardKernel k = standard("rmsnorm-rows", {.m = 2, .n = 1001}, ir::DType::F32);
  const std::string sequence = rmsnorm_blocks(4) + "; stage_input(param=1)";
  const auto unaligned_local_loads = [](const ir::Kernel& kernel) {
    return std::count_if(kernel.ops.begin(), kernel.ops.end(), [&](const ir::Op& op) {
      return op.kind == ir::OpKind::Load && op.attr == KILN_ACCESS_UNALIGNED && kernel[op.src[0]].kind == ir::OpKind::Storage;
    });
  };
  DeviceInfo everywhere = h200_preset();
  everywhere.features[KILN_FEATURE_UNALIGNED_VECTORS / 64] |= 1ull << (KILN_FEATURE_UNALIGNED_VECTORS % 64);
  const ir::Kernel lane_by_lane = optimize(k.kernel, parse_sequence(sequence).value(), h200_preset()).value();
  const ir::Kernel vectors = optimize(k.kernel, parse_sequence(sequence).value(), everywhere).value();
  EXPECT_EQ(unaligned_local_loads(lane_by_lane), 0);
  EXPECT_GT(unaligned_local_loads(vectors), 0);
  EXPECT_EQ(compare_standard(k, lane_by_lane, 3, 4), "");
  EXPECT_EQ(compare_standard(k, vectors, 3, 4), "");
}

TEST(StageInput, ConfigsAndRefusals) {
  const DeviceInfo device = h200_preset();
  const kernels::StandardKernel k = standard("rmsnorm-rows", {.m = 3, .n = 2001}, ir::DType::F32);
  const ir::Kernel split = optimize(k.kernel, parse_sequence(rmsnorm_blocks(4)).value(), device).value();
  // The weights (smaller than x) are staged; x and y are not candidates.
  EXPECT_THAT(config_texts(stage_input(), split, device), ::testing::ElementsAre("stage_input(param=1)"));
  // No threads per group (a CPU), or no LOCAL axis yet (before tiled_reduce).
  EXPECT_TRUE(stage_input().configs(k.kernel, cpu_preset()).empty());
  EXPECT_THAT(step_error_message(k.kernel, "stage_input(param=1)", cpu_preset()), HasSubstr("threads per group"));
  EXPECT_THAT(step_error_message(k.kernel, "stage_input(param=1)", device), HasSubstr("LOCAL axis"));
  // The output, a param that does not exist, a misspelt or missing parameter.
  EXPECT_THAT(step_error_message(split, "stage_input(param=2)", device), HasSubstr("read-only"));
  EXPECT_THAT(step_error_message(split, "stage_input(param=7)", device), HasSubstr("read-only"));
  EXPECT_THAT(step_error_message(split, "stage_input(param=1,lanes=4)", device), HasSubstr("unknown parameter"));
  EXPECT_THAT(step_error_message(split, "stage_input()", device), HasSubstr("param"));
  // Weights larger than the group's LOCAL memory (48 KiB on preset:gpu), or
  // more than 64 chunks a thread (straight code).
  const auto split_rows = [&](std::int64_t n) {
    const kernels::StandardKernel wide = standard("rmsnorm-rows", {.m = 2, .n = n}, ir::DType::F32);
    return optimize(wide.kernel, parse_sequence(rmsnorm_blocks(4)).value(), gpu_preset()).value();
  };
  EXPECT_TRUE(stage_input().configs(split_rows(14001), gpu_preset()).empty());
  EXPECT_THAT(step_error_message(split_rows(14001), "stage_input(param=1)", gpu_preset()), HasSubstr("LOCAL storage"));
  EXPECT_THAT(step_error_message(split_rows(20001), "stage_input(param=1)", gpu_preset()), HasSubstr("64 chunks"));
}

TEST(StageInput, EveryThreadReadsOtherThreadsChunksAfterTheBarrier) {
  // Each of 64 threads reads an element of w that another thread copied
  // (w: 75 chunks of 4 and one element left; y the larger buffer, so w is
  // a candidate), with no barrier of its own:
  // only the step's barriers order the copy before the reads (the
  // interpreter reports a read of an element another thread wrote since the
  // last barrier, and one whose copy is still in flight).
  const ir::Kernel before = parse_valid(R"(
%w = param 0 global f32[301]
%y = param 1 global_mut f32[1024]
%n = const i64 64
%t = index local 0 %n
%seven = const i64 37
%e = const i64 301
%i0 = mul i64 %t, %seven
%i = mod i64 %i0, %e
%v = load f32 %w[%i]
%s = add f32 %v, %v
store f32 %y[%t], %s
)");
  const DeviceInfo device = h200_preset();
  EXPECT_THAT(config_texts(stage_input(), before, device), ::testing::ElementsAre("stage_input(param=0)"));
  const ir::Kernel staged = applied(before, "stage_input(param=0)", device);
  EXPECT_EQ(count_kind(staged, ir::OpKind::Barrier), 2u) << ir::print(staged);
  EXPECT_EQ(compare_runs(before, staged), "");
  const ir::Kernel copied = applied(staged, "async_copies()", device);
  EXPECT_EQ(count_kind(copied, ir::OpKind::CopyAsync), 2u) << ir::print(copied);
  EXPECT_EQ(compare_runs(before, copied), "");
}

TEST(StageInput, GroupsThatLoopOverRowsCopyTheWeightsOnce) {
  // Rows padded to a multiple of 3 and coarsened (strided): each of 3 groups
  // does rows g, g + 3, g + 6 (the last past m = 7 skipped by pad's guard).
  // stage_input after them copies the weights once, in front of the rows'
  // LOOP, so the weights cross memory once a group instead of once a row;
  // the copy's barrier precedes the loop, whose iterations end in their own.
  const DeviceInfo device = h200_preset();
  for (ir::DType dtype : {ir::DType::F32, ir::DType::BF16}) {
    SCOPED_TRACE(ir::dtype_name(dtype));
    const int lanes = dtype == ir::DType::F32 ? 4 : 8;
    const kernels::StandardKernel k = standard("rmsnorm-rows", {.m = 7, .n = 1027}, dtype);
    const std::string rows = rmsnorm_blocks(lanes) + "; pad(axis=0,multiple=3); coarsen(axis=0,factor=3,mode=1)";
    const ir::Kernel before = optimize(k.kernel, parse_sequence(rows).value(), device).value();
    const ir::Kernel staged =
        optimize(k.kernel, parse_sequence(rows + "; stage_input(param=1); async_copies()").value(), device).value();
    const ir::Blocks blocks = ir::analyze_blocks(staged);
    std::size_t copies = 0;
    for (ir::ValueId id = 0; id < staged.size(); ++id) {
      if (staged[id].kind != ir::OpKind::CopyAsync) continue;
      ++copies;
      EXPECT_EQ(blocks.parent[id], ir::kNoValue) << "copy %" << id << " inside a LOOP or IF\n" << ir::print(staged);
    }
    EXPECT_GT(copies, 0u);
    EXPECT_EQ(param_loads_after(staged, 1, first_top_level_barrier(staged)), 0u) << ir::print(staged);
    EXPECT_EQ(compare_outcomes(run_on_interpreter(before, k.args, 5), run_on_interpreter(staged, k.args, 5), 0), "");
    EXPECT_EQ(compare_standard(k, staged, 5, 4), "");
  }
}
