// The CUDA Driver API entry points this plugin uses, loaded at init from
// libcuda.so.1 with dlopen. The plugin links neither libcuda nor cudart nor
// the stub: where there is no driver it still loads, and init says why it
// has no device.
//
// cuda.h maps many names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2);
// each pointer is looked up by the name the header's macro expands to and
// has that function's type, so the ABI always matches the header.
#pragma once

#include <cuda.h>

#include <kiln/plugin.h>

#include <string>
#include <string_view>

namespace kiln::cuda {

#define KILN_CU_FUNCTIONS(X)                                                                               \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet) \
  X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDeviceGetPCIBusId)                   \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxPushCurrent) X(cuCtxPopCurrent)         \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate) X(cuEventDestroy)          \
  X(cuEventRecord) X(cuEventSynchronize) X(cuEventQuery) X(cuEventElapsedTime) X(cuMemAlloc) X(cuMemFree) \
  X(cuMemGetInfo) X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)            \
  X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuLaunchHostFunc) X(cuModuleLoadDataEx) X(cuModuleUnload)     \
  X(cuModuleGetFunction) X(cuFuncSetAttribute) X(cuLaunchKernel)

struct DriverApi {
#define KILN_CU_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_CU_FUNCTIONS(KILN_CU_MEMBER)
#undef KILN_CU_MEMBER
};

// Loads the driver from `library` (default "libcuda.so.1"). Throws
// PluginError(UNAVAILABLE): "libcuda.so.1 not found: <dlerror>", or the
// missing symbol (a driver older than the headers).
void load_driver_api(DriverApi& api, const std::string& library);

// The loaded driver; valid after a successful load in init.
const DriverApi& cu();
DriverApi& cu_mutable();

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" from the driver's own tables.
std::string cu_error_text(CUresult result);

// Throws PluginError when `result` is not CUDA_SUCCESS: "<call> failed:
// CUDA_ERROR_... (text)". The status follows the error where it says more
// than `status` does: out of memory, a lost context (a kernel fault), no
// device or driver.
void check_cu(CUresult result, std::string_view call, kiln_status status = KILN_STATUS_INTERNAL);

// Makes a context current on this thread for the scope of one ABI call
// (the host may call from any thread), and restores the previous one.
class ContextScope {
 public:
  explicit ContextScope(CUcontext context);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
};

}  // namespace kiln::cuda
