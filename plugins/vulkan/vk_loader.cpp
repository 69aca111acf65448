// Loads the Vulkan loader library with dlopen and resolves entry points.
#include "vk_loader.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace kiln::vulkan {

namespace {

constexpr const char* kLoaderLibrary = "libvulkan.so.1";

[[noreturn]] void missing(const char* name, const char* level) {
  sdk::fail(KILN_STATUS_UNAVAILABLE,
            std::string("the Vulkan ") + level + " does not provide " + name + " (Vulkan 1.1 or newer is required)");
}

}  // namespace

const GlobalFunctions& load_global_functions() {
  // Loaded once; a failure is remembered too (dlopen would fail the same way).
  static GlobalFunctions functions;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    void* library = dlopen(kLoaderLibrary, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* why = dlerror();
      failure = std::string(kLoaderLibrary) + " not found: " + (why != nullptr ? why : "unknown dlopen error");
      return;
    }
    functions.vkGetInstanceProcAddr =
        reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
    if (functions.vkGetInstanceProcAddr == nullptr) {
      failure = std::string(kLoaderLibrary) + " has no vkGetInstanceProcAddr";
      return;
    }
#define KILN_VK_LOAD(name) \
  functions.name = reinterpret_cast<PFN_##name>(functions.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name));
    KILN_VK_GLOBAL_FUNCTIONS(KILN_VK_LOAD)
#undef KILN_VK_LOAD
    if (functions.vkCreateInstance == nullptr) failure = std::string(kLoaderLibrary) + " has no vkCreateInstance";
  });
  if (!failure.empty()) sdk::fail(KILN_STATUS_UNAVAILABLE, failure);
  return functions;
}

InstanceFunctions load_instance_functions(const GlobalFunctions& global, VkInstance instance) {
  InstanceFunctions functions;
#define KILN_VK_LOAD(name)                                                                              \
  functions.name = reinterpret_cast<PFN_##name>(global.vkGetInstanceProcAddr(instance, #name));        \
  if (functions.name == nullptr) missing(#name, "instance");
  KILN_VK_INSTANCE_FUNCTIONS(KILN_VK_LOAD)
#undef KILN_VK_LOAD
  return functions;
}

DeviceFunctions load_device_functions(const InstanceFunctions& instance, VkDevice device) {
  DeviceFunctions functions;
#define KILN_VK_LOAD(name)                                                                    \
  functions.name = reinterpret_cast<PFN_##name>(instance.vkGetDeviceProcAddr(device, #name)); \
  if (functions.name == nullptr) missing(#name, "device");
  KILN_VK_DEVICE_FUNCTIONS(KILN_VK_LOAD)
#undef KILN_VK_LOAD
  return functions;
}

}  // namespace kiln::vulkan
