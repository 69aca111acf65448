// persistent_rows.cu: hand-written, not kiln's: a row kernel with one group
// an SM (132 on the H100 and H200) that loops over the rows, copying the
// next row's 16-byte chunks in (cp.async) while it reduces and writes this
// one, its two row buffers in shared memory (two f16 rows of 50257: 201 KB).
// The question it answers: how far past kiln's one-group-a-row kernels a
// row kernel gets whose memory never waits for a row's reductions. gen.sh
// (mode `hand`, SEQUENCE field `persistent_rows.cu MODE=0`) puts the LAUNCH
// line and NN/MM (the size) in front. MODE 0 softmax, 1 layernorm; f16 only.
#include <cuda_fp16.h>
#ifndef MODE
#define MODE 0
#endif
#define TT 1024
#define CHUNKS ((NN + 7) / 8 + 1)
#include "hand_rows.cuh"
static __device__ __forceinline__ void issue(const unsigned short* x, int r, uint4* b) {
  const long s = (long)r * NN, base = s & ~7L;
  const int nch = row_chunks(s, base);
  for (int c = threadIdx.x; c < nch; c += TT) copy_chunk(x, base, c, b + c);
  asm volatile("cp.async.commit_group;\n");
}
extern "C" __global__ void __launch_bounds__(TT, 1) k(const unsigned short* __restrict__ x, unsigned short* y) {
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ float red_a[33], red_b[33];
  uint4* const buf0 = (uint4*)dyn;
  uint4* const buf1 = (uint4*)(dyn + CHUNKS * 16);
  int cur = 0;
  if (blockIdx.x < MM) issue(x, blockIdx.x, buf0);
  for (int r = blockIdx.x; r < MM; r += gridDim.x) {
    const int next = r + gridDim.x;
    if (next < MM) issue(x, next, cur ? buf0 : buf1); else asm volatile("cp.async.commit_group;\n");
    asm volatile("cp.async.wait_group 1;\n");
    __syncthreads();
    const uint4* b = cur ? buf1 : buf0;
    const long s = (long)r * NN, base = s & ~7L;
    const int o = (int)(s - base), nch = row_chunks(s, base);
    float a = MODE == 0 ? -INFINITY : 0.f, q = 0.f;
    for (int c = threadIdx.x; c < nch; c += TT) add_chunk_stats(b[c], c, o, a, q);
    float mean_or_max, scale;
    if (MODE == 0) {
      mean_or_max = block_reduce(a, red_a, true);
      float sum = 0.f;
      const float ml = mean_or_max * 1.44269504f;
      for (int c = threadIdx.x; c < nch; c += TT) sum += chunk_exp_sum(b[c], c, o, ml);
      scale = 1.f / block_reduce(sum, red_b, false);
      mean_or_max = ml;
    } else {
      const float sum = block_reduce(a, red_a, false);
      const float sq = block_reduce(q, red_b, false);
      const float mean = sum * (1.f / NN);
      const float var = fmaxf(sq * (1.f / NN) - mean * mean, 0.f);
      scale = rsqrtf(var + 1e-5f);
      mean_or_max = mean;
    }
    for (int c = threadIdx.x; c < nch; c += TT) write_chunk(b[c], y, base, s, c, o, mean_or_max, scale);
    __syncthreads();
    cur ^= 1;
  }
}
