// bench.cu: times a kiln-emitted row kernel `k` (its source -include'd:
// nvcc -include NAME.cu bench.cu) over m rows of n, one group a row:
//   bench M N DTYPE THREADS SMEM NPARAMS [GRID]   (params x, y or x, w, y; random
//                                          inputs; GRID groups, default M: a
//                                          hand-written persistent kernel's)
//   bench add                              (the yardstick: c = a + b over 2^28 f32)
// Each time is the median of 22 launches after 3, the L2 flushed (a 256 MB
// memset) before each; GB/s count each element read and written once (and
// rmsnorm's weights once). The checksum of the output compares variants of
// one kernel (they must agree).
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); return 1; } } while (0)
static void fill(std::vector<unsigned char>& b, const std::string& dt, size_t count, float lo, float hi, unsigned seed) {
  std::mt19937 g(seed); std::uniform_real_distribution<float> u(lo, hi);
  for (size_t i = 0; i < count; ++i) {
    float v = u(g);
    if (dt == "f32") memcpy(&b[i * 4], &v, 4);
    else if (dt == "f16") { __half h = __float2half(v); memcpy(&b[i * 2], &h, 2); }
    else { __nv_bfloat16 h = __float2bfloat16(v); memcpy(&b[i * 2], &h, 2); }
  }
}
// The yardstick: c = a + b over 2^28 f32, a float4 a thread (about what kiln's tuned add reaches).
__global__ void __launch_bounds__(256) kadd(const float4* __restrict__ a, const float4* __restrict__ b, float4* c) {
  const long i = blockIdx.x * 256L + threadIdx.x;
  const float4 p = a[i], q = b[i];
  c[i] = make_float4(p.x + q.x, p.y + q.y, p.z + q.z, p.w + q.w);
}
static int add_bench() {
  const size_t n = 1 << 28; void *a, *b, *c, *flush;
  CK(cudaMalloc(&a, n * 4)); CK(cudaMalloc(&b, n * 4)); CK(cudaMalloc(&c, n * 4)); CK(cudaMalloc(&flush, 256 << 20));
  CK(cudaMemset(a, 0, n * 4)); CK(cudaMemset(b, 0, n * 4));
  cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e); std::vector<float> t;
  for (int r = 0; r < 25; ++r) {
    CK(cudaMemsetAsync(flush, r, 256 << 20)); cudaEventRecord(s);
    kadd<<<n / 1024, 256>>>((const float4*)a, (const float4*)b, (float4*)c);
    cudaEventRecord(e); CK(cudaEventSynchronize(e)); float ms; cudaEventElapsedTime(&ms, s, e); if (r >= 3) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  printf("RESULT add %.1f GB/s\n", 12.0 * n / t[t.size() / 2] / 1e6);
  return 0;
}
int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "add") return add_bench();
  if (argc < 7) { printf("usage: bench M N DTYPE THREADS SMEM NPARAMS [GRID]\n"); return 2; }
  long m = atol(argv[1]), n = atol(argv[2]); std::string dt = argv[3];
  int threads = atoi(argv[4]); size_t smem = atol(argv[5]); int np = atoi(argv[6]);
  const long grid = argc > 7 && atol(argv[7]) > 0 ? atol(argv[7]) : m;
  size_t es = dt == "f32" ? 4 : 2, bytes = m * n * es;
  std::vector<unsigned char> hx(bytes), hw(n * es);
  fill(hx, dt, m * n, -1.f, 1.f, 1); fill(hw, dt, n, 0.5f, 1.5f, 2);
  void *x, *w, *y, *flush;
  CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&w, n * es)); CK(cudaMalloc(&y, bytes)); CK(cudaMalloc(&flush, 256 << 20));
  CK(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice)); CK(cudaMemcpy(w, hw.data(), n * es, cudaMemcpyHostToDevice));
  if (smem > 48 * 1024) CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
#ifdef KILN_CARVEOUT  // a variant's preferred shared-memory carveout (l1.py: 0, the largest L1)
  CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, KILN_CARVEOUT));
#endif
  cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, k));
  int per_sm = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, smem));
  void* args2[] = {&x, &y}; void* args3[] = {&x, &w, &y};
  cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
  std::vector<float> t;
  for (int r = 0; r < 25; ++r) {
    CK(cudaMemsetAsync(flush, r, 256 << 20));
    cudaEventRecord(s);
    CK(cudaLaunchKernel((void*)k, dim3(grid), dim3(threads), np == 2 ? args2 : args3, smem, 0));
    cudaEventRecord(e); CK(cudaEventSynchronize(e));
    float ms; cudaEventElapsedTime(&ms, s, e); if (r >= 3) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  double ms = t[t.size() / 2], moved = 2.0 * bytes + (np == 3 ? n * es : 0);
  // A checksum of the output, to compare variants of one kernel.
  std::vector<unsigned char> hy(bytes); CK(cudaMemcpy(hy.data(), y, bytes, cudaMemcpyDeviceToHost));
  double sum = 0; for (size_t i = 0; i < m * n; i += 97) {
    float v; if (dt == "f32") memcpy(&v, &hy[i * 4], 4);
    else if (dt == "f16") { __half h; memcpy(&h, &hy[i * 2], 2); v = __half2float(h); }
    else { __nv_bfloat16 h; memcpy(&h, &hy[i * 2], 2); v = __bfloat162float(h); }
    sum += v; }
  printf("RESULT %.1f GB/s  %.3f ms  regs=%d groups/SM=%d shared=%zu spilled=%zu  checksum=%.6g\n",
         moved / ms / 1e6, ms, fa.numRegs, per_sm, smem, (size_t)fa.localSizeBytes, sum);
  return 0;
}
