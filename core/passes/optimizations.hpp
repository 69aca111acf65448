// The tunable optimizations, each defined in its own file
// core/passes/opt_<name>*.cpp as `const Optimization& opts::<name>()`
// (internal to libkiln; registry.cpp lists them). One line per
// optimization, in its area's section, so that branches merge cleanly.
#pragma once

#include "kiln/passes/optimization.hpp"

namespace kiln::passes::opts {

// structural (split_local, coarsen, split_loop, split_aligned, peel_loop, unroll, merge_loops, reorder, pad, reassociate),
// e.g. `const Optimization& split_local();`
const Optimization& split_local();
const Optimization& coarsen();
const Optimization& split_loop();
const Optimization& split_aligned();
const Optimization& peel_loop();
const Optimization& unroll();
const Optimization& merge_loops();
const Optimization& swap_loops();
const Optimization& swap_axes();
const Optimization& pad();
const Optimization& reassociate();
// end of structural

// performance (register_block, tiled_reduce, local_tile, vectorize, lane_reduce, row_cache, online_softmax, mma_tile, mma_staged, pack_tile, reciprocal_divide, wgmma_staged, simt_staged, prefetch_rows, async_copies, pipeline_rows, stage_input)
const Optimization& register_block();
const Optimization& tiled_reduce();
const Optimization& local_tile();
const Optimization& vectorize();
const Optimization& lane_reduce();
const Optimization& row_cache();
const Optimization& online_softmax();
const Optimization& mma_tile();
const Optimization& mma_staged();
const Optimization& pack_tile();
const Optimization& reciprocal_divide();
const Optimization& prefetch_rows();
const Optimization& wgmma_staged();
const Optimization& simt_staged();
const Optimization& async_copies();
const Optimization& pipeline_rows();
const Optimization& stage_input();
// end of performance

}  // namespace kiln::passes::opts
