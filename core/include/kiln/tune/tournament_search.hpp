// kiln/tune/tournament_search.hpp - the first half of tuning: a tournament search over
// optimization sequences ranked by the cost model, launching nothing (as in
// zyx's autotune.rs; docs/autotune.md describes every step). The second
// half, measurement, is in tuner.hpp.
#pragma once

#include <kiln/ir/kernel.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/runtime/device_info.hpp>
#include <kiln/tune/autotune_config.hpp>
#include <kiln/tune/search_space.hpp>

#include <cstdint>
#include <functional>
#include <vector>

namespace kiln::tune {

struct SearchCandidate {
  passes::OptSequence sequence;  // empty: the untuned kernel
  double cost_ns = 0;            // the cost model's estimate (the learned one when it ranks)
  std::uint64_t hash = 0;        // ir::hash of the normalized kernel it gives (the visited key)
  bool recipe = false;           // one of SearchSpace::recipes (always measured)
  std::vector<double> features = {};  // SearchSpace::features of its kernel (empty: the space has none)
};

struct SearchStats {
  std::uint32_t steps = 0;         // expansions made
  std::uint32_t generated = 0;     // distinct kernels found
  std::uint32_t duplicates = 0;    // variants that gave a kernel already seen
  std::uint32_t failed = 0;        // variants whose apply failed
  std::uint32_t too_large = 0;     // kernels over max_kernel_ops, dropped
  std::uint32_t removed = 0;       // dropped by tournament removal
  bool out_of_time = false;        // stopped by the deadline
};

struct SearchResult {
  ir::Kernel normalized;                  // the kernel every sequence starts from
  std::vector<SearchCandidate> candidates;  // every distinct kernel kept, the untuned one first
  SearchStats stats;
};

// Deterministic for a given kernel, device, space and settings (seed): the
// same candidates in the same order, on any number of threads.
// `out_of_time` is asked before every variant is applied, always on the
// calling thread; once it says yes the search stops with what it has.
// Threading: the variants of a step are applied and ranked on `threads`
// worker threads of the search's own (0: one per core, at most 16; 1: on
// the calling thread), so the space's apply, cost, features and
// feature_cost must be thread-safe (the tuner's compile pool needs the same
// of apply).
SearchResult tournament_search(const ir::Kernel& kernel, const DeviceInfo& device, const SearchSpace& space,
                         const AutotuneSettings& settings, const std::function<bool()>& out_of_time = {},
                         unsigned threads = 0);

// Whether the calling thread is one of a running search's workers (what a
// planted optimization asks to tell the search's applications from a
// compile job's).
bool on_search_thread();

// Every candidate, in the order to measure them, shaped for `launches`
// measured candidates (later ones are spares for candidates that fail or
// lower to a kernel already measured):
//   1. the untuned kernel (the empty sequence);
//   2. the heuristic choice: the candidate the cost model ranks best, then
//      every recipe the search kept (SearchCandidate::recipe);
//   3. the best-ranked one-step sequence of each optimization, up to a
//      quarter of the remaining launches: cheap to compile, each a different
//      direction from the untuned kernel;
//   4. half of the remaining launches by cost;
//   5. then the best-ranked candidate of each family not yet represented
//      (a family: the set of optimizations a sequence uses);
//   6. then the rest by cost.
// 3 and 5 keep a cost model that misjudges one optimization from crowding
// out the others. Ties in cost go to the shorter sequence, then its text.
std::vector<SearchCandidate> measurement_order(const SearchResult& search, std::size_t launches);

}  // namespace kiln::tune
