// prefetch_rows(loop, distance): before each vector load of a row in the
// loop, a PREFETCH of the same element `distance` rows (groups) ahead; the
// results are unchanged (the interpreter does nothing for it), only devices
// that claim PREFETCH get the step, and finalize and Device::compile drop the
// op for a device that does not claim it.
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/passes/pipeline.hpp"

#include <gmock/gmock.h>

#include <algorithm>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const Optimization& prefetch_rows() { return *find_optimization("prefetch_rows"); }

// The CPU softmax recipe (the exponentials cached, every loop in 16-lane
// vectors): loop 0 reads the row (max), loop 1 reads it again (exp, sum),
// loop 2 reads the cached exponentials.
constexpr std::string_view kCpuSoftmax =
    "split_loop(loop=2,factor=16); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
    "lane_reduce(loop=0,lanes=16); row_cache(loop=1); vectorize(lanes=16)";

ir::Kernel optimized(const kernels::StandardKernel& k, std::string_view sequence, const DeviceInfo& device) {
  Result<ir::Kernel> out = optimize(k.kernel, parse_sequence(sequence).value(), device);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
  return out.ok() ? std::move(out).value() : k.kernel;
}

std::vector<ir::ValueId> prefetches(const ir::Kernel& k) {
  std::vector<ir::ValueId> ids;
  for (ir::ValueId id = 0; id < k.size(); ++id)
    if (k[id].kind == ir::OpKind::Prefetch) ids.push_back(id);
  return ids;
}

}  // namespace

TEST(PrefetchRows, PrefetchesTheNextRowBeforeEachVectorLoadOfTheRow) {
  for (const ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
    SCOPED_TRACE(static_cast<int>(dtype));
    const kernels::StandardKernel k = standard("softmax-rows", {.m = 5, .n = 96}, dtype);
    const ir::Kernel recipe = optimized(k, kCpuSoftmax, cpu_preset());
    // The loops that read the row (0 and 1), one and two rows ahead; not the
    // writing loop (it reads the cached exponentials).
    const auto configs = config_texts(prefetch_rows(), recipe, cpu_preset());
    EXPECT_THAT(configs, Contains("prefetch_rows(loop=1,distance=1)"));
    EXPECT_THAT(configs, Contains("prefetch_rows(loop=0,distance=2)"));
    EXPECT_THAT(configs, Not(Contains("prefetch_rows(loop=2,distance=1)")));
    const ir::Kernel after = applied(recipe, "prefetch_rows(loop=1,distance=1)", cpu_preset());
    // One prefetch, before the loop's row load, at its index + n (one row on).
    const auto ids = prefetches(after);
    ASSERT_EQ(ids.size(), 1u) << ir::print(after);
    const ir::Op& prefetch = after[ids[0]];
    const ir::Op& load = after[ids[0] + 1];
    ASSERT_EQ(load.kind, ir::OpKind::Load) << ir::print(after);
    EXPECT_EQ(prefetch.src[0], load.src[0]);
    const auto at = ir::affine_form(after, prefetch.src[1]), from = ir::affine_form(after, load.src[1]);
    ASSERT_TRUE(at && from);
    EXPECT_EQ(at->terms, from->terms);
    EXPECT_EQ(at->constant - from->constant, 96);
    // Two rows ahead: 2n.
    const ir::Kernel two = applied(recipe, "prefetch_rows(loop=1,distance=2)", cpu_preset());
    const auto at2 = ir::affine_form(two, two[prefetches(two).at(0)].src[1]);
    ASSERT_TRUE(at2);
    EXPECT_EQ(at2->constant - from->constant, 192);
    // Through the whole lowering: the recipe's results, exactly (a hint), and
    // so the untuned kernel's within the kernel's tolerance.
    const ir::Kernel lowered = optimized(k, std::string(kCpuSoftmax) + "; prefetch_rows(loop=1,distance=1)", cpu_preset());
    EXPECT_EQ(compare_runs(recipe, lowered, {}, 0), "");
    EXPECT_EQ(compare_standard(k, lowered, 7), "");
  }
}

