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
// HAND_LAUNCH threads=TT smem=((NN+7)/8+1)*16 params=2 grid=GRID
#include "hand_rows.cuh"
extern "C" __global__ void __launch_bounds__(TT, 2) k(const unsigned short* __restrict__ x, unsigned short* y) {
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ float red_a[33], red_b[33];
  uint4* const b = (uint4*)dyn;
  if (blockIdx.x < MM) {
    const long first = (long)blockIdx.x * NN, first_base = first & ~7L;
    const int nfirst = row_chunks(first, first_base);
    for (int c = threadIdx.x; c < nfirst; c += TT) copy_chunk(x, first_base, c, b + c);
  }
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  for (int r = blockIdx.x; r < MM; r += gridDim.x) {
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    const long s = (long)r * NN, base = s & ~7L;
    const int o = (int)(s - base), nch = row_chunks(s, base);
    const int next = r + gridDim.x;
    const long next_base = ((long)next * NN) & ~7L;
    const int nnext = next < MM ? row_chunks((long)next * NN, next_base) : 0;
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
    // The store of chunk c uses the value read from slot c, and the fence keeps
    // the compiler from moving that read below the copy that refills the slot.
    int c = threadIdx.x;
    for (; c < nch; c += TT) {
      write_chunk(b[c], y, base, s, c, o, shift, scale);
      if (c < nnext) copy_chunk(x, next_base, c, b + c);
    }
    for (; c < nnext; c += TT) copy_chunk(x, next_base, c, b + c);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  }
}
