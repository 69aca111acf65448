// hand_rows.cuh: what the hand-written row kernels of this folder share
// (persistent_rows.cu, cluster_rows.cu, split_rows.cu, refill_rows.cu): a
// row's chunks and their copies into shared memory, exp2, the warp and group
// reductions, and the writing of a row's 16-byte chunk. Included after the
// defines gen.sh puts in front (NN, MM, MODE, TT); gen.sh copies it beside them.
#pragma once
#include <cuda_fp16.h>
// The 16-byte chunks of the row that starts at element s: from base, s rounded
// down to 8 elements (rows of NN start anywhere), to past the row's end.
static __device__ __forceinline__ int row_chunks(long s, long base) { return (int)((s + NN - base + 7) >> 3); }
// Chunk c of the row whose chunks start at element base into dst by cp.async
// (uncommitted), zero-filled past the matrix's end. The clobber keeps a read of
// dst's old contents above the copy (refill_rows.cu reads a slot, then refills
// it); the other kernels' PTX is the same with it as without.
static __device__ __forceinline__ void copy_chunk(const unsigned short* x, long base, int c, uint4* dst) {
  const long e = base + 8L * c, rem = (long)MM * NN - e;
  const int bytes = rem >= 8 ? 16 : (int)(rem * 2);
  const unsigned sa = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa), "l"(x + e), "r"(bytes) : "memory");
}
static __device__ __forceinline__ float ex2(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
static __device__ __forceinline__ float warp_max(float v) { for (int d = 16; d > 0; d >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, d)); return v; }
static __device__ __forceinline__ float warp_sum(float v) { for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d); return v; }
// The group's total (or max) of v, in every thread; red holds 33 floats.
static __device__ float block_reduce(float v, float* red, bool is_max) {
  v = is_max ? warp_max(v) : warp_sum(v);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    float u = threadIdx.x < TT / 32 ? red[threadIdx.x] : (is_max ? -INFINITY : 0.f);
    u = is_max ? warp_max(u) : warp_sum(u);
    if (threadIdx.x == 0) red[32] = u;
  }
  __syncthreads();
  return red[32];
}
// Chunk c's elements of the row (those at 8 c - o .. 8 c - o + 7 that lie in
// it) into the statistics: softmax's max in a (MODE 0), else layernorm's sum
// in a and sum of squares in q.
static __device__ __forceinline__ void add_chunk_stats(const uint4 v, int c, int o, float& a, float& q) {
  const __half* h = (const __half*)&v;
  const int j0 = 8 * c - o;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int j = j0 + i;
    if (j >= 0 && j < NN) { const float f = __half2float(h[i]); if (MODE == 0) a = fmaxf(a, f); else { a += f; q += f * f; } }
  }
}
// Softmax's sum of exp2(x log2 e - shift) over chunk c's elements of the row.
static __device__ __forceinline__ float chunk_exp_sum(const uint4 v, int c, int o, float shift) {
  const __half* h = (const __half*)&v;
  const int j0 = 8 * c - o;
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < 8; ++i) { const int j = j0 + i; if (j >= 0 && j < NN) sum += ex2(__half2float(h[i]) * 1.44269504f - shift); }
  return sum;
}
// Chunk c of a row (the 8 halves at 8 c - o of the row that starts at s,
// base = s rounded down to 8) written to y: softmax's exp2(x log2 e - shift)
// * scale (MODE 0) or layernorm's (x - shift) * scale, as one 16-byte store
// where the chunk lies inside the row, else element by element.
static __device__ __forceinline__ void write_chunk(const uint4 v, unsigned short* y, long base, long s, int c, int o,
                                                   float shift, float scale) {
  const __half* h = (const __half*)&v;
  const int j0 = 8 * c - o;
  __align__(16) __half out[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const float f = __half2float(h[i]);
    out[i] = __float2half(MODE == 0 ? ex2(f * 1.44269504f - shift) * scale : (f - shift) * scale);
  }
  if (j0 >= 0 && j0 + 8 <= NN) *(uint4*)(y + base + 8L * c) = *(const uint4*)out;
  else {
#pragma unroll
    for (int i = 0; i < 8; ++i) { const int j = j0 + i; if (j >= 0 && j < NN) ((__half*)y)[s + j] = out[i]; }
  }
}
