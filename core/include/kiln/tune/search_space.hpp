// kiln/tune/search_space.hpp - what the autotuner searches over: the tunable
// optimizations, the always-on passes around them, the cost model that
// ranks candidates, and how a sequence is lowered to the kernel measured.
//
// default_search_space() is kiln's own (kiln/passes/*); tests and host apps
// may build another one (e.g. to plant optimizations of their own) with
// make_search_space(). The tuner works only through this struct.
#pragma once

#include <kiln/ir/kernel.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/result.hpp>
#include <kiln/runtime/device_info.hpp>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::tune {

// Bump when an optimization's meaning changes without its name changing
// (a step text then lowers to another kernel): every stored entry of the
// old space is left behind and kernels are tuned again.
inline constexpr int kSearchSpaceVersion = 31;  // 2: recipes; 3: the CPU elementwise recipe; 4: tiled_reduce subgroup=
                                              // and its row recipes (devices that claim SUBGROUP_REDUCE); 5: pack_tile's
                                              // bf16 form (dot=1) and its recipes (devices that claim DOT_BF16); 6: GPU row
                                              // recipes in vectorized blocks (tiled_reduce splits block-storing loops),
                                              // mma_staged's asynchronous multi-stage recipes; 7: row_cache local=1
                                              // (the row in LOCAL memory) and its row recipes, coarsened one-warp rows;
                                              // 8: mma_staged 128 x 256 in 3 stages of k 64, the CUDA dialect's 32-bit
                                              // shared addresses and occupancy launch bounds; 9: wgmma_staged (warp-group
                                              // MMAs on sm_90a) and its 128 x 128 recipes; 10: split_aligned and
                                              // peel_loop and their row recipes (rows that start anywhere, n = 50257),
                                              // the cost model's back-to-back phases at one group per unit, a CPU's
                                              // stack arrays and exp priced anew (softmax caches its exponentials);
                                              // 11: wgmma_staged tf32=1 (the tf32 WGMMA) and its AllowTf32 recipes;
                                              // 12: simt_staged (exact f32 matmul in warp tiles) and its recipes;
                                              // 13: the CPU two-axis-grid recipe (8 x 8 blocks a work-item);
                                              // 14: prefetch_rows (PREFETCH, devices that claim it) and the
                                              // CPU row recipes with the next row prefetched; 15: wgmma_staged b_vec (tf32's
                                              // B stored 2 or 4 k a store) and its AllowTf32 recipe; the GPU row
                                              // recipes with part of the row in LOCAL unroll its loop whole, and
                                              // rows that start anywhere with 12 blocks a thread in registers;
                                              // 16: wgmma_staged swap=1 (C^T = B^T A^T, B^T's fragments from
                                              // registers) first among the AllowTf32 recipes; 17: the CPU softmax
                                              // recipes with the cached exponentials multiply by the sum's reciprocal;
                                              // 18: a CPU softmax recipe that also keeps the max loop's widened row;
                                              // 19: row_cache keeps 16-bit rows as loaded in a GPU's registers when
                                              // their floats would take over half of a thread's share, and the
                                              // recipes with rows that start anywhere whole in registers; 20:
                                              // split_aligned puts a reduction's loose ends first, in one loop
                                              // of constant count, and its row recipes unroll it whole; 21:
                                              // async_copies, and the cached LOCAL row recipes with it first;
                                              // 22: vectorize at any element index on devices that claim it,
                                              // and the CPU recipes for rows of odd length; 23: split_aligned
                                              // flat=1, and the CPU odd-row recipes on aligned blocks;
                                              // 24: row_cache computed=1 (no loaded value kept), the CPU
                                              // softmax recipe that keeps the widened row with it, and the
                                              // CPU softmax recipes with the next row prefetched first;
                                              // 25: the CPU recipe for a row reduction alone (two vector
                                              // accumulators: sum-rows, max-rows); 26: the CPU softmax
                                              // recipes take the max in two vector accumulators first,
                                              // a CPU transpose recipe of 16-element lines, and the
                                              // CPU elementwise recipe in prefetched blocks of 1024;
                                              // 27: pipeline_rows, and the CPU row recipes pipelined
                                              // over eight rows a work-item; 28: stage_input,
                                              // async_copies' zero-filled and deferred-wait copies,
                                              // tiled_reduce subgroup_first; 29: the norms' register
                                              // rows of 12 blocks with subgroup_first; 30: coarsen
                                              // mode 2 (any length), the row recipes' coarsening;
                                              // 31: 16-bit norms' rows whole in registers in blocks
                                              // of 8 with subgroup_first, the copied LOCAL rows'
                                              // subgroup_first twins

