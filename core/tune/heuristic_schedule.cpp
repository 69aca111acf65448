// The schedule of a kernel without a tuning record (kiln/tune/heuristic.hpp).
#include "kiln/tune/heuristic.hpp"

#include "kiln/passes/optimization.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace kiln::tune {
namespace {

// Kernels no recipe fits (a custom elementwise or reduction kernel, say): a
// thread split of a grid axis, or the first loop reduced across the group's
// threads, at sizes GPUs run well, largest first.
constexpr std::int64_t kThreadSplits[] = {256, 128, 64, 32};
constexpr std::int64_t kReduceThreads[] = {256, 64};

// Ranked first by tier (the cost model misjudges the recipes against plain
// splits: a matmul 256 split_local(256) scores better than its 128x128 LOCAL
// tiles on preset:gpu, and the CPU's float16 recipe scores the same as the
// scalar loop), within a tier by cost.
enum class Tier { Recipe = 0, PaddedRecipe = 1, Generic = 2, Untuned = 3 };
// How many times dearer the model may price a candidate of a better tier
// than one of a worse tier and still rank it first.
constexpr double kTierOverride = 8;
// How much cheaper a candidate with asynchronous copies (COPY_ASYNC, on a
// device that claims them) is ranked than the model prices it. The model
// sees the same bytes as for the loads they replace and counts their extra
// LOCAL reads (the copied values read back), but not what they buy: every
// load of a thread in flight at once, where loads through registers are
// bounded by the registers that hold them. On preset:h200 it priced the
// rows of 5342 x 50257 f16/bf16 copied into LOCAL memory 1.06-1.07x above
// the untuned picks (LOCAL rows loaded through registers for softmax and
// layernorm, rows in registers for rmsnorm), which ran 0.65-0.78x of kiln's
// add on an H100 (rmsnorm 0.95x f16, 0.71x bf16, which spills) against
// 0.88-0.95x copied in; on the H200 the copied rows were the tuned winners
// of five of the six (docs/autotune.md, "The heuristic schedule").
constexpr double kAsyncCopyDiscount = 1.15;

// Prices within this share of each other tie, and a tie keeps the earlier
// candidate (the default space lists the twin a device measured faster
// first). The model is nowhere near this precise, and a recipe that
// coarsens rows whatever their count (coarsen mode 2) prices the last
// work-item's repeated rows: 1 of 87381 for softmax at n = 768, whose rows
// two a warp ran 0.89x of kiln's add on the H200 against 0.73x one a warp.
constexpr double kTiePrecision = 1e-3;

// How much cheaper a candidate whose rows are software-pipelined
// (pipeline_rows) is ranked than the model prices it. The model sums each
// loop's cost and sees no overlap between one row's stores and another's
// arithmetic, which is all the step buys, so it prices the pipelined kernel
// as its unpipelined twin (ties keep the pipelined recipe, listed first).
// Where 8 does not divide the rows, coarsen mode 2 repeats the last row in
// place of those past m, which makes it dearer by their share (6 of 256 at
// m = 250, 1 of 4096 at m = 4095), and the unpipelined recipe would win by
// that. On a 2-core Xeon (2026-12-06/07, docs/passes.md "pipeline_rows")
// pipelining ran 3-62% faster than the unpipelined picks wherever it was
// timed but once (f32 softmax at m = 4096 5%, 16-bit softmax 3-20%, the
// norms 12-62%; level once in f32 at n = 50257): ranked 5% cheaper, it keeps
// its place where the repeated rows cost less than that (42 rows, 6 of 48
// repeated, stay unpipelined).
constexpr double kPipelineDiscount = 1.05;

bool pipelines_rows(const passes::OptSequence& sequence) {
  return std::any_of(sequence.begin(), sequence.end(), [](const passes::OptStep& step) { return step.opt == "pipeline_rows"; });
}

// A candidate whose reductions run their warps first (tiled_reduce
// subgroup_first=1) is ranked at the price of the same sequence with the
// tree (the flag dropped), when that lowers. The model counts the tree's
// LOCAL traffic and barriers as what the flag saves, 13% of layernorm f16's
// price at 5342 x 50257 on preset:h200; by hand on an H100 (2026-12-06 and
// 2026-12-07, bench/gpu-hand) the flag ran level with the tree in the LOCAL
// rows and 1-2 points faster in the f32 register rows. So it takes the tree's
// place in the ranking where the tree would win (its recipe comes first, and
// ties keep the earlier), and no other.
std::optional<passes::OptSequence> with_trees(const passes::OptSequence& sequence) {
  passes::OptSequence out = sequence;
  bool changed = false;
  for (passes::OptStep& step : out)
    if (step.opt == "tiled_reduce")
      changed |= std::erase_if(step.params, [](const auto& p) { return p.first == "subgroup_first" && p.second != 0; }) > 0;
  if (!changed) return std::nullopt;
  return out;
}

struct Candidate {
  passes::OptSequence sequence;
  Tier tier;
};

bool uses_local_threads(const ir::Kernel& kernel) {
  for (const ir::Op& op : kernel.ops)
    if (op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Local) return true;
  return false;
}

bool has_op(const ir::Kernel& kernel, ir::OpKind kind) {
  for (const ir::Op& op : kernel.ops)
    if (op.kind == kind) return true;
  return false;
}

// A recipe whose vectors the device lacks fails only at its last step,
// after the costly ones (register_block on a GPU: most of the time spent).
bool vectors_fit(const passes::OptSequence& sequence, const DeviceInfo& device) {
  const std::vector<std::uint32_t> widths = device.vector_widths();
  for (const passes::OptStep& step : sequence)
    if (step.opt == "vectorize" &&
        std::find(widths.begin(), widths.end(), static_cast<std::uint32_t>(step.param("lanes"))) == widths.end())
      return false;
  return true;
}

std::size_t loop_count(const ir::Kernel& kernel) {
  std::size_t loops = 0;
  for (const ir::Op& op : kernel.ops) loops += op.kind == ir::OpKind::Loop;
  return loops;
}

std::vector<passes::OptSequence> generic_bodies(const ir::Kernel& normalized, const DeviceInfo& device) {
  std::vector<passes::OptSequence> bodies;
  if (device.max_local_threads <= 1) return bodies;
  for (std::int64_t axis : {0, 1})
    for (std::int64_t factor : kThreadSplits)
      if (factor <= device.max_local_threads && factor <= device.max_local_dims[static_cast<std::size_t>(axis)])
        bodies.push_back({passes::OptStep{"split_local", {{"axis", axis}, {"factor", factor}}}});
  // Two-axis grids (a transpose): 256 threads along axis 0, each taking 8
  // consecutive elements of axis 1 as vectors. A 1-D group of 256 reads one
  // element per sector; this reads whole vectors (on the H200, 2048^2 f32:
  // 15.5-24.7 us against 35-38 us for the 1-D group and 13-16 us tuned, on
  // cuda:0, opencl:0 and vulkan:0). One-axis grids skip it (coarsen fails
  // on a missing axis), as devices without 4-wide vectors do.
  if (256 <= device.max_local_threads && 256 <= device.max_local_dims[0])
    bodies.push_back(passes::parse_sequence("split_local(axis=0,factor=256); coarsen(axis=1,factor=8,mode=0); "
                                            "unroll(loop=0,factor=0); vectorize(lanes=4)")
                         .value());
  // The first n loops reduced across the group's threads (a row kernel's
  // reductions and its writing loop), as the row recipes do without their
  // register caches (a device may have no registers to spare for them).
  const std::size_t loops = std::min<std::size_t>(loop_count(normalized), 4);
  for (std::int64_t threads : kReduceThreads) {
    if (threads > device.max_local_threads || threads > device.max_local_dims[0]) continue;
    passes::OptSequence chain;
    for (std::size_t loop = 0; loop < loops; ++loop) {
      chain.push_back(passes::OptStep{
          "tiled_reduce", {{"loop", static_cast<std::int64_t>(loop)}, {"local", threads}, {"branch", 4}}});
      bodies.push_back(chain);
    }
  }
  return bodies;
}

std::vector<Candidate> candidates(const ir::Kernel& kernel, const DeviceInfo& device, const SearchSpace& space) {
  // Ragged grid axes: the same bodies after each padding `pad` proposes
  // (none when every axis length is already a multiple).
  const ir::Kernel normalized = space.normalize(kernel, device);
  std::vector<passes::OptStep> pads;
  if (const passes::Optimization* pad = space.find("pad")) pads = pad->configs(normalized, device);
  std::vector<Candidate> out;
  const auto add = [&](const passes::OptSequence& body, Tier tier, Tier padded_tier) {
    out.push_back({body, tier});
    for (const passes::OptStep& pad : pads) {
      passes::OptSequence sequence = {pad};
      sequence.insert(sequence.end(), body.begin(), body.end());
      out.push_back({std::move(sequence), padded_tier});
    }
  };
  for (const passes::OptSequence& recipe : space.recipes)
    if (vectors_fit(recipe, device)) add(recipe, Tier::Recipe, Tier::PaddedRecipe);
  for (const passes::OptSequence& body : generic_bodies(normalized, device)) add(body, Tier::Generic, Tier::Generic);
  return out;
}

struct Ranked {
  HeuristicSchedule schedule;
  Tier tier = Tier::Untuned;
  bool threads = false;
  bool barriers = false;
  double rank_ns = 0;  // the price it is ranked by (see kAsyncCopyDiscount, with_trees)
};

// On a CPU with threads per group but no SIMD width across them (PoCL's
// pthread device: warp 1) a group's work-items run as loops on one core: a barrier cuts the kernel into a loop over the
// work-items per phase, and LOCAL tiles save nothing the caches do not. The
// cost model does not know it: on PoCL a 1024^3 matmul took 2.3 s with
// local_tile, the heuristic's choice, and 46 ms with register_block.
// Ranking on such CPUs: kernels without barriers first, then the tier (a
// recipe before a plain thread split: a matmul split across threads is the
// naive loop nest), then threads, then the lower cost. On other devices with
// threads: threads first, then the tier, then the cost (a candidate with
// asynchronous copies ranked kAsyncCopyDiscount cheaper). Ties keep the
// earlier candidate.
bool better(const Ranked& a, const Ranked& b, bool prefer_threads, bool avoid_barriers) {
  if (avoid_barriers) {
    if (a.barriers != b.barriers) return !a.barriers;
    if (a.tier != b.tier) return a.tier < b.tier;
  }
  if (prefer_threads && a.threads != b.threads) return a.threads;
  if (a.tier != b.tier) {
    // The tiers stand for the model's misjudgments of a recipe against a
    // plain split, not for a recipe that fits a kernel it was not written
    // for: the GPU elementwise recipe fits sum-rows f16 (its coarsened rows'
    // outputs are consecutive), four rows a thread read with a row's stride
    // between the threads of a warp, priced 14.8 ms at 16384^2 on an
    // H200-shaped GPU against 119 us for a tiled reduction of each row.
    // Priced that far apart, the cheaper one wins whatever its tier. The
    // untuned kernel keeps its place below every schedule: on preset:cpu
    // (no 16-wide vectors) the model prices the CPU's lane_reduce recipe for
    // sum-rows 16 times the plain loop, which c:0 measures slower.
    if (a.tier == Tier::Untuned || b.tier == Tier::Untuned) return a.tier < b.tier;
    const Ranked& lower = a.tier < b.tier ? a : b;
    const Ranked& higher = a.tier < b.tier ? b : a;
    if (lower.rank_ns <= kTierOverride * higher.rank_ns) return a.tier < b.tier;
    return &higher == &a;
  }
  return a.rank_ns < b.rank_ns * (1 - kTiePrecision);
}

// See the end of heuristic_schedule.
bool switches_subgroups_at_barriers(const DeviceInfo& device) {
  return device.kind == DeviceKind::Cpu && device.warp_size > 1 && device.max_local_threads > device.warp_size;
}

}  // namespace

