// The registry of tunable optimizations: an explicit list, in the order the
// autotuner and `kiln ir --configs` enumerate them. One line per
// optimization, in its area's section (optimizations.hpp declares them).
#include "optimizations.hpp"

#include <string>

namespace kiln::passes {

const std::vector<const Optimization*>& optimizations() {
  static const std::vector<const Optimization*> list = [] {
    std::vector<const Optimization*> all;
    // structural (opts-structural): append above the end marker, one line each, e.g.
    //   all.push_back(&opts::split_local());
    all.push_back(&opts::split_local());
    all.push_back(&opts::coarsen());
    all.push_back(&opts::split_loop());
    all.push_back(&opts::split_aligned());
    all.push_back(&opts::peel_loop());
    all.push_back(&opts::unroll());
    all.push_back(&opts::merge_loops());
    all.push_back(&opts::swap_loops());
    all.push_back(&opts::swap_axes());
    all.push_back(&opts::pad());
    all.push_back(&opts::reassociate());
    // end of structural

    // performance (opts-perf): append above the end marker, one line each
    all.push_back(&opts::register_block());
    all.push_back(&opts::tiled_reduce());
    all.push_back(&opts::local_tile());
    all.push_back(&opts::vectorize());
    all.push_back(&opts::lane_reduce());
    all.push_back(&opts::row_cache());
    all.push_back(&opts::online_softmax());
    all.push_back(&opts::mma_tile());
    all.push_back(&opts::mma_staged());
    all.push_back(&opts::pack_tile());
    all.push_back(&opts::reciprocal_divide());
    all.push_back(&opts::wgmma_staged());
    all.push_back(&opts::simt_staged());
    all.push_back(&opts::prefetch_rows());
    all.push_back(&opts::async_copies());
    all.push_back(&opts::pipeline_rows());
    all.push_back(&opts::stage_input());
    // end of performance

    return all;
  }();
  return list;
}

const Optimization* find_optimization(std::string_view name) {
  for (const Optimization* optimization : optimizations())
    if (optimization->name() == name) return optimization;
  return nullptr;
}

}  // namespace kiln::passes
