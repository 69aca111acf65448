// split_rows.cu: hand-written, not kiln's: one row a group, the row held on
// chip split between registers (the row's first RC x TT 16-byte chunks, RC a
// thread) and shared memory (the rest, copied in by cp.async). The question it
// answers: at n = 50257 in f16 a row in shared memory alone (100 KB) allows
// two groups an SM; with part of every row in registers three or four fit.
// Do more groups an SM, nothing read twice, beat two? RC = 0 is the
// shared-memory-only form of the same code. gen.sh (mode `hand`, SEQUENCE
// `split_rows.cu MODE=0 TT=512 RC=3 SLOTS=3`) puts NN, MM and the defines in
// front. MODE 0 softmax, 1 layernorm (no weights); f16 only.
// HAND_LAUNCH threads=TT smem=16*((NN+7)/8+1-RC*TT) params=2 grid=MM
#include <cuda_fp16.h>
#include "hand_rows.cuh"
// The chunk's 8 halves as floats.
static __device__ __forceinline__ void widen(const uint4 v, float f[8]) {
  const __half2* h = (const __half2*)&v;
#pragma unroll
  for (int i = 0; i < 4; ++i) { const float2 p = __half22float2(h[i]); f[2 * i] = p.x; f[2 * i + 1] = p.y; }
}
// Statistics of chunk c: whole chunks without a bound check, the row's two
// end chunks through hand_rows.cuh's checked form.
static __device__ __forceinline__ void stats(const uint4 v, int c, int o, float& a, float& q) {
  const int j0 = 8 * c - o;
  if (j0 < 0 || j0 + 8 > NN) { add_chunk_stats(v, c, o, a, q); return; }
  float f[8]; widen(v, f);
#pragma unroll
  for (int i = 0; i < 8; ++i) { if (MODE == 0) a = fmaxf(a, f[i]); else { a += f[i]; q = fmaf(f[i], f[i], q); } }
}
static __device__ __forceinline__ float exps(const uint4 v, int c, int o, float shift) {
  const int j0 = 8 * c - o;
  if (j0 < 0 || j0 + 8 > NN) return chunk_exp_sum(v, c, o, shift);
  float f[8]; widen(v, f);
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 8; ++i) s += ex2(fmaf(f[i], 1.44269504f, -shift));
  return s;
}
extern "C" __global__ void __launch_bounds__(TT, SLOTS) k(const unsigned short* __restrict__ x, unsigned short* y) {
  extern __shared__ __align__(16) uint4 sm[];
  __shared__ float red[33];
  const long s = (long)blockIdx.x * NN, base = s & ~7L;
  const int o = (int)(s - base), nch = row_chunks(s, base), t = threadIdx.x;
  // Registers: chunks t + j TT, j < RC (all in the row: RC * TT < nch).
  uint4 r[RC > 0 ? RC : 1];
#pragma unroll
  for (int j = 0; j < RC; ++j) r[j] = __ldg((const uint4*)(x + base) + t + j * TT);
  // Shared memory: chunks RC TT + t + j TT, the tail chunk clipped to the tensor.
  for (int c = RC * TT + t; c < nch; c += TT) copy_chunk(x, base, c, sm + (c - RC * TT));
  asm volatile("cp.async.commit_group;\n");
  float a = MODE == 0 ? -INFINITY : 0.f, q = 0.f;
#pragma unroll
  for (int j = 0; j < RC; ++j) stats(r[j], t + j * TT, o, a, q);
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  for (int c = RC * TT + t; c < nch; c += TT) stats(sm[c - RC * TT], c, o, a, q);
  float shift, scale;
  if (MODE == 0) {
    shift = block_reduce(a, red, true) * 1.44269504f;
    float e = 0.f;
#pragma unroll
    for (int j = 0; j < RC; ++j) e += exps(r[j], t + j * TT, o, shift);
    for (int c = RC * TT + t; c < nch; c += TT) e += exps(sm[c - RC * TT], c, o, shift);
    scale = 1.f / block_reduce(e, red, false);
  } else {
    const float mean = block_reduce(a, red, false) / NN;
    const float sq = block_reduce(q, red, false) / NN;
    shift = mean;
    scale = rsqrtf(fmaxf(sq - mean * mean, 0.f) + 1e-5f);
  }
#pragma unroll
  for (int j = 0; j < RC; ++j) write_chunk(r[j], y, base, s, t + j * TT, o, shift, scale);
  for (int c = RC * TT + t; c < nch; c += TT) write_chunk(sm[c - RC * TT], y, base, s, c, o, shift, scale);
}
