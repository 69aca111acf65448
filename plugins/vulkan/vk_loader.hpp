// vk_loader.hpp - Vulkan entry points, loaded at run time.
//
// The plugin never links libvulkan: it dlopens the loader library, so it
// builds with only the Vulkan headers and loads (and reports UNAVAILABLE
// cleanly) on a machine without Vulkan. The headers are used with
// VK_NO_PROTOTYPES; every call goes through one of these tables.
#pragma once

#include <vulkan/vulkan_core.h>

#include "vk_functions.hpp"

namespace kiln::vulkan {

#define KILN_VK_MEMBER(name) PFN_##name name = nullptr;

// Functions callable without an instance, from the loader library.
struct GlobalFunctions {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  KILN_VK_GLOBAL_FUNCTIONS(KILN_VK_MEMBER)
};

struct InstanceFunctions {
  KILN_VK_INSTANCE_FUNCTIONS(KILN_VK_MEMBER)
};

struct DeviceFunctions {
  KILN_VK_DEVICE_FUNCTIONS(KILN_VK_MEMBER)
};

#undef KILN_VK_MEMBER

// Opens the loader (libvulkan.so.1) once per process and returns its global
// functions. Throws PluginError(UNAVAILABLE) "libvulkan.so.1 not found:
// <dlerror>" when it cannot be opened. The library is never closed.
const GlobalFunctions& load_global_functions();

// Throws PluginError(UNAVAILABLE) naming the first function the instance or
// device does not provide (vkEnumerateInstanceVersion may be absent: a
// Vulkan 1.0 loader).
InstanceFunctions load_instance_functions(const GlobalFunctions& global, VkInstance instance);
DeviceFunctions load_device_functions(const InstanceFunctions& instance, VkDevice device);

}  // namespace kiln::vulkan