using KernelPass = std::function<ir::Kernel(const ir::Kernel&, const DeviceInfo&)>;
using CostModel = std::function<double(const ir::Kernel&, const DeviceInfo&)>;
using StepApplier = std::function<Result<ir::Kernel>(const ir::Kernel&, const passes::OptStep&, const DeviceInfo&)>;
using Lowering = std::function<Result<ir::Kernel>(const ir::Kernel&, const passes::OptSequence&, const DeviceInfo&)>;
using Featurizer = std::function<std::vector<double>(const ir::Kernel&, const DeviceInfo&)>;
using FeatureCost = std::function<double(std::span<const double>)>;

// Threading: normalize, apply, cost, features, feature_cost and lower are
// called from several threads at once (the search's workers, the
// heuristic's, the tuner's compile pool), so each must be thread-safe.
struct SearchSpace {
  // Tunable optimizations, in a stable order (the search visits them so).
  std::vector<const passes::Optimization*> optimizations;
  KernelPass normalize;  // the always-on passes (to a fixed point)
  // One step on a normalized kernel, normalized again: how the search walks
  // from a sequence to its children. Errors name the step.
  StepApplier apply;
  CostModel cost;        // estimated run time in ns; lower ranks first
  // What the learned cost model sees of a kernel the search ranks
  // (passes::cost_features in the default space; empty: nothing is
  // recorded and no learned model ranks this space's candidates).
  Featurizer features = {};
  // When set (with `features`), the search ranks by this estimate in ns of
  // a kernel's features instead of `cost` (one count of the work instead of
  // two): in the default space the analytic estimate taken back from its
  // feature; the tuner sets the learned model (tune/learned_cost.hpp) on a
  // copy.
  FeatureCost feature_cost = {};
  // The whole lowering for a launch (normalize, the steps, finalize,
  // verify): what is measured and what is replayed.
  Lowering lower;
  // Known-good multi-step sequences (tinygrad's hand-coded optimizations):
  // each one that applies to the kernel joins the search as a candidate and
  // is always measured. They reach shapes a random pool rarely finds, e.g.
  // float4 elementwise on a GPU needs coarsen, unroll and vectorize before
  // split_local, while split_local alone is what the cost model favours first.
  std::vector<passes::OptSequence> recipes;
  // Part of the tuning database key: kSearchSpaceVersion and the names of
  // the optimizations, e.g. "1-3f2a09c1".
  std::string version;

  const passes::Optimization* find(std::string_view name) const;
  // The estimate a kernel is ranked by: feature_cost of its `features`
  // where both are set, else `cost` (a NaN as infinity, ranked last).
  double rank_estimate(const ir::Kernel& kernel, const DeviceInfo& device, std::span<const double> features) const;
};

// What a tuning may trade for speed. Exact: candidates compute what the
// kernel says in its dtypes (floating-point sums may be reassociated).
// AllowTf32: f32 matrix products may also run on the tf32 MMA (inputs
// rounded to tf32, kernel_ir.h KILN_OP_MMA); AutotuneSettings::allow_tf32.
enum class Precision { Exact, AllowTf32 };

// kiln's search space: passes::optimizations(), passes::normalize,
// passes::apply_sequence for one step, passes::estimate_cost (total_ns), and
// passes::optimize as the lowering. AllowTf32 adds the tf32 matrix-product
// recipes and has its own version (so its own tuning records).
const SearchSpace& default_search_space(Precision precision = Precision::Exact);

struct TuneOptions;
// The space a tuning with `options` searches: options.space, else the
// default space of options.settings.allow_tf32.
const SearchSpace& search_space_of(const TuneOptions& options);

// A space from parts (tests plant optimizations of their own this way). A
// step is the optimization of that name in `optimizations`, its result
// verified, then normalized; the lowering is verify -> normalize -> the steps
// -> finalize -> verify: the steps passes::optimize takes.
SearchSpace make_search_space(std::vector<const passes::Optimization*> optimizations, KernelPass normalize,
                              KernelPass finalize, CostModel cost);

// "<kSearchSpaceVersion>-<8 hex digits of a hash of the names>".
std::string search_space_version(std::span<const passes::Optimization* const> optimizations);

}  // namespace kiln::tune
