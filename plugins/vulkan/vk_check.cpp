#include "vk_check.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <string>

namespace kiln::vulkan {

std::string vk_result_name(VkResult result) {
  switch (result) {
#define KILN_VK_CASE(code) \
  case code:               \
    return #code;
    KILN_VK_CASE(VK_SUCCESS)
    KILN_VK_CASE(VK_NOT_READY)
    KILN_VK_CASE(VK_TIMEOUT)
    KILN_VK_CASE(VK_INCOMPLETE)
    KILN_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    KILN_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    KILN_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    KILN_VK_CASE(VK_ERROR_DEVICE_LOST)
    KILN_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    KILN_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    KILN_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    KILN_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    KILN_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    KILN_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    KILN_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    KILN_VK_CASE(VK_ERROR_FRAGMENTED_POOL)
    KILN_VK_CASE(VK_ERROR_UNKNOWN)
    KILN_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    KILN_VK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef KILN_VK_CASE
    default:
      return "VkResult " + std::to_string(static_cast<int>(result));
  }
}

void vk_check(VkResult result, std::string_view what, kiln_status otherwise) {
  if (result >= 0) return;
  kiln_status status = otherwise;
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_TOO_MANY_OBJECTS:
      status = KILN_STATUS_OUT_OF_MEMORY;
      break;
    case VK_ERROR_DEVICE_LOST:
      status = KILN_STATUS_DEVICE_LOST;
      break;
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
      status = KILN_STATUS_UNAVAILABLE;
      break;
    default:
      break;
  }
  sdk::fail(status, std::string(what) + " failed: " + vk_result_name(result));
}

}  // namespace kiln::vulkan
