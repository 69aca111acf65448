// cuBLAS as a matmul anchor (cublas_gemm.hpp). Every entry point is looked
// up with dlsym by the name the toolkit's header maps it to and has that
// function's type (decltype), so the calls match the header's ABI.
#include "cublas_gemm.hpp"

#ifdef KILN_ANCHORS_HAVE_CUBLAS
#include <cublas_v2.h>
#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <vector>
#endif

namespace kiln::anchors {

#ifndef KILN_ANCHORS_HAVE_CUBLAS

GemmTiming time_cublas_gemm(const std::string&, int, std::int64_t, std::int64_t, std::int64_t, GemmType, unsigned) {
  return {0, "", "kiln was built without the CUDA toolkit's headers (cuda.h, cublas_v2.h)"};
}

#else

namespace {

#define KILN_ANCHOR_CU(X)                                                                                      \
  X(cuInit) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetPCIBusId) X(cuDevicePrimaryCtxRetain)             \
  X(cuDevicePrimaryCtxRelease) X(cuCtxPushCurrent) X(cuCtxPopCurrent) X(cuMemAlloc) X(cuMemFree) X(cuMemsetD32) \
  X(cuMemsetD16) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) \
  X(cuCtxSynchronize)
#define KILN_ANCHOR_CUBLAS(X) X(cublasCreate) X(cublasDestroy) X(cublasSgemm)
// cublasGemmEx is overloaded in C++ (a wrapper taking a cudaDataType compute
// type): the library's own entry point, by its type.
using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                  const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                  cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

// The header's macros map each name to its versioned symbol
// (cuMemAlloc -> cuMemAlloc_v2); the string is taken after expansion.
#define KILN_ANCHOR_STRINGIFY(x) #x
#define KILN_ANCHOR_SYMBOL(x) KILN_ANCHOR_STRINGIFY(x)

struct Api {
#define KILN_ANCHOR_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_ANCHOR_CU(KILN_ANCHOR_MEMBER)
  KILN_ANCHOR_CUBLAS(KILN_ANCHOR_MEMBER)
#undef KILN_ANCHOR_MEMBER
  GemmEx cublasGemmEx = nullptr;
  std::string cublas_file;
};