TEST(PrefetchRows, TheNormsWritingLoopToo) {
  for (const std::string_view name : {"layernorm-rows", "rmsnorm-rows"}) {
    SCOPED_TRACE(std::string(name));
    const kernels::StandardKernel k = standard(name, {.m = 3, .n = 64});
    const std::string recipe = "split_loop(loop=1,factor=16); unroll(loop=2,factor=0); lane_reduce(loop=0,lanes=16); "
                               "vectorize(lanes=16); prefetch_rows(loop=1,distance=1)";
    const ir::Kernel after = optimized(k, recipe, cpu_preset());
    // The row's load is prefetched, not the weights' (indexed by the column alone).
    EXPECT_EQ(prefetches(after).size(), 1u) << ir::print(after);
    const ir::Kernel without = optimized(k, recipe.substr(0, recipe.rfind("; prefetch_rows")), cpu_preset());
    EXPECT_EQ(compare_runs(without, after, {}, 0), "");
    EXPECT_EQ(compare_standard(k, after, 3), "");
  }
}

TEST(PrefetchRows, RowsThatStartAnywhereThroughTheirAlignedStart) {
  // n = 101: split_aligned writes the blocks' row index from the row's first
  // aligned element, 16 * ((101 g + 15) / 16) (a shift after simplify_algebra),
  // not 101 g. Its stride is still the row's: the prefetch lands a row on,
  // within 15 elements of the same element of the next row.
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 5, .n = 101});
  const std::string recipe =
      "split_aligned(loop=2,factor=16,flat=1); split_aligned(loop=1,factor=16,flat=1); split_aligned(loop=0,factor=16,flat=1); "
      "split_loop(loop=5,factor=16); unroll(loop=6,factor=0); lane_reduce(loop=3,lanes=16); lane_reduce(loop=1,lanes=16); "
      "row_cache(loop=3); vectorize(lanes=16)";
  const ir::Kernel before = optimized(k, recipe, cpu_preset());
  EXPECT_THAT(config_texts(prefetch_rows(), before, cpu_preset()), Contains("prefetch_rows(loop=3,distance=1)"));
  const ir::Kernel after = applied(before, "prefetch_rows(loop=3,distance=1)", cpu_preset());
  const auto ids = prefetches(after);
  ASSERT_EQ(ids.size(), 1u) << ir::print(after);
  const auto at = ir::affine_form(after, after[ids[0]].src[1]), from = ir::affine_form(after, after[ids[0] + 1].src[1]);
  ASSERT_TRUE(at && from);
  EXPECT_EQ(at->terms, from->terms);
  EXPECT_EQ(at->constant - from->constant, 101);
  EXPECT_EQ(compare_runs(before, after, {}, 0), "");
  // A quotient that is not the row's aligned start (its coefficient is not
  // the divisor) gives no stride: nothing to prefetch.
  constexpr std::string_view kQuarterRows = R"(
%0 = param 0 global f32[4096]
%1 = param 1 global_mut f32[4096]
%2 = const i64 16
%3 = const i64 4
%4 = index group 0 %2
%5 = mul i64 %4, %3
%6 = const i64 64
%7 = div i64 %5, %6
%8 = mul i64 %7, %2
%9 = loop %2
  %10 = mul i64 %9, %2
  %11 = add i64 %8, %10
  %12 = load f32x16 %0[%11]
  store f32x16 %1[%11], %12
endloop %9
)";
  EXPECT_TRUE(config_texts(prefetch_rows(), parse_valid(kQuarterRows), cpu_preset()).empty());
}

