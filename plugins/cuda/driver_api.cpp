#include "driver_api.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <dlfcn.h>

namespace kiln::cuda {

namespace {

DriverApi g_driver;

#define KILN_STRINGIFY_EXPANDED(x) KILN_STRINGIFY(x)
#define KILN_STRINGIFY(x) #x

}  // namespace

const DriverApi& cu() { return g_driver; }
DriverApi& cu_mutable() { return g_driver; }

void load_driver_api(DriverApi& api, const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    sdk::fail(KILN_STATUS_UNAVAILABLE,
              library + " not found: " + std::string(why != nullptr ? why : "dlopen failed") + " (no NVIDIA driver)");
  }
#define KILN_CU_RESOLVE(name)                                                                             \
  api.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, KILN_STRINGIFY_EXPANDED(name)));           \
  if (api.name == nullptr)                                                                                \
    sdk::fail(KILN_STATUS_UNAVAILABLE, library + " lacks " KILN_STRINGIFY_EXPANDED(name) ": the driver is " \
                                                 "older than the CUDA " KILN_STRINGIFY_EXPANDED(CUDA_VERSION) " headers");
  KILN_CU_FUNCTIONS(KILN_CU_RESOLVE)
#undef KILN_CU_RESOLVE
}

std::string cu_error_text(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (g_driver.cuGetErrorName != nullptr) g_driver.cuGetErrorName(result, &name);
  if (g_driver.cuGetErrorString != nullptr) g_driver.cuGetErrorString(result, &text);
  std::string out = name != nullptr ? name : "CUDA error " + std::to_string(static_cast<int>(result));
  if (text != nullptr) out += std::string(" (") + text + ")";
  return out;
}

void check_cu(CUresult result, std::string_view call, kiln_status status) {
  if (result == CUDA_SUCCESS) return;
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      status = KILN_STATUS_OUT_OF_MEMORY;
      break;
    // Faults in a kernel leave the context unusable: every later call fails.
    case CUDA_ERROR_ILLEGAL_ADDRESS: case CUDA_ERROR_LAUNCH_FAILED: case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION: case CUDA_ERROR_MISALIGNED_ADDRESS: case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC: case CUDA_ERROR_ECC_UNCORRECTABLE: case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      status = KILN_STATUS_DEVICE_LOST;
      break;
    case CUDA_ERROR_NO_DEVICE: case CUDA_ERROR_NOT_INITIALIZED: case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      status = KILN_STATUS_UNAVAILABLE;
      break;
    default:
      break;
  }
  sdk::fail(status, std::string(call) + " failed: " + cu_error_text(result));
}

ContextScope::ContextScope(CUcontext context) { check_cu(cu().cuCtxPushCurrent(context), "cuCtxPushCurrent"); }

ContextScope::~ContextScope() {
  CUcontext popped = nullptr;
  cu().cuCtxPopCurrent(&popped);
}

}  // namespace kiln::cuda