// Loads the driver and cuBLAS; "" or why not.
std::string load(Api& api) {
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (driver == nullptr) return "libcuda.so.1 not found (no NVIDIA driver)";
  std::vector<std::string> candidates;
  if (const char* given = std::getenv("KILN_CUBLAS_LIBRARY"); given != nullptr && *given != '\0')
    candidates.emplace_back(given);
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"})
    candidates.emplace_back(name);
#ifdef KILN_ANCHORS_CUDA_LIBRARY_DIR
  candidates.emplace_back(std::string(KILN_ANCHORS_CUDA_LIBRARY_DIR) + "/libcublas.so");
#endif
  void* cublas = nullptr;
  std::string tried;
  for (const std::string& candidate : candidates) {
    cublas = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (cublas != nullptr) {
      api.cublas_file = candidate;
      break;
    }
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  if (cublas == nullptr) return "cuBLAS not found (tried " + tried + "; KILN_CUBLAS_LIBRARY names it)";
#define KILN_ANCHOR_LOAD(handle, name)                                                                  \
  api.name = reinterpret_cast<decltype(api.name)>(::dlsym(handle, KILN_ANCHOR_SYMBOL(name)));         \
  if (api.name == nullptr) return std::string(KILN_ANCHOR_SYMBOL(name)) + " is missing from its library";
#define KILN_ANCHOR_LOAD_CU(name) KILN_ANCHOR_LOAD(driver, name)
#define KILN_ANCHOR_LOAD_CUBLAS(name) KILN_ANCHOR_LOAD(cublas, name)
  KILN_ANCHOR_CU(KILN_ANCHOR_LOAD_CU)
  KILN_ANCHOR_CUBLAS(KILN_ANCHOR_LOAD_CUBLAS)
  api.cublasGemmEx = reinterpret_cast<GemmEx>(::dlsym(cublas, "cublasGemmEx"));
  if (api.cublasGemmEx == nullptr) return "cublasGemmEx is missing from its library";
  return "";
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

GemmTiming time_cublas_gemm(const std::string& pci_bus_id, int ordinal, std::int64_t m, std::int64_t n,
                            std::int64_t k, GemmType type, unsigned repeats) {
  static Api api;
  static const std::string load_error = load(api);
  GemmTiming out;
  out.library = api.cublas_file;
  if (!load_error.empty()) return out.error = load_error, out;
  auto cu_failed = [&](CUresult r, const char* call) {
    if (r == CUDA_SUCCESS) return false;
    out.error = std::string(call) + " failed (CUresult " + std::to_string(static_cast<int>(r)) + ")";
    return true;
  };
  if (cu_failed(api.cuInit(0), "cuInit")) return out;
  int count = 0;
  if (cu_failed(api.cuDeviceGetCount(&count), "cuDeviceGetCount")) return out;
  CUdevice device = -1;
  for (int i = 0; i < count && device < 0 && !pci_bus_id.empty(); ++i) {
    CUdevice d;
    char bus[64] = {};
    if (api.cuDeviceGet(&d, i) == CUDA_SUCCESS && api.cuDeviceGetPCIBusId(bus, sizeof bus, d) == CUDA_SUCCESS &&
        lower(bus) == lower(pci_bus_id))
      device = d;
  }
  if (device < 0 && (ordinal >= count || cu_failed(api.cuDeviceGet(&device, ordinal), "cuDeviceGet")))
    return out.error.empty() ? (out.error = "no CUDA device " + std::to_string(ordinal), out) : out;
  CUcontext context = nullptr;
  if (cu_failed(api.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain")) return out;
  api.cuCtxPushCurrent(context);
  const std::size_t element = type == GemmType::F32 ? 4 : 2;
  CUdeviceptr a = 0, b = 0, c = 0;
  cublasHandle_t handle = nullptr;
  CUevent begin = nullptr, end = nullptr;
  [&] {
    if (cu_failed(api.cuMemAlloc(&a, static_cast<std::size_t>(m * k) * element), "cuMemAlloc") ||
        cu_failed(api.cuMemAlloc(&b, static_cast<std::size_t>(k * n) * element), "cuMemAlloc") ||
        cu_failed(api.cuMemAlloc(&c, static_cast<std::size_t>(m * n) * element), "cuMemAlloc"))
      return;
    // 1.0 in each input: the products are exact and the timing does not
    // depend on the values.
    const bool filled =
        type == GemmType::F32
            ? api.cuMemsetD32(a, 0x3f800000u, static_cast<std::size_t>(m * k)) == CUDA_SUCCESS &&
                  api.cuMemsetD32(b, 0x3f800000u, static_cast<std::size_t>(k * n)) == CUDA_SUCCESS
            : api.cuMemsetD16(a, type == GemmType::F16 ? 0x3c00 : 0x3f80, static_cast<std::size_t>(m * k)) == CUDA_SUCCESS &&
                  api.cuMemsetD16(b, type == GemmType::F16 ? 0x3c00 : 0x3f80, static_cast<std::size_t>(k * n)) == CUDA_SUCCESS;
    if (!filled) return void(out.error = "cuMemset failed");
    if (const cublasStatus_t s = api.cublasCreate(&handle); s != CUBLAS_STATUS_SUCCESS)
      return void(out.error = "cublasCreate failed (status " + std::to_string(static_cast<int>(s)) + ")");
    if (cu_failed(api.cuEventCreate(&begin, CU_EVENT_DEFAULT), "cuEventCreate") ||
        cu_failed(api.cuEventCreate(&end, CU_EVENT_DEFAULT), "cuEventCreate"))
      return;
    const float alpha = 1.0f, beta = 0.0f;
    // Row-major C = A B is column-major C^T = B^T A^T: B first, n x m.
    auto gemm = [&] {
      const auto ni = static_cast<int>(n), mi = static_cast<int>(m), ki = static_cast<int>(k);
      if (type == GemmType::F32)
        return api.cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, &alpha, reinterpret_cast<const float*>(b),
                               ni, reinterpret_cast<const float*>(a), ki, &beta, reinterpret_cast<float*>(c), ni);
      const cudaDataType t = type == GemmType::F16 ? CUDA_R_16F : CUDA_R_16BF;
      return api.cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, &alpha, reinterpret_cast<const void*>(b), t,
                              ni, reinterpret_cast<const void*>(a), t, ki, &beta, reinterpret_cast<void*>(c), t, ni,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    if (const cublasStatus_t s = gemm(); s != CUBLAS_STATUS_SUCCESS)
      return void(out.error = "the cuBLAS gemm failed (status " + std::to_string(static_cast<int>(s)) + ")");
    if (cu_failed(api.cuCtxSynchronize(), "cuCtxSynchronize")) return;
    float best_ms = 0;
    for (unsigned r = 0; r < std::max(1u, repeats); ++r) {
      api.cuEventRecord(begin, nullptr);
      gemm();
      api.cuEventRecord(end, nullptr);
      float ms = 0;
      if (cu_failed(api.cuEventSynchronize(end), "cuEventSynchronize") ||
          cu_failed(api.cuEventElapsedTime(&ms, begin, end), "cuEventElapsedTime"))
        return;
      if (best_ms == 0 || ms < best_ms) best_ms = ms;
    }
    if (best_ms > 0) out.gflops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / (best_ms * 1e6);
  }();
  if (begin != nullptr) api.cuEventDestroy(begin);
  if (end != nullptr) api.cuEventDestroy(end);
  if (handle != nullptr) api.cublasDestroy(handle);
  for (CUdeviceptr p : {a, b, c})
    if (p != 0) api.cuMemFree(p);
  CUcontext popped = nullptr;
  api.cuCtxPopCurrent(&popped);
  api.cuDevicePrimaryCtxRelease(device);
  return out;
}

#endif

}  // namespace kiln::anchors
