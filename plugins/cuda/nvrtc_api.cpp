#include "nvrtc_api.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <dlfcn.h>

namespace kiln::cuda {

std::vector<std::string> nvrtc_candidates(const std::string& configured) {
  std::vector<std::string> out;
  if (!configured.empty()) out.push_back(configured);
  for (const char* soname : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) out.emplace_back(soname);
#ifdef KILN_CUDA_LIBRARY_DIR
  for (const char* name : {"/libnvrtc.so.13", "/libnvrtc.so.12", "/libnvrtc.so"})
    out.push_back(std::string(KILN_CUDA_LIBRARY_DIR) + name);
#endif
  for (const char* path : {"/usr/local/cuda/lib64/libnvrtc.so", "/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so"})
    out.emplace_back(path);
  return out;
}

namespace {

// Resolves every symbol of an open library; returns the first one missing.
std::string resolve(void* handle, NvrtcApi& api) {
#define KILN_NVRTC_RESOLVE(name)                                          \
  api.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name)); \
  if (api.name == nullptr) return #name;
  KILN_NVRTC_FUNCTIONS(KILN_NVRTC_RESOLVE)
#undef KILN_NVRTC_RESOLVE
  return "";
}

}  // namespace

NvrtcApi load_nvrtc(std::span<const std::string> candidates) {
  std::string tried;
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += "\n  " + candidate + ": " + (why != nullptr ? why : "dlopen failed");
      continue;
    }
    NvrtcApi api;
    if (const std::string missing = resolve(handle, api); !missing.empty()) {
      tried += "\n  " + candidate + ": lacks " + missing;
      continue;
    }
    api.library = candidate;
    api.nvrtcVersion(&api.major, &api.minor);
    int n = 0;
    if (api.nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
      api.archs.resize(static_cast<std::size_t>(n));
      if (api.nvrtcGetSupportedArchs(api.archs.data()) != NVRTC_SUCCESS) api.archs.clear();
    }
    return api;
  }
  sdk::fail(KILN_STATUS_UNAVAILABLE, "NVRTC not found (set the cuda option 'nvrtc_library'); tried:" + tried);
}

}  // namespace kiln::cuda
