// device.hpp - discovery: the physical devices with a compute queue, what
// they can do (DeviceCaps, used to create the logical device and to check
// kernels before codegen)
// and what kiln is told about them (kiln_device_info).
#pragma once

#include <kiln/sdk/device_filter.hpp>

#include "instance.hpp"

#include <kiln/plugin.h>

#include <string>
#include <vector>

namespace kiln::vulkan {

// Features and limits of one physical device that the plugin relies on.
struct DeviceCaps {
  std::uint32_t api_version = 0;  // min(instance, device)
  std::uint32_t queue_family = 0;
  std::uint32_t timestamp_valid_bits = 0;
  float timestamp_period_ns = 0;
  bool float64 = false;
  bool int64 = false;
  bool int16 = false;
  bool int8 = false;
  bool float16 = false;    // shaderFloat16 (arithmetic; kiln computes halves as f32 anyway)
  bool storage16 = false;  // storageBuffer16BitAccess
  bool storage8 = false;   // storageBuffer8BitAccess
  // SUBGROUP_REDUCE runs (kernel_ir.h): compute shaders have subgroup
  // shuffles and one subgroup size (minSubgroupSize == maxSubgroupSize,
  // VK_EXT_subgroup_size_control / Vulkan 1.3), which is warp_size.
  bool fixed_subgroup_shuffles = false;
  std::vector<std::string> extensions;  // to enable at vkCreateDevice (pre-1.2 devices)
  VkPhysicalDeviceLimits limits{};
  VkPhysicalDeviceMemoryProperties memory{};
};

struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::uint32_t vulkan_index = 0;  // in vkEnumeratePhysicalDevices order
  DeviceCaps caps;
  kiln_device_info info{};  // struct_size = KILN_DEVICE_INFO_STRUCT_SIZE
};

// Every physical device with a compute queue family that passes the filter.
// Devices older than Vulkan 1.1 are skipped with a log line saying why.
std::vector<PhysicalDevice> discover_devices(const Instance& instance, const sdk::DeviceFilter& filter);

// Whether the device can hold and compute values of `dtype` (kiln_dtype).
bool dtype_supported(const DeviceCaps& caps, unsigned dtype);

// The KILN_CAP_UNARY/BINARY bits of the ops the GLSL dialect can write for
// `dtype` (sdk::c_family_dtype_ops); 0 when the device lacks the dtype.
// (GLSL has no double-precision exp/log/sin/cos/pow, so f64 lacks those.)
std::uint32_t supported_ops(const DeviceCaps& caps, unsigned dtype);

}  // namespace kiln::vulkan