Result<HeuristicSchedule> heuristic_schedule(const ir::Kernel& kernel, const DeviceInfo& device,
                                             const SearchSpace& space) {
  KILN_TRY_ASSIGN(ir::Kernel untuned, space.lower(kernel, {}, device));
  const bool prefer_threads = device.max_local_threads > 1;
  // Work-items run one after another (a CPU whose groups have threads but no
  // SIMD width across them: PoCL's pthread device). lavapipe runs a group's
  // work-items as SIMD lanes (warp 8) and keeps the GPU ranking: there the
  // rule below made a 1024^3 matmul 28 times slower (34 s against 1.2 s).
  const bool avoid_barriers = prefer_threads && device.kind == DeviceKind::Cpu && device.warp_size <= 1;
  Ranked best;
  // A fixed-function device (cblas) runs the shapes it recognises, which a
  // schedule would only hide from it.
  if (device.fixed_function()) {
    best.schedule.cost_ns = space.cost(untuned, device);
    best.schedule.lowered = std::move(untuned);
    best.schedule.considered = 1;
    return std::move(best.schedule);
  }
  best.schedule.cost_ns = space.cost(untuned, device);
  best.rank_ns = best.schedule.cost_ns;
  best.schedule.lowered = std::move(untuned);
  best.threads = uses_local_threads(best.schedule.lowered);
  best.barriers = has_op(best.schedule.lowered, ir::OpKind::Barrier);
  // Every candidate lowered and priced on threads of their own (a row kernel
  // at n = 50257 has 279, each a recipe of up to 24 steps with the always-on
  // passes after each: 2.8 s on one core here, bench/lowering_bench; with
  // one thread it once took most of a 3 s tuning's budget on the H200, where
  // the tuner asks for this schedule before it measures anything); the
  // space's lower and cost are thread-safe (the tuner's
  // compile pool lowers in parallel). Only what the ranking needs is kept,
  // and it is ranked in the candidates' order, as one thread would: the
  // winner is the same, and it is lowered once more at the end.
  struct Priced {
    Tier tier = Tier::Untuned;
    double cost_ns = 0;
    bool threads = false;
    bool barriers = false;
    double rank_ns = 0;
  };
  std::vector<Candidate> all = candidates(kernel, device, space);
  std::vector<std::optional<Priced>> priced(all.size());
  {
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
      for (std::size_t i; (i = next.fetch_add(1)) < all.size();) {
        Result<ir::Kernel> lowered = space.lower(kernel, all[i].sequence, device);
        if (!lowered) continue;  // a recipe that does not fit this kernel or device
        const double cost_ns = space.cost(*lowered, device);
        double price_ns = cost_ns;
        if (const auto trees = with_trees(all[i].sequence))
          if (Result<ir::Kernel> tree = space.lower(kernel, *trees, device)) price_ns = space.cost(*tree, device);
        double rank_ns = has_op(*lowered, ir::OpKind::CopyAsync) ? price_ns / kAsyncCopyDiscount : price_ns;
        if (pipelines_rows(all[i].sequence)) rank_ns /= kPipelineDiscount;
        priced[i] = Priced{all[i].tier, cost_ns, uses_local_threads(*lowered),
                           has_op(*lowered, ir::OpKind::Barrier), rank_ns};
      }
    };
    const std::size_t workers = std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), all.size());
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
  }
  std::size_t considered = 1;
  // Only where it can win (see the end): elsewhere no barrier-free candidate is tracked.
  const bool track_barrier_free = switches_subgroups_at_barriers(device);
  std::optional<std::size_t> best_index, best_barrier_free;  // indices into `all`
  const auto ranked = [&](std::size_t i) {
    Ranked r;
    r.tier = priced[i]->tier;
    r.schedule.cost_ns = priced[i]->cost_ns;
    r.threads = priced[i]->threads;
    r.barriers = priced[i]->barriers;
    r.rank_ns = priced[i]->rank_ns;
    return r;
  };
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!priced[i]) continue;
    ++considered;
    const Priced& candidate = *priced[i];
    // Ties go to the later candidate: the thread splits come largest first,
    // and smaller groups spread a few hundred rows over the cores (softmax
    // 256 x 4096 on lavapipe: 5.4 ms in groups of 32, 8.5 ms in one of 256).
    if (track_barrier_free && !candidate.barriers && candidate.threads &&
        (!best_barrier_free || candidate.cost_ns <= priced[*best_barrier_free]->cost_ns))
      best_barrier_free = i;
    if (better(ranked(i), best_index ? ranked(*best_index) : best, prefer_threads, avoid_barriers)) best_index = i;
  }
  // lavapipe-like devices (a CPU with warp > 1): a group's subgroups take
  // turns on one core and each barrier switches between them (the cost
  // model prices the switches, docs/cost-model.md). There a barrier-free
  // candidate the model prices lower wins over the recipe tier: lavapipe
  // ran sum-rows 2048^2 in 17-20 ms with the recipe's tiled_reduce(local=64)
  // against 5.6-6.5 ms with one thread a row. LOCAL-tiled matrix products
  // keep their tiles (the barrier-free ones cost far more).
  const bool best_has_barriers = best_index ? priced[*best_index]->barriers : best.barriers;
  const double best_cost = best_index ? priced[*best_index]->cost_ns : best.schedule.cost_ns;
  if (track_barrier_free && best_has_barriers && best_barrier_free && priced[*best_barrier_free]->cost_ns < best_cost)
    best_index = best_barrier_free;
  if (best_index) {
    KILN_TRY_ASSIGN(best.schedule.lowered, space.lower(kernel, all[*best_index].sequence, device));
    best.schedule.cost_ns = priced[*best_index]->cost_ns;
    best.schedule.sequence = std::move(all[*best_index].sequence);
  }
  best.schedule.considered = considered;
  return std::move(best.schedule);
}

}  // namespace kiln::tune