TEST(PrefetchRows, OnlyWhereTheDeviceClaimsItAndOnlyVectorLoads) {
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 5, .n = 96});
  // The GPU preset claims no PREFETCH.
  const ir::Kernel recipe = optimized(k, kCpuSoftmax, cpu_preset());
  EXPECT_TRUE(prefetch_rows().configs(recipe, gpu_preset()).empty());
  EXPECT_THAT(step_error_message(recipe, "prefetch_rows(loop=1,distance=1)", gpu_preset()), HasSubstr("prefetches"));
  // Scalar loads (the untuned kernel) get none: a prefetch per element costs more than it hides.
  EXPECT_TRUE(prefetch_rows().configs(normalize(k.kernel, cpu_preset()), cpu_preset()).empty());
  // Parameters: both required, nothing else, distance 1..8.
  EXPECT_THAT(step_error_message(recipe, "prefetch_rows(loop=1)", cpu_preset()), HasSubstr("distance"));
  EXPECT_THAT(step_error_message(recipe, "prefetch_rows(loop=1,distance=1,lines=2)", cpu_preset()), HasSubstr("lines"));
  EXPECT_THAT(step_error_message(recipe, "prefetch_rows(loop=1,distance=0)", cpu_preset()), HasSubstr("1..8"));
  EXPECT_THAT(step_error_message(recipe, "prefetch_rows(loop=9,distance=1)", cpu_preset()), HasSubstr("loop"));
}

TEST(PrefetchRows, FinalizeDropsItForADeviceThatDoesNotClaimIt) {
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 5, .n = 96});
  const ir::Kernel with = optimized(k, std::string(kCpuSoftmax) + "; prefetch_rows(loop=1,distance=1)", cpu_preset());
  ASSERT_EQ(prefetches(with).size(), 1u);
  const Pass* drop = find_pass("drop_prefetch");
  ASSERT_NE(drop, nullptr);
  EXPECT_EQ(prefetches(drop->run(with, gpu_preset())).size(), 0u);
  EXPECT_EQ(prefetches(drop->run(with, cpu_preset())).size(), 1u);
  EXPECT_EQ(compare_runs(with, drop->run(with, gpu_preset()), {}, 0), "");
}

TEST(PrefetchRows, CoarsenedRowsPrefetchTheWorkItemsNextRow) {
  // Four rows a work-item (coarsen): the row index is 4 g + j, the GROUP
  // INDEX's coefficient four rows; the prefetch goes one row on (the
  // work-item's next row, or the next work-item's first), at an aligned n
  // and through split_aligned's aligned start at an odd one. Ten rows in
  // coarsen's mode 2 (the row min(4 g + j, 9)) take it the same way.
  for (const std::int64_t mode : {0, 2})
    for (const std::int64_t n : {96, 101}) {
      SCOPED_TRACE("mode " + std::to_string(mode) + ", n = " + std::to_string(n));
      const kernels::StandardKernel k = standard("softmax-rows", {.m = mode == 0 ? 8 : 10, .n = n});
      const std::string coarsen = "coarsen(axis=0,factor=4,mode=" + std::to_string(mode) + "); ";
      const std::string recipe =
          coarsen + (n == 96 ? "split_loop(loop=3,factor=16); unroll(loop=4,factor=0); "
                               "lane_reduce(loop=2,lanes=16); lane_reduce(loop=1,lanes=16); row_cache(loop=2); vectorize(lanes=16)"
                             : "split_aligned(loop=3,factor=16,flat=1); split_aligned(loop=2,factor=16,flat=1); "
                               "split_aligned(loop=1,factor=16,flat=1); split_loop(loop=6,factor=16); unroll(loop=7,factor=0); "
                               "lane_reduce(loop=4,lanes=16); lane_reduce(loop=2,lanes=16); row_cache(loop=4); vectorize(lanes=16)");
      const ir::Kernel before = optimized(k, recipe, cpu_preset());
      const std::string step = n == 96 ? "prefetch_rows(loop=1,distance=1)" : "prefetch_rows(loop=2,distance=1)";
      const ir::Kernel after = applied(before, step, cpu_preset());
      const auto ids = prefetches(after);
      ASSERT_EQ(ids.size(), 1u) << ir::print(after);
      const auto at = ir::affine_form(after, after[ids[0]].src[1]), from = ir::affine_form(after, after[ids[0] + 1].src[1]);
      ASSERT_TRUE(at && from);
      EXPECT_EQ(at->terms, from->terms);
      EXPECT_EQ(at->constant - from->constant, n);
      EXPECT_EQ(compare_runs(before, after, {}, 0), "");
    }
}
