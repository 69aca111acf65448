// refill_rows.cu: hand-written, not kiln's: groups that stay (GRID of them,
// two an SM by default) loop over the rows, one row of shared memory each, and
// every thread copies the next row's chunk into a slot (cp.async) as soon as
// its writing loop has written that slot's chunk out. A thread reads only its
// own slots (chunks c = t, t + TT, ...), so no barrier guards the refill: the
// next row's loads are in flight while this row is written, and a row's start
// waits for no launch and no first load. The question it answers (2026-12-07):
// is the 0.88x ceiling of one row a group on the H200 (a copy through shared
// memory of that shape reached it too) the time each group spends between its
// last store and its next row's first bytes? persistent_rows.cu (one group an
// SM, two buffers) lost on the H100 by halving the groups; this keeps two.
// gen.sh (mode `hand`, SEQUENCE `refill_rows.cu MODE=0 TT=512 GRID=264`) puts
// NN/MM and the defines in front. MODE 0 softmax, 1 layernorm; f16 only.
#include <cuda_fp16.h>
#ifndef MODE
#define MODE 0
#endif
#ifndef TT
#define TT 512
#endif
#ifndef GRID
#define GRID 264
#endif
#define CHUNKS ((NN + 7) / 8 + 1)
// HAND_LAUNCH threads=TT smem=((NN+7)/8+1)*16 params=2 grid=GRID
#include "hand_rows.cuh"
// Chunk c of row r (16 bytes at the row's start rounded down to 8 elements,
// zero-filled past the matrix) into slot c.
static __device__ __forceinline__ void fetch(const unsigned short* x, int r, int c, uint4* b) {
  const long total = (long)MM * NN, base = ((long)r * NN) & ~7L, e = base + 8L * c, rem = total - e;
  const int bytes = rem >= 8 ? 16 : (int)(rem * 2);
  const unsigned sa = (unsigned)__cvta_generic_to_shared(b + c);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(x + e), "r"(bytes) : "memory");
}
static __device__ __forceinline__ int chunks_of(int r) {
  const long s = (long)r * NN, base = s & ~7L;
  return (int)((s + NN - base + 7) >> 3);
}
extern "C" __global__ void __launch_bounds__(TT, 2) k(const unsigned short* __restrict__ x, unsigned short* y) {
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ float red_a[33], red_b[33];
  uint4* const b = (uint4*)dyn;
  if (blockIdx.x < MM)
    for (int c = threadIdx.x; c < chunks_of(blockIdx.x); c += TT) fetch(x, blockIdx.x, c, b);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  for (int r = blockIdx.x; r < MM; r += gridDim.x) {
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    const long s = (long)r * NN, base = s & ~7L;
    const int o = (int)(s - base), nch = chunks_of(r);
    const int next = r + gridDim.x, nnext = next < MM ? chunks_of(next) : 0;
    float a = MODE == 0 ? -INFINITY : 0.f, q = 0.f;
    for (int c = threadIdx.x; c < nch; c += TT) add_chunk_stats(b[c], c, o, a, q);
    float shift, scale;
    if (MODE == 0) {
      const float mx = block_reduce(a, red_a, true);
      float sum = 0.f;
      shift = mx * 1.44269504f;
      for (int c = threadIdx.x; c < nch; c += TT) sum += chunk_exp_sum(b[c], c, o, shift);
      scale = 1.f / block_reduce(sum, red_b, false);
    } else {
      const float sum = block_reduce(a, red_a, false);
      const float sq = block_reduce(q, red_b, false);
      shift = sum * (1.f / NN);
      scale = rsqrtf(fmaxf(sq * (1.f / NN) - shift * shift, 0.f) + 1e-5f);
    }
    // The store of chunk c uses the value read from slot c, so the read is
    // done before the copy into the slot is issued.
    int c = threadIdx.x;
    for (; c < nch; c += TT) {
      write_chunk(b[c], y, base, s, c, o, shift, scale);
      if (c < nnext) fetch(x, next, c, b);
    }
    for (; c < nnext; c += TT) fetch(x, next, c, b);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  }
}
