// kiln's own search space: the passes library's optimizations, always-on
// pipeline, step application, cost model and lowering.
#include "kiln/passes/cost.hpp"
#include "kiln/passes/cost_features.hpp"
#include "kiln/passes/optimization.hpp"
#include "kiln/passes/pipeline.hpp"
#include "kiln/tune/search_space.hpp"
#include "kiln/tune/tune_options.hpp"

#include <cmath>
#include <span>
#include <string>
#include <string_view>

namespace kiln::tune {

namespace {

// A row kernel's `loops` loops (softmax: max, sum, write; the norms:
// statistics, write), each split into blocks of `lanes` consecutive
// elements (split_loop, the block unrolled: the last loop last, so that no
// step renumbers a loop an earlier step named), the blocks split across
// `threads` threads of one LOCAL axis (tiled_reduce: each thread's block
// stays consecutive; softmax's division by the row sum a multiplication by
// its reciprocal), the row (and softmax's exponentials) cached in
// registers between the loops and every loop fully unrolled, then each
// block's loads and stores vectorized. With 32 threads the reductions are a
// subgroup's shuffles alone (one warp per row: no LOCAL memory, no barrier);
// `subgroup`: larger groups' trees end in one warp's shuffles. Without
// `cache` a thread keeps nothing between the loops: fewer registers, more
// groups per SM overlapping one another's phases, and the later loops read
// the row again from L2 (the rows in flight fit it; DRAM sees each once).
// `rows` > 1 (one warp per row only): each warp does `rows` rows one after
// the other, unrolled (coarsen), so the next row's loads go out while the
// previous row's shuffles and stores run (short rows: a warp's single row
// is a load, a wait and a few shuffles, too little to hide the latency).
// `local_row`: the row (as loaded: 16-bit rows stay 16-bit) kept in LOCAL
// memory instead, each thread its own slots (row_cache local=1: no barrier),
// softmax's exponentials computed again in the writing loop and the loops
// left rolled: few registers, so the groups per SM are bounded by their rows'
// bytes (H200: 227 KB a group, 228 KB an SM; a 16384-element f16 row is 32
// KB, six groups of 256 threads per SM), and DRAM sees each element once.
// `local_exps` (softmax, with local_row): its exponentials kept in LOCAL
// memory too (f32, 4 bytes an element), so the writing loop neither reads
// the row nor computes exp again: at n = 16384, 96 KB a group, two groups of
// 1024 threads per SM at 26 registers (the row alone: 40 registers at 256
// threads, and every exp twice; the H200's MUFU does 16 a cycle per SM).
passes::OptSequence gpu_row_blocks_recipe(int loops, int lanes, int threads, bool cache = true, bool subgroup = false,
                                          int rows = 1, bool local_row = false, bool local_exps = false) {
  std::string text;
  const auto add = [&](const std::string& step) { text += (text.empty() ? "" : "; ") + step; };
  // Softmax divides each element by the row's sum: a multiplication by its
  // reciprocal instead (an IEEE division is about 11 instructions on the
  // H200, and the 16-bit softmax is bound by instructions).
  if (loops == 3) add("reciprocal_divide()");
  for (int loop = loops - 1; loop >= 0; --loop) {
    add("split_loop(loop=" + std::to_string(loop) + ",factor=" + std::to_string(lanes) + ")");
    add("unroll(loop=" + std::to_string(loop + 1) + ",factor=0)");
  }
  for (int loop = 0; loop < loops; ++loop) {
    const bool reduction = loop < loops - 1;
    add("tiled_reduce(loop=" + std::to_string(loop) + ",local=" + std::to_string(threads) +
        (threads == 32 ? ",branch=2" : ",branch=4") + (reduction && (threads == 32 || subgroup) ? ",subgroup=32" : "") + ")");
  }
  if (local_row) {
    if (local_exps && loops == 3) add("row_cache(loop=1,local=1)");
    add("row_cache(loop=0,local=1)");
  } else {
    if (cache && loops == 3) add("row_cache(loop=1)");
    if (cache) add("row_cache(loop=0)");
    for (int loop = loops - 1; loop >= 0; --loop) add("unroll(loop=" + std::to_string(loop) + ",factor=0)");
  }
  add("vectorize(lanes=" + std::to_string(lanes) + ")");
  if (rows > 1) {
    add("coarsen(axis=0,factor=" + std::to_string(rows) + ",mode=2)");  // any row count (mode 2)
    add("unroll(loop=0,factor=0)");
  }
  return passes::parse_sequence(text).value();
}

// Rows no block divides (n = 50257 is odd: the rows start at every
// alignment, so split_loop's blocks would not be aligned and the loads stay
// scalar, 2 bytes a thread for f16): each loop split_aligned into aligned
// blocks of `lanes` and the row's loose ends (the elements before the first
// and after the last block, under 2 * lanes together). A reduction's loose
// ends come first, in one loop of constant count that is written out whole
// here: every thread loads them at its start, ahead of its first block,
// and folds them into its accumulator before the block loop's tree (a
// reduction keeps one tree). The writing loop keeps a head and a tail
// around its blocks, split across the threads (each thread at most one
// element). So the reductions' blocks are loops 0 .. loops - 2 and the
// writing loop's head, blocks and tail loops - 1, loops and loops + 1. The
// blocks are split across `threads` threads and vectorized: 16-byte
// accesses at any n. `local_row`: the row's blocks kept in LOCAL memory
// (row_cache local=1, 16-bit as 16-bit) between the loops; without it the
// later loops read the row again (from L2). Loops stay rolled (unrolled by
// `unroll` when it is above 1; the cached blocks' loop below whole): few
// registers, several groups per SM.
// `cached_blocks` > 0: only each thread's first `cached_blocks` blocks are
// kept (peel_loop splits every block loop there; row_cache keeps the first
// part), the rest read again from L2. With local_row in LOCAL memory: at
// 1024 threads 6 blocks of 16 bytes are 96 KB a group, two groups per SM on
// the H200 (an f32 row of 50257 elements, 201 KB, allows one cached whole;
// the L2 then holds only the uncached rest of the rows in flight). Without
// it in registers: every loop's cached part unrolled whole (12 blocks of 4
// lanes are 48 values a thread at 1024 threads). `cached_blocks` < 0: the
// whole row in registers (no peel; 16-bit rows kept as loaded there, see
// row_cache: 7 blocks of 8 halves are 28 registers a thread at 1024).
// (Where a peel leaves one block, the second loop is a unit loop that
// normalization removes: the numbers below stay those of the blocks.)
passes::OptSequence gpu_row_aligned_recipe(int loops, int lanes, int threads, bool local_row, int unroll = 1,
                                           int cached_blocks = 0, bool async = false, bool subgroup_first = false) {
  std::string text;
  const auto add = [&](const std::string& step) { text += (text.empty() ? "" : "; ") + step; };
  const auto str = [](int v) { return std::to_string(v); };
  const int writing = loops - 1;
  // The block loop of original loop L once every loop is split and the
  // reductions' loose ends are written out.
  const auto blocks = [&](int loop) { return loop < writing ? loop : writing + 1; };
  if (loops == 3) add("reciprocal_divide()");
  for (int loop = writing; loop >= 0; --loop) {
    add("split_aligned(loop=" + str(loop) + ",factor=" + str(lanes) + ")");
    add("unroll(loop=" + str(loop + 2) + ",factor=0)");             // the block's lanes
    if (loop < writing) add("unroll(loop=" + str(loop) + ",factor=0)");  // a reduction's loose ends
  }
  const std::string split = ",local=" + str(threads) + ",branch=4";
  for (int loop = 0; loop < writing; ++loop)
    add("tiled_reduce(loop=" + str(loop) + split + ",subgroup=32" + (subgroup_first ? ",subgroup_first=1)" : ")"));
  for (int loop = writing; loop <= writing + 2; ++loop) add("tiled_reduce(loop=" + str(loop) + split + ")");
  if (cached_blocks > 0)
    for (int loop = writing; loop >= 0; --loop)
      add("peel_loop(loop=" + str(blocks(loop)) + ",count=" + str(cached_blocks) + ")");
  // Unrolled: each thread's last block (the only one under tiled_reduce's
  // guard) peeled off first (it becomes straight code, so the loops keep
  // their numbers), so the unrolled copies' loads are not under an IF and
  // go out together.
  if (unroll > 1 && cached_blocks == 0)
    for (int loop = writing; loop >= 0; --loop) add("peel_loop(loop=" + str(blocks(loop)) + ",count=-1)");
  if (local_row) add("row_cache(loop=0,local=1)");
  // The cached blocks' loop (a constant count) unrolled whole, so all of a
  // thread's cached loads go out before its LOCAL stores: softmax at
  // n = 50257 on the H200, 3292 GB/s against 3056 rolled in f16 and 3075
  // against 2943 in bf16 (same call; docs/passes.md, "GPU figures").
  if (cached_blocks > 0 && local_row) add("unroll(loop=0,factor=0)");
  // In registers: the cache's values are a REGISTER array, so every loop
  // that reads it is unrolled whole too (constant indices).
  if (cached_blocks != 0 && !local_row) {
    add("row_cache(loop=0)");
    for (int loop = writing; loop >= 0; --loop) add("unroll(loop=" + str(blocks(loop)) + ",factor=0)");
  }
  if (unroll > 1)
    for (int loop = writing; loop >= 0; --loop)
      add("unroll(loop=" + str(blocks(loop)) + ",factor=" + str(unroll) + ")");
  add("vectorize(lanes=" + str(lanes) + ")");
  // `async`: the LOCAL row's 16-byte blocks copied in asynchronously, all of
  // a thread's cached blocks in flight at once through no registers (see
  // async_copies).
  if (async) add("async_copies()");
  return passes::parse_sequence(text).value();
}

SearchSpace make_default_space(Precision precision) {
  SearchSpace s;
  s.optimizations = passes::optimizations();
  s.normalize = [](const ir::Kernel& k, const DeviceInfo& d) { return passes::normalize(k, d); };
  s.apply = [](const ir::Kernel& k, const passes::OptStep& step, const DeviceInfo& d) {
    return passes::apply_sequence(k, {step}, d);
  };
  s.cost = [](const ir::Kernel& k, const DeviceInfo& d) { return passes::estimate_cost(k, d).total_ns; };
  s.features = [](const ir::Kernel& k, const DeviceInfo& d) { return passes::cost_features(k, d); };
  // The search ranks by the analytic estimate taken back from its feature
  // (log1p of it, the first): one count of each kernel's work instead of
  // two (features, then cost). A learned model replaces this on a copy.
  s.feature_cost = [](std::span<const double> f) { return std::expm1(f[0]); };
  s.lower = [](const ir::Kernel& k, const passes::OptSequence& seq, const DeviceInfo& d) {
    return passes::optimize(k, seq, d);
  };
  // Recipes that do not fit a kernel or device fail to apply and are skipped.
  for (const char* recipe : {
           // GPU elementwise: one float4 per thread, 256 threads per group.
           "coarsen(axis=0,factor=4,mode=0); unroll(loop=0,factor=0); vectorize(lanes=4); "
           "split_local(axis=0,factor=256)",
           // GPU matrix product: 128x128 LOCAL tiles, 8x8 per thread, float4 copies.
           "local_tile(bm=128,bn=128,bk=8,tm=8,tn=8); vectorize(lanes=4)",
           // Exact f32 matrix products in warp tiles (docs/passes.md, simt_staged), tiles
           // double-buffered through registers. Measured on the H200 (2026-12-03, two
           // calls, torch's sgemm 49.4-51.1 TFLOP/s at 4096^3): 4 warps of 64 x 64 with
           // 16 x 8 a lane, 47.3 TFLOP/s at 4096^3 (0.96x); 8 x 16 in k steps of 16, 46.8
           // (8 x 16 in k 8: 45.8-45.9); 8 warps of 32 x 64 with 8 x 8 a lane in k steps of
           // 16, 41.3; 128 x 64 blocks of 4 warps, 41.4 at 4096^3 and 74.3-75.0 us at
           // 1024^3; 64 x 64 blocks with 8 x 4 a lane, 76.3-77.2 us at 1024^3 (1024^3 has
           // 64 blocks of 128 x 128 for 132 units). The 3-stage cp.async forms measured
           // slower (35.8 and 37.8 TFLOP/s at 4096^3) and are not recipes.
           "simt_staged(bm=128,bn=128,bk=8,wm=2,wn=2,tm=16,tn=8)",
           "simt_staged(bm=128,bn=128,bk=16,wm=2,wn=2,tm=8,tn=16)",
           "simt_staged(bm=128,bn=128,bk=16,wm=4,wn=2,tm=8,tn=8)",
           "simt_staged(bm=128,bn=64,bk=8,wm=4,wn=1,tm=8,tn=8)",
           "simt_staged(bm=64,bn=64,bk=16,wm=2,wn=2,tm=8,tn=4)",
           // GPU matrix product of f16/bf16 on devices that claim the MMA op (sm_80+):
           // 128 x 128 blocks of 4 warps (64 x 64 each), A and B tiles of k 64 staged
           // through shared memory (one stage: two of k 64 exceed the 48 KB of static
           // shared memory); the same with 8 warps (64 x 32 each); k 32 in two stages;
           // small matrices' gathered fragments (4 warps of 32 x 32). Measured on the
           // H200 (docs/passes.md, mma_staged): 253, 234 and 172 TFLOP/s at 4096^3 f16.
           // With asynchronous copies (cp.async, sm_80+), ldmatrix fragments and dynamic
           // shared memory: 128 x 128 of 4 warps in 3 stages of k 64 and in 4 of k 32,
           // 309 and 307 TFLOP/s at 4096^3 f16 on the H200 (docs/passes.md, mma_staged);
           // 128 x 256 of 8 warps in 3 stages of k 32 (268) for other shapes, and of
           // k 64: a quarter less L2 traffic per flop than 128 x 128 blocks and half
           // the barriers of k 32 (not measured yet with loads; docs/passes.md).
           // On devices that claim WGMMA (sm_90a): warp-group MMAs on swizzled
           // shared-memory tiles (docs/passes.md, wgmma_staged), 128 x 128 blocks
           // of two warp groups with one WGMMA group in flight, in 3 stages (two
           // groups per SM) and 4: 500.2 and 476.4 TFLOP/s at 4096^3 f16 on the
           // H200 (0.69x and 0.66x torch); the 4-stage form tuned best at 1024^3.
           "wgmma_staged(bm=128,bn=128,stages=3,inflight=1)",
           "wgmma_staged(bm=128,bn=128,stages=4,inflight=1)",
           "mma_staged(bm=128,bn=128,bk=64,wm=2,wn=2,stages=3,async=1)",
           "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=4,async=1)",
           "mma_staged(bm=128,bn=256,bk=32,wm=2,wn=4,stages=3,async=1)",
           "mma_staged(bm=128,bn=256,bk=64,wm=2,wn=4,stages=3,async=1)",
           "mma_staged(bm=128,bn=128,bk=64,wm=2,wn=2,stages=1)",
           "mma_staged(bm=128,bn=128,bk=64,wm=2,wn=4,stages=1)",
           "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=2)",
           "mma_tile(warps=4,tm=2,tn=4)",
           // CPU (AVX-512) elementwise: 16 consecutive elements per iteration as one
           // vector (libmvec calls, streaming stores into large outputs). First in blocks
           // of 1024 a work-item with the next block prefetched (prefetch_rows, on a device
           // that claims PREFETCH: the C plugin): with streaming stores the hardware's own
           // prefetch of the inputs fell behind on a 2-core Xeon (2026-12-06, 2^26
           // elements, GB/s, against the plain form: exp-chain f32 47.9 / 31.6, f16
           // 32.1 / 10.6, bf16 28.1 / 8.6; add f32 43.4 / 40.8, f16 41.5 / 30.6; blocks
           // of 512 to 4096 within 5%). The model prices the prefetch at nothing, so the
           // two tie and the first is the untuned pick.
           "coarsen(axis=0,factor=1024,mode=0); split_loop(loop=0,factor=16); unroll(loop=1,factor=0); "
           "vectorize(lanes=16); prefetch_rows(loop=0,distance=1)",
           "coarsen(axis=0,factor=16,mode=0); unroll(loop=0,factor=0); vectorize(lanes=16)",
           // The same for a CPU whose groups have threads (PoCL: 16 lanes on AVX-512),
           // 64 work-items a group. On opencl:0 here, 2^24 elements, three interleaved
           // rounds against the GPU elementwise recipe above: exp-chain 7.0-7.9 ms
           // against 14.1-15.1 ms (min of 10), add 6.2-7.1 against 6.4-7.4 ms. Only
           // devices that offer 16-lane vectors take it (not NVIDIA's OpenCL: 4).
           "coarsen(axis=0,factor=16,mode=0); split_local(axis=0,factor=64); unroll(loop=0,factor=0); "
           "vectorize(lanes=16)",
           // CPU two-axis grids (a transpose): first, where axis 0 (the input's row, the
           // output's contiguous index) divides by 16, each work-item writes 16 consecutive
           // output elements (a 64-byte line of f32) from 16 input rows, and the
           // work-items are ordered along axis 1, so a thread's next work-items read the
           // neighbours in those same 16 input lines while they are in L1 (swap_axes
           // refuses a kernel without axis 1: nothing for a 1-D grid).
           // A 30 s tuning on a 2-core Xeon found it (2026-12-06, with a split and merge of
           // the coarsened loop that change nothing; the cost model prices it at a third
           // of the 8 x 8 blocks below, which the heuristic picked for want of it): 2048^2
           // f32 25.6 GB/s against 12.9 for the blocks, f16 8.7 against 5.1, 4096^2 8.7 /
           // 7.1 against 4.2 / 3.2, 8192 x 768 23.6 / 9.0 against 12.3 / 4.1.
           "coarsen(axis=0,factor=16,mode=0); swap_axes(a=0,b=1)",
           // Else each work-item an 8 x 8 block, so each 64-byte line read or written
           // serves 16 elements, not one. On c:0, 2048^2 f32: 4.8 ms against 10-11 ms for
           // one element a work-item (the heuristic's pick before: no recipe fitted) and
           // 3.1-3.7 ms for a 10 s tuning's winner.
           "coarsen(axis=0,factor=8,mode=0); coarsen(axis=1,factor=8,mode=0)",
           // CPU matrix products, BLIS-style (docs/passes.md, pack_tile): AVX-512's 8 x 32
           // register tile (16 zmm accumulators) in blocks of 256 x 512 x k 128 (the best
           // at 2048^3 on c:0), 256 x 256 x k 256 (at 1024^3) and 128 x 256 x k 256
           // (more groups for smaller matrices); AVX2's 6 x 16 tile (12 of 16 ymm).
           "pack_tile(bm=256,bn=512,bk=128,tm=8,tn=32,lanes=16,unroll=4)",
           "pack_tile(bm=256,bn=256,bk=256,tm=8,tn=32,lanes=16,unroll=4)",
           "pack_tile(bm=128,bn=256,bk=256,tm=8,tn=32,lanes=16,unroll=4)",
           "pack_tile(bm=192,bn=256,bk=256,tm=6,tn=16,lanes=8,unroll=4)",
           // Their bf16 form (VDPBF16PS: k pairs packed in u32 words; only on a device
           // that claims dot_bf16, only for bf16 inputs): the same tile and blocks, k
           // steps twice as long (the packed words take half the bytes).
           "pack_tile(bm=256,bn=512,bk=256,tm=8,tn=32,lanes=16,unroll=4,dot=1)",
           "pack_tile(bm=256,bn=256,bk=512,tm=8,tn=32,lanes=16,unroll=4,dot=1)",
           "pack_tile(bm=128,bn=256,bk=512,tm=8,tn=32,lanes=16,unroll=4,dot=1)",
           // CPU (AVX-512) matrix product: an 8x32 register tile, 16-lane vectors (no packing).
           "register_block(loop=0,tm=8,tn=32,unroll=4); vectorize(lanes=16)",
           // Row kernels (docs/passes.md, "Row kernels"). Loops are named by position, so
           // each recipe works from the last loop to the first (a step never renumbers the
           // loops before the one it rewrites). Three loops: softmax (max, sum, write);
           // two: layernorm and rmsnorm (statistics, write).
           // CPU (AVX-512): the writing loop in 16-wide vectors (streaming stores), each
           // reduction in 16 lane partials, i.e. one vector accumulator.
           "split_loop(loop=2,factor=16); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
           "lane_reduce(loop=0,lanes=16); vectorize(lanes=16)",
           // The same with the sum loop's exp(x - max) kept in a stack array for the
           // writing loop (one exp per element instead of two): softmax 4096 x 16384 on
           // c:0 48-56 ms against 92-106 ms. Not the row itself (layernorm, rmsnorm): the
           // writing loop finds it in L1/L2 still, and a stack copy only adds a store and
           // a load per element (44 against 48 ms in f32, 24 against 36 ms in f16). The
           // writing loop's division by the row sum a multiplication by its reciprocal
           // (reciprocal_divide, as on the GPU): vdivps is the costliest op of the loop
           // on Zen 4; 16-bit softmax, bound by its arithmetic, 6-12% faster (64 x 16384
           // in the caches, 2026-12-04: f16 197 -> 176 us, bf16 196 -> 172 us).
           // With the next row prefetched in the loop after the first (prefetch_rows,
           // on a device that claims PREFETCH: the C plugin) first: softmax's
           // exponentials run on a row in the caches while memory would sit idle, so
           // the next row's read goes out under them. The cost model prices the twins
           // alike, so the heuristic keeps the earlier: softmax 4096 x 16384 on c:0
           // (2026-12-06, its tuning's medians) f32 15.1 against 15.7 ms, f16 12.2
           // against 13.3 ms. The max in 32 lane partials, two vector accumulators (as
           // the row reductions' recipe below): on a Xeon vmaxps has 4 cycles of latency,
           // and with one accumulator the max loop of a row in the caches ran at that
           // chain's pace; 16-bit softmax 4096 x 16384 on a 2-core Xeon (2026-12-06, the
           // two alternated, two rounds) f16 20.7-21.4 -> 23.1-23.3 GB/s, bf16
           // 20.3-20.7 -> 22.7-23.0, f32 29.3-29.4 -> 29.6-30.2.
           // Where n is an odd multiple of 16 the max loop's remainder renumbers the loops
           // after it, so the recipes with one accumulator follow as the fallback.
           // First, eight rows a work-item software-pipelined (pipeline_rows): each
           // iteration runs one row's max, the row before's exponentials and the one before
           // that's writing in one fused loop, so the streaming stores go out under the
           // arithmetic and the next row's reads (prefetched one row on from the max) under
           // both (the max in one accumulator: the stages share one count). The model prices
           // it as the unpipelined twin; on a 2-core Xeon, 4096 x 16384 (2026-12-06, two
           // alternated rounds), against the two-accumulator recipe below: f32 30.1-30.8 ->
           // 32.0-32.4 GB/s, f16 22.3-22.5 -> 25.2 (bf16 likewise). Any row count: where 8
           // does not divide it, the last work-item repeats the last row (coarsen mode 2).
           "coarsen(axis=0,factor=8,mode=2); reciprocal_divide(); split_loop(loop=3,factor=16); unroll(loop=4,factor=0); "
           "lane_reduce(loop=2,lanes=16); lane_reduce(loop=1,lanes=16); row_cache(loop=2); vectorize(lanes=16); "
           "prefetch_rows(loop=1,distance=1); pipeline_rows(loop=0)",
           "reciprocal_divide(); split_loop(loop=2,factor=16); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
           "lane_reduce(loop=0,lanes=32); row_cache(loop=1); vectorize(lanes=16); prefetch_rows(loop=1,distance=1)",
           "reciprocal_divide(); split_loop(loop=2,factor=16); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
           "lane_reduce(loop=0,lanes=32); row_cache(loop=1); vectorize(lanes=16)",
           "reciprocal_divide(); split_loop(loop=2,factor=16); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
           "lane_reduce(loop=0,lanes=16); row_cache(loop=1); vectorize(lanes=16); prefetch_rows(loop=1,distance=1)",
           "reciprocal_divide(); split_loop(loop=2,factor=16); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
           "lane_reduce(loop=0,lanes=16); row_cache(loop=1); vectorize(lanes=16)",
           // (Search spaces 24-26 had a recipe here that kept the max loop's widened
           // 16-bit row for the sum loop, row_cache(loop=0,computed=1): 5-10% faster on
           // Zen 4, the slowest of these on the Xeon (20-23 GB/s against 25 pipelined), and
           // priced below the pipelined recipe, so it was the untuned pick. The tuner can
           // still reach it through row_cache's configs.)
           // The norms pipelined likewise, eight rows a work-item (a row's statistics
           // beside the row before's writing), first: 4096 x 16384 on a 2-core Xeon
           // (2026-12-06, two rounds) layernorm f16 28.2-28.6 -> 33.0-34.2 GB/s, bf16
           // 27.2-27.8 -> 31.8-32.2, rmsnorm f16 25.8-26.1 -> 31.5-32.3, bf16 25.5-25.8
           // -> 30.9-32.7; with the prefetch one row on (not the next work-item's),
           // rmsnorm f32 33.8-34.5 -> 39.9-40.0, f16 25.8-26.1 -> 32.7-33.4.
           "coarsen(axis=0,factor=8,mode=2); split_loop(loop=2,factor=16); unroll(loop=3,factor=0); "
           "lane_reduce(loop=1,lanes=16); vectorize(lanes=16); prefetch_rows(loop=1,distance=1); pipeline_rows(loop=0)",
           // The norms likewise, the prefetched twin first: 4096 x 16384 on c:0
           // (2026-12-06, each tuning's medians) it ran 2-17% faster in five of the six
           // (layernorm f16 6.2 against 6.8 ms, rmsnorm bf16 6.7 against 8.0; bf16
           // layernorm 4% slower). (On rows of odd length, below, the plain one won five
           // of six: its blocks keep the plain one first.)
           "split_loop(loop=1,factor=16); unroll(loop=2,factor=0); lane_reduce(loop=0,lanes=16); vectorize(lanes=16); "
           "prefetch_rows(loop=1,distance=1)",
           "split_loop(loop=1,factor=16); unroll(loop=2,factor=0); lane_reduce(loop=0,lanes=16); vectorize(lanes=16)",
           // CPU, rows that are no multiple of 16 (n = 50257: a row starts at every
           // residue). Each loop split_aligned into its loose ends and one loop of whole
           // aligned blocks (flat=1: the shape of a row of length 16 k), then the recipes
           // above on those: the writing loop's blocks split by 16 and vectorized (aligned
           // vectors, streaming stores), the reductions' in lane partials, softmax's
           // exponentials cached from the sum's blocks; the next row prefetched there (the
           // norms: in their writing blocks). Loops after the splits: softmax's max 0-1,
           // sum 2-3 (loose ends, blocks), writing 4-6 (head, blocks, tail); the norms'
           // statistics 0-1, writing 2-4. 1335 x 50257 on c:0 (2026-12-05, docs/passes.md
           // "CPU figures"): f32 softmax 26-29 GB/s with the row's vectors at any index
           // (below) against 31-42 aligned, the norms 23-30 against 33-41.
           // Softmax with the next row prefetched first: the cost model prices the
           // prefetch at nothing (it sees no idle memory to fill), so the twins tie and
           // the heuristic keeps the earlier. On c:0 (2026-12-06, 1024 x 50257, each
           // tuning's medians) the prefetched twin ran 15-17% faster in f32, f16 and
           // bf16 (f16 10.1 against 11.6 ms). The norms' plain blocks won five of six
           // there (by 1-20%), so theirs keep the plain one first. The max's blocks in two
           // vector accumulators first (as at aligned n, above): 1335 x 50257 on a 2-core
           // Xeon (2026-12-06, alternated, two rounds) f32 27.5-27.9 -> 29.1-29.7 GB/s, f16
           // 20.2 -> 22.4-22.7, bf16 20.1-20.3 -> 21.9-22.1. Two forms: where the max's
           // blocks are an odd count of 16 (n = 101, 1000) its last 16 lanes run in a loop
           // of their own, which renumbers the sum's blocks 3 -> 4. The one-accumulator
           // forms follow as before. First of all, eight rows a work-item pipelined (as at
           // aligned n; pipeline_rows fuses the blocks, the loose ends stay with their
           // stage, the row's max is carried to the writing stage's), the next row
           // prefetched from the max's blocks: 1336 x 50257 on the Xeon (2026-12-06,
           // alternated rounds) f16 22.9-23.0 -> 24.4-26.6 GB/s, bf16 22.2-22.5 -> 22.3-24.5,
           // f32 level (25.1-28.2 against 26.4-27.9).
           "coarsen(axis=0,factor=8,mode=2); reciprocal_divide(); split_aligned(loop=3,factor=16,flat=1); "
           "split_aligned(loop=2,factor=16,flat=1); split_aligned(loop=1,factor=16,flat=1); split_loop(loop=6,factor=16); "
           "unroll(loop=7,factor=0); lane_reduce(loop=4,lanes=16); lane_reduce(loop=2,lanes=16); row_cache(loop=4); "
           "vectorize(lanes=16); prefetch_rows(loop=2,distance=1); pipeline_rows(loop=0)",
           "reciprocal_divide(); split_aligned(loop=2,factor=16,flat=1); split_aligned(loop=1,factor=16,flat=1); "
           "split_aligned(loop=0,factor=16,flat=1); split_loop(loop=5,factor=16); unroll(loop=6,factor=0); "
           "lane_reduce(loop=3,lanes=16); lane_reduce(loop=1,lanes=32); row_cache(loop=3); vectorize(lanes=16); "
           "prefetch_rows(loop=3,distance=1)",
           "reciprocal_divide(); split_aligned(loop=2,factor=16,flat=1); split_aligned(loop=1,factor=16,flat=1); "
           "split_aligned(loop=0,factor=16,flat=1); split_loop(loop=5,factor=16); unroll(loop=6,factor=0); "
           "lane_reduce(loop=3,lanes=16); lane_reduce(loop=1,lanes=32); row_cache(loop=4); vectorize(lanes=16); "
           "prefetch_rows(loop=4,distance=1)",
           "reciprocal_divide(); split_aligned(loop=2,factor=16,flat=1); split_aligned(loop=1,factor=16,flat=1); "
           "split_aligned(loop=0,factor=16,flat=1); split_loop(loop=5,factor=16); unroll(loop=6,factor=0); "
           "lane_reduce(loop=3,lanes=16); lane_reduce(loop=1,lanes=16); row_cache(loop=3); vectorize(lanes=16); "
           "prefetch_rows(loop=3,distance=1)",
           "reciprocal_divide(); split_aligned(loop=2,factor=16,flat=1); split_aligned(loop=1,factor=16,flat=1); "
           "split_aligned(loop=0,factor=16,flat=1); split_loop(loop=5,factor=16); unroll(loop=6,factor=0); "
           "lane_reduce(loop=3,lanes=16); lane_reduce(loop=1,lanes=16); row_cache(loop=3); vectorize(lanes=16)",
           // The norms pipelined first, the next row prefetched from the statistics' blocks:
           // 1336 x 50257 on the Xeon (2026-12-06, two rounds) layernorm f32 31.8-33.9 ->
           // 37.6-39.8 GB/s, f16 25.2-25.5 -> 33.6-34.4, bf16 25.2-26.0 -> 31.3-31.6
           // (prefetched from the writing blocks instead: level with the plain blocks).
           "coarsen(axis=0,factor=8,mode=2); split_aligned(loop=2,factor=16,flat=1); split_aligned(loop=1,factor=16,flat=1); "
           "split_loop(loop=4,factor=16); unroll(loop=5,factor=0); lane_reduce(loop=2,lanes=16); vectorize(lanes=16); "
           "prefetch_rows(loop=2,distance=1); pipeline_rows(loop=0)",
           "split_aligned(loop=1,factor=16,flat=1); split_aligned(loop=0,factor=16,flat=1); split_loop(loop=3,factor=16); "
           "unroll(loop=4,factor=0); lane_reduce(loop=1,lanes=16); vectorize(lanes=16)",
           "split_aligned(loop=1,factor=16,flat=1); split_aligned(loop=0,factor=16,flat=1); split_loop(loop=3,factor=16); "
           "unroll(loop=4,factor=0); lane_reduce(loop=1,lanes=16); vectorize(lanes=16); prefetch_rows(loop=3,distance=1)",
           // Where split_aligned finds no row start to align to (its anchor is an access at
           // base + counter): split_loop leaves the last n % 16 iterations in a loop of
           // their own (tail=1) as lane_reduce does, the accesses vectorized at any element
           // index (KILN_FEATURE_UNALIGNED_VECTORS, which the C plugin claims). lane_reduce's
           // remainder loops shift the later loops' numbers by one each, but where n % 16 is
           // 1 normalize writes them out (one iteration): so softmax's exponentials are
           // cached from loop 1 or 2 and the next row is prefetched there (the norms: in
           // their writing loop, 1 or 2).
           "reciprocal_divide(); split_loop(loop=2,factor=16,tail=1); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
           "lane_reduce(loop=0,lanes=16); row_cache(loop=1); vectorize(lanes=16); prefetch_rows(loop=1,distance=1)",
           "reciprocal_divide(); split_loop(loop=2,factor=16,tail=1); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
           "lane_reduce(loop=0,lanes=16); row_cache(loop=2); vectorize(lanes=16); prefetch_rows(loop=2,distance=1)",
           "split_loop(loop=1,factor=16,tail=1); unroll(loop=2,factor=0); lane_reduce(loop=0,lanes=16); vectorize(lanes=16); "
           "prefetch_rows(loop=1,distance=1)",
           "split_loop(loop=1,factor=16,tail=1); unroll(loop=2,factor=0); lane_reduce(loop=0,lanes=16); vectorize(lanes=16); "
           "prefetch_rows(loop=2,distance=1)",
           // One reduction over a row (sum-rows, max-rows): 32 lane partials, two vector
           // accumulators (one is a chain of dependent adds: at 2048^2 on c:0, in the
           // L3, f16 sums took 145-150 us with one, 99-106 with two; the same from
           // DRAM). The row recipes above need a writing loop; without this the 16-bit
           // sums took the elementwise recipe below (16 rows a work-item, a strided
           // gather per vector) or scalar loads: on c:0, 2048^2 f16, 1.7-2.3 ms. With
           // the next row prefetched, as the row recipes above: only the C plugin
           // claims PREFETCH, and on PoCL (opencl:0) 16-wide vectors ran 1.2-4x
           // slower than scalar lane partials (sum-rows f32 4096 x 16384 10.4 against
           // 8.9 ms, 2048^2 1.17 against 0.31 ms); on c:0 the prefetch costs nothing.
           "lane_reduce(loop=0,lanes=32); vectorize(lanes=16); prefetch_rows(loop=0,distance=1)",
           // Without vector accesses at any index: lane partials only (scalar loads).
           "lane_reduce(loop=1,lanes=16); lane_reduce(loop=0,lanes=16)",
           "lane_reduce(loop=0,lanes=16)",
           // GPU: a row per group, every loop split across the group's threads (one LOCAL
           // axis, coalesced), each thread's share of the row and of softmax's exp(x - max)
           // kept in registers between the loops (row_cache, then full unrolling gives the
           // arrays constant indices), so memory sees each element once. 1024 threads for
           // long rows (up to 64K elements: 64 per thread), 256 for short ones.
           "tiled_reduce(loop=0,local=1024,branch=4); tiled_reduce(loop=1,local=1024,branch=4); "
           "tiled_reduce(loop=2,local=1024,branch=4); row_cache(loop=1); row_cache(loop=0); unroll(loop=2,factor=0); "
           "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
           "tiled_reduce(loop=0,local=256,branch=4); tiled_reduce(loop=1,local=256,branch=4); "
           "tiled_reduce(loop=2,local=256,branch=4); row_cache(loop=1); row_cache(loop=0); unroll(loop=2,factor=0); "
           "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
           // Rows too long for both arrays in a thread's registers (n = 50257 at 1024
           // threads): the exponentials only; the sum loop re-reads the row (from L2).
           "tiled_reduce(loop=0,local=1024,branch=4); tiled_reduce(loop=1,local=1024,branch=4); "
           "tiled_reduce(loop=2,local=1024,branch=4); row_cache(loop=1); unroll(loop=2,factor=0); "
           "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
           "tiled_reduce(loop=0,local=1024,branch=4); tiled_reduce(loop=1,local=1024,branch=4); row_cache(loop=0); "
           "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
           "tiled_reduce(loop=0,local=256,branch=4); tiled_reduce(loop=1,local=256,branch=4); row_cache(loop=0); "
           "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
           // The same two on devices that claim SUBGROUP_REDUCE in warps of 32 (CUDA):
           // each reduction's tree ends at 32 partials, which one warp shuffle
           // butterfly combines (docs/passes.md, tiled_reduce); elsewhere they fail
           // to apply and are skipped.
           "tiled_reduce(loop=0,local=1024,branch=4,subgroup=32); tiled_reduce(loop=1,local=1024,branch=4,subgroup=32); "
           "tiled_reduce(loop=2,local=1024,branch=4); row_cache(loop=1); row_cache(loop=0); unroll(loop=2,factor=0); "
           "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
           "tiled_reduce(loop=0,local=256,branch=4,subgroup=32); tiled_reduce(loop=1,local=256,branch=4); "
           "row_cache(loop=0); unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
           // Softmax rows too long for a thread's registers to hold the row and its
           // exponentials (n = 50257 at 1024 threads: 50 each): the row alone, which
           // the sum and the writing loop both read (the writing loop computes its
           // exponentials again: cheaper than a second read of the row); exactly, and
           // with the division by the sum a multiplication by its reciprocal.
           "tiled_reduce(loop=0,local=1024,branch=4); tiled_reduce(loop=1,local=1024,branch=4); "
           "tiled_reduce(loop=2,local=1024,branch=4); row_cache(loop=0); unroll(loop=2,factor=0); "
           "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
           "reciprocal_divide(); tiled_reduce(loop=0,local=1024,branch=4); tiled_reduce(loop=1,local=1024,branch=4); "
           "tiled_reduce(loop=2,local=1024,branch=4); row_cache(loop=0); unroll(loop=2,factor=0); "
           "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
           // The exponentials-only recipe above with the reciprocal (at n = 50257 on the
           // H200 it ran 4% faster than caching the row, both exact).
           "reciprocal_divide(); tiled_reduce(loop=0,local=1024,branch=4); tiled_reduce(loop=1,local=1024,branch=4); "
           "tiled_reduce(loop=2,local=1024,branch=4); row_cache(loop=1); unroll(loop=2,factor=0); "
           "unroll(loop=1,factor=0); unroll(loop=0,factor=0)",
       }) {
    s.recipes.push_back(passes::parse_sequence(recipe).value());
    // Each pipelined CPU row recipe (eight rows a work-item, any row count:
    // coarsen mode 2 repeats the last row in place of the rows past m) is
    // followed by its twin with four, which repeats none where 4 divides the
    // rows and 8 does not (4096 x 16384, two rounds: f16 softmax 23.4-24.5
    // GB/s against 24.4-24.7 with eight, rmsnorm 29.2-31.0 against 31.1; f32
    // within 3%). Before search space 30 the eight-row recipes took multiples
    // of 8 only and other row counts the unpipelined recipes: 4095 x 16384 on
    // a 2-core Xeon (2026-12-07, the untuned pick against the unpipelined one
    // it was before, two alternated rounds) softmax f16 31.1-31.2 GB/s
    // against 26.6-27.4, f32 33.6-34.2 against 30.7-30.8, the norms 12-29%
    // faster, and 1335 x 50257 rows 3-62% (docs/passes.md, "pipeline_rows").
    constexpr std::string_view kEightRows = "coarsen(axis=0,factor=8,mode=2); ";
    if (const std::string_view text = recipe; text.starts_with(kEightRows) && text.find("pipeline_rows") != text.npos)
      s.recipes.push_back(
          passes::parse_sequence("coarsen(axis=0,factor=4,mode=0); " + std::string(text.substr(kEightRows.size()))).value());
  }
  // GPU rows in blocks of consecutive elements, for 16-bit rows above all (a
  // warp's 2-byte accesses move 64 bytes, and the H200 issued more
  // instructions per element than it moved bytes): softmax (3 loops) and the
  // norms (2 loops), 8 or 4 lanes, a row per group of 1024 to 128 threads or
  // of one warp (32: short rows, reduced by shuffles alone), the row and
  // softmax's exponentials cached (docs/passes.md, "Row kernels"). Where the
  // threads would get fewer than 2 blocks each, or more than their registers
  // cache, a recipe fails to apply and is skipped.
  for (int lanes : {8, 4})
    for (int loops : {3, 2})
      for (int threads : {1024, 512, 256, 128, 32}) {
        // Short rows, one warp per row: each warp doing two rows (coarsen) first,
        // then one, then four. On the H200 (2026-12-03) softmax at n = 768 in f16
        // ran 0.89x of add with two rows a warp, 0.73x with one; the cost model
        // scores them alike, so the heuristic keeps the first. Where the rows are
        // no multiple of `rows`, the recipe fails to apply.
        if (threads == 32) s.recipes.push_back(gpu_row_blocks_recipe(loops, lanes, threads, true, false, 2));
        s.recipes.push_back(gpu_row_blocks_recipe(loops, lanes, threads));
        if (threads == 32) s.recipes.push_back(gpu_row_blocks_recipe(loops, lanes, threads, true, false, 4));
      }
  // The same without the register cache, trees ending in shuffles: on the H200
  // (2026-12-03) the cached kernels ran each group's load, trees and writes
  // back to back with little to overlap them (0.69x of add for f16 softmax
  // at n = 16384).
  for (int lanes : {8, 4})
    for (int loops : {3, 2})
      for (int threads : {1024, 512, 256})
        s.recipes.push_back(gpu_row_blocks_recipe(loops, lanes, threads, /*cache=*/false, /*subgroup=*/true));
  // The row in LOCAL memory (row_cache local=1): in blocks of 8 or 4 at 1024
  // to 256 threads, and for rows no block divides (n = 50257: a 100 KB f16
  // row, two groups of 1024 threads per SM where the register cache allows
  // one) element by element at 1024 or 512 threads, each loop unrolled by 4.
  for (int lanes : {8, 4})
    for (int loops : {3, 2})
      for (int threads : {256, 512, 1024})
        s.recipes.push_back(gpu_row_blocks_recipe(loops, lanes, threads, false, true, 1, /*local_row=*/true));
  // Softmax with its exponentials in LOCAL memory as well (gpu_row_blocks_recipe).
  for (int threads : {1024, 512})
    s.recipes.push_back(gpu_row_blocks_recipe(3, 8, threads, false, true, 1, /*local_row=*/true, /*local_exps=*/true));
  for (const char* recipe : {
           "reciprocal_divide(); tiled_reduce(loop=0,local=1024,branch=4,subgroup=32); "
           "tiled_reduce(loop=1,local=1024,branch=4,subgroup=32); tiled_reduce(loop=2,local=1024,branch=4); "
           "row_cache(loop=0,local=1); unroll(loop=2,factor=4); unroll(loop=1,factor=4); unroll(loop=0,factor=4)",
           "reciprocal_divide(); tiled_reduce(loop=0,local=512,branch=4,subgroup=32); "
           "tiled_reduce(loop=1,local=512,branch=4,subgroup=32); tiled_reduce(loop=2,local=512,branch=4); "
           "row_cache(loop=0,local=1); unroll(loop=2,factor=4); unroll(loop=1,factor=4); unroll(loop=0,factor=4)",
           "tiled_reduce(loop=0,local=1024,branch=4,subgroup=32); tiled_reduce(loop=1,local=1024,branch=4); "
           "row_cache(loop=0,local=1); unroll(loop=1,factor=4); unroll(loop=0,factor=4)",
           "tiled_reduce(loop=0,local=512,branch=4,subgroup=32); tiled_reduce(loop=1,local=512,branch=4); "
           "row_cache(loop=0,local=1); unroll(loop=1,factor=4); unroll(loop=0,factor=4)",
       })
    s.recipes.push_back(passes::parse_sequence(recipe).value());
  // Rows no block divides (n = 50257), streamed: a group of 1024 or 512 threads
  // per row without a register cache (the cached recipes above take 64
  // registers at 1024 threads: one group per SM, each row's phases back to
  // back, 0.41-0.53x of add), so that two or four groups per SM overlap and a
  // row's later reads come from L2; trees ending in shuffles. ptxas unrolls
  // the 1024-thread loops itself (22 registers at n = 50257); at 512 threads
  // an unroll by 4 keeps 32 registers (four groups per SM).
  for (const char* recipe : {
           "reciprocal_divide(); tiled_reduce(loop=0,local=1024,branch=4,subgroup=32); "
           "tiled_reduce(loop=1,local=1024,branch=4,subgroup=32); tiled_reduce(loop=2,local=1024,branch=4)",
           "reciprocal_divide(); tiled_reduce(loop=0,local=512,branch=4,subgroup=32); "
           "tiled_reduce(loop=1,local=512,branch=4,subgroup=32); tiled_reduce(loop=2,local=512,branch=4); "
           "unroll(loop=2,factor=4); unroll(loop=1,factor=4); unroll(loop=0,factor=4)",
           "tiled_reduce(loop=0,local=1024,branch=4,subgroup=32); tiled_reduce(loop=1,local=1024,branch=4)",
           "tiled_reduce(loop=0,local=512,branch=4,subgroup=32); tiled_reduce(loop=1,local=512,branch=4); "
           "unroll(loop=1,factor=4); unroll(loop=0,factor=4)",
       })
    s.recipes.push_back(passes::parse_sequence(recipe).value());
  // Rows that start anywhere (n = 50257): aligned blocks of 8 or 4 with a
  // scalar head and tail (split_aligned), at 1024 or 512 threads, the row in
  // LOCAL memory or read again from L2 (see gpu_row_aligned_recipe). Where
  // the rows are aligned already (n a multiple of the block) they fail to
  // apply: the block recipes above are those.
  // On the H200 (2026-12-03, n = 50257, rolled loops) blocks of 8 halves
  // (16-byte accesses) ran 1.5-2.8x slower than blocks of 4 (8-byte) in
  // every f16/bf16 kernel, and f32's blocks of 4 (16 bytes) trailed the
  // scalar register-cached rows. The likely cause (not profiled): a rolled
  // loop whose body sits under tiled_reduce's guard has one load a thread
  // in flight, unless ptxas predicates the body (which it can for the short
  // body of 4 halves, not for 8): two groups of 1024 threads then keep
  // 16 KB an SM in flight, under the ~33 KB an H200 SM needs for its share
  // of the bandwidth (~33 GB/s x ~1 us). So the unrolled forms come first
  // (the cost model ranks them alike): each thread's guarded last block
  // peeled, the rest unrolled by 4, four loads a thread in flight; then the
  // rolled ones in blocks of 4, then 96 KB of the row cached a group (16-byte
  // blocks: 6 a thread at 1024 threads, 12 at 512), the rest read again.
  // First of all, 12 blocks of 4 a thread at 1024 threads cached in
  // registers (the rest read again): on the H200 at n = 50257 (2026-12-04,
  // by hand) rmsnorm 0.78x of add in f16 and bf16 (tuned before: 0.65x and
  // 0.69x), 0.83x in f32 (0.75x), layernorm 0.79-0.91x (0.76-0.90x); softmax
  // f16/bf16 keeps its LOCAL rows (0.57x this way against 0.75x).
  // Before them, 16-bit rows whole in registers as loaded (blocks of 8, 28
  // registers a thread at 1024 threads; row_cache keeps the bits): on the
  // H100 (2026-12-05, add 3012 GB/s) layernorm 0.93x / 0.92x of add in f16 /
  // bf16 (the LOCAL row: 0.90x / 0.91x), rmsnorm 0.88x in f16 (0.82x), but
  // 0.74x in bf16 (ptxas spills 20 bytes) and softmax 0.72x / 0.65x (one
  // group an SM: its exponentials do not overlap the next row's loads). On
  // the H200 (same day, 12 s tunings) it won no row: one group an SM leaves
  // too few bytes in flight there.
  // First of all the cached LOCAL rows copied in asynchronously (every
  // cached block of a thread in flight at once, no registers): on the H200
  // at n = 50257 (2026-12-05, the emitted kernels timed by hand) softmax
  // f16 0.78x -> 0.87x of an add, bf16 0.78x -> 0.85x, layernorm f16 0.75x
  // -> 0.90x (docs/passes.md, async_copies). Where the device has no
  // asynchronous copies they fail to apply. Each in blocks of 8 is followed by
  // its twin with the reductions' warps first (subgroup_first: softmax's two
  // reductions a barrier each instead of four): level on an H100 (2026-12-06
  // 22:50, bench/gpu-hand); on the H200, whose rows seem to lose a fixed time
  // a row with the reductions in it (bench/gpu-hand/README.md, refill), for
  // the tuner to measure. The heuristic prices the twins alike and keeps the
  // first, the tree.
  for (int threads : {512, 1024})
    for (int loops : {3, 2})
      for (int lanes : {8, 4}) {
        s.recipes.push_back(gpu_row_aligned_recipe(loops, lanes, threads, true, 1, 6 * 1024 / threads, true));
        if (lanes == 8)
          s.recipes.push_back(gpu_row_aligned_recipe(loops, lanes, threads, true, 1, 6 * 1024 / threads, true, true));
      }
  for (int loops : {2, 3}) s.recipes.push_back(gpu_row_aligned_recipe(loops, 8, 1024, false, 1, -1));
  // The norms' twin with the statistics' tree as warps first (tiled_reduce
  // subgroup_first: one barrier instead of five), ahead of it: on an H100
  // (2026-12-06 22:50 and 2026-12-07 00:35, by hand, bench/gpu-hand) rmsnorm
  // f32 at n = 50257 0.93 -> 0.94-0.95x of an add (no spill: the tree's
  // slots no longer hold registers), layernorm f32 0.95 -> 0.95-0.96x.
  // Then the 16-bit norms' rows whole in registers in blocks of 8 (6 a thread
  // at 1024 threads, 16-bit as loaded), warps first: on the H200 (2026-12-06
  // 05:05) layernorm bf16 tuned to a register row at 0.91x of an add where f16
  // kept the async LOCAL row at 0.89x; this form on an H100 (2026-12-07 08:26,
  // gpu-check with bench/gpu-hand/rows-persist.opts) layernorm f16 0.95x, bf16
  // 0.96x, rmsnorm f16 0.94x. The cost model prices it above the async LOCAL
  // rows, so it is a candidate for the tuner, not the untuned pick.
  s.recipes.push_back(gpu_row_aligned_recipe(3, 4, 1024, false, 1, 12));
  s.recipes.push_back(gpu_row_aligned_recipe(2, 4, 1024, false, 1, 12, false, /*subgroup_first=*/true));
  s.recipes.push_back(gpu_row_aligned_recipe(2, 4, 1024, false, 1, 12));
  s.recipes.push_back(gpu_row_aligned_recipe(2, 8, 1024, false, 1, 6, false, /*subgroup_first=*/true));
  for (int lanes : {8, 4})
    for (int loops : {3, 2})
      for (int threads : {1024, 512})
        for (bool local_row : {true, false}) {
          s.recipes.push_back(gpu_row_aligned_recipe(loops, lanes, threads, local_row, 4));
          if (lanes == 4) s.recipes.push_back(gpu_row_aligned_recipe(loops, lanes, threads, local_row));
          if (local_row) s.recipes.push_back(gpu_row_aligned_recipe(loops, lanes, threads, true, 1, 6 * 1024 / threads));
        }
  s.version = search_space_version(s.optimizations);
  if (precision == Precision::AllowTf32) {
    // f32 matrix products on the tf32 MMA (m16n8k8): mma_staged never
    // proposes tf32 itself (it changes the numerics), so these recipes are
    // how a tuning that allows it reaches it. The f16 blocks halved in k
    // (a tf32 element is 4 bytes), measured by hand on the H200 at 4096^3
    // (docs/passes.md, mma_staged). First the tf32 warp-group MMA on sm_90a
    // (wgmma_staged tf32=1; elsewhere it does not apply): 256 x 128 (four
    // warp groups, the fewest B elements a thread stages through its
    // registers: 199.6 TFLOP/s at 4096^3 on the H200 against 133 for
    // 128 x 128 and 128 x 256), in 3 stages and in 4 (201.1), then 128 x 256
    // and 128 x 128. B copied and transposed in LOCAL (b_async=1) measured
    // slower (153.0; docs/passes.md), so no recipe proposes it. First of all
    // 256 x 128 in 4 stages with B's transpose stored two k a store and the
    // WGMMAs issued before the refill (b_vec=2, mma_first=1): 208.7 against
    // 202.4 for the same without, in one H200 call. Before it (search space
    // 16) C^T = B^T A^T with B^T's fragments from registers, no transpose of
    // B at all (swap=1): 281.3 TFLOP/s with one group in flight, 278.9
    // without, against 208.8 for the b_vec=2 form (H200, 2026-12-04).
    for (const char* recipe : {
             "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,mma_first=1,tf32=1,swap=1)",
             "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,mma_first=1,tf32=1,b_vec=2)",
             "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1)",
             "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1)",
             "wgmma_staged(bm=128,bn=256,stages=3,inflight=0,tf32=1)",
             "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1)",
             "mma_staged(bm=128,bn=256,bk=16,wm=2,wn=4,stages=4,async=1,tf32=1)",
             "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=4,stages=3,async=1,tf32=1)",
             "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=1,tf32=1)",
             "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=4,stages=1,tf32=1)",
             "mma_staged(bm=128,bn=128,bk=16,wm=2,wn=2,stages=2,tf32=1)",
             "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,stages=1,tf32=1)",
         })
      s.recipes.push_back(passes::parse_sequence(recipe).value());
    s.version += "+tf32";
  }
  return s;
}

}  // namespace

const SearchSpace& default_search_space(Precision precision) {
  static const SearchSpace exact = make_default_space(Precision::Exact);
  static const SearchSpace tf32 = make_default_space(Precision::AllowTf32);
  return precision == Precision::AllowTf32 ? tf32 : exact;
}

const SearchSpace& search_space_of(const TuneOptions& options) {
  if (options.space != nullptr) return *options.space;
  return default_search_space(options.settings.allow_tf32 ? Precision::AllowTf32 : Precision::Exact);
}

}  // namespace kiln::tune
