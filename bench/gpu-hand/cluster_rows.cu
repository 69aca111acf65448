// cluster_rows.cu: hand-written, not kiln's: a row kernel whose row is split
// over the CL groups of a thread-block cluster (sm_90). Each group copies its
// 1/CL of the row's 16-byte chunks into its shared memory (cp.async), reduces
// them, and the groups exchange their partial statistics through distributed
// shared memory; then each writes its part. The question it answers (issue
// 13, n = 50257, 16-bit rows on the H200): kiln's one-group-a-row kernels keep
// 100 KB of a row in shared memory, two groups an SM, whose loads, trees and
// writes run in turn; a hand-written copy through shared memory of that shape
// reached 0.88x of an add. Do CL-times smaller groups (CL x as many an SM,
// the same bytes on chip) overlap those phases better, with no byte read
// twice? gen.sh (mode `hand`) puts NN/MM and the defines in front, and the
// launch line below, evaluated for the size, as the LAUNCH line.
// MODE 0 softmax, 1 layernorm; f16 only. CL 2 (512 threads) or 4 (256); CL 1
// is the same code one group a row, for comparison (TT: other thread counts).
// HAND_LAUNCH threads=TT smem=((((NN+7)/8+1)+CL-1)/CL)*16 params=2 grid=MM*CL
#include <cooperative_groups.h>
#include <cuda_fp16.h>
namespace cg = cooperative_groups;
#ifndef MODE
#define MODE 0
#endif
#ifndef CL
#define CL 2
#endif
#ifndef TT
#define TT (1024 / CL)
#endif
#define CHUNKS ((NN + 7) / 8 + 1)
#define PART ((CHUNKS + CL - 1) / CL)
#include "hand_rows.cuh"
// The cluster's total (or max) of each group's `mine`, published in `slot`
// (shared, one per group) and read from every group of the cluster.
static __device__ float cluster_combine(cg::cluster_group& cluster, float mine, float* slot, bool is_max) {
  if (threadIdx.x == 0) *slot = mine;
  cluster.sync();
  float all = is_max ? -INFINITY : 0.f;
  for (int g = 0; g < CL; ++g) {
    const float v = *cluster.map_shared_rank(slot, g);
    all = is_max ? fmaxf(all, v) : all + v;
  }
  return all;
}
extern "C" __global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(TT) k(const unsigned short* __restrict__ x, unsigned short* y) {
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ float red[33], slot_a, slot_b, slot_c;
  cg::cluster_group cluster = cg::this_cluster();
  const int part = (int)cluster.block_rank();
  const long r = blockIdx.x / CL;
  uint4* const b = (uint4*)dyn;
  const long s = r * NN, base = s & ~7L;
  const int o = (int)(s - base), nch = row_chunks(s, base);
  const int c0 = part * PART, c1 = min(nch, c0 + PART);
  for (int c = c0 + threadIdx.x; c < c1; c += TT) copy_chunk(x, base, c, b + (c - c0));
  asm volatile("cp.async.commit_group;\n");
  asm volatile("cp.async.wait_group 0;\n");
  __syncthreads();
  float a = MODE == 0 ? -INFINITY : 0.f, q = 0.f;
  for (int c = c0 + threadIdx.x; c < c1; c += TT) add_chunk_stats(b[c - c0], c, o, a, q);
  float shift, scale;
  if (MODE == 0) {
    const float row_max = cluster_combine(cluster, block_reduce(a, red, true), &slot_a, true);
    const float ml = row_max * 1.44269504f;
    float sum = 0.f;
    for (int c = c0 + threadIdx.x; c < c1; c += TT) sum += chunk_exp_sum(b[c - c0], c, o, ml);
    scale = 1.f / cluster_combine(cluster, block_reduce(sum, red, false), &slot_b, false);
    shift = ml;
  } else {
    const float sum = cluster_combine(cluster, block_reduce(a, red, false), &slot_a, false);
    const float sq = cluster_combine(cluster, block_reduce(q, red, false), &slot_c, false);
    const float mean = sum * (1.f / NN);
    const float var = fmaxf(sq * (1.f / NN) - mean * mean, 0.f);
    scale = rsqrtf(var + 1e-5f);
    shift = mean;
  }
  // The other groups may still read this one's slots: arrive now, wait at the end.
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  for (int c = c0 + threadIdx.x; c < c1; c += TT) write_chunk(b[c - c0], y, base, s, c, o, shift, scale);
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
