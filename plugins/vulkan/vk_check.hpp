// vk_check.hpp - VkResult to PluginError, naming the call that failed.
#pragma once

#include <kiln/plugin.h>
#include <vulkan/vulkan_core.h>

#include <string>
#include <string_view>

namespace kiln::vulkan {

// "VK_ERROR_OUT_OF_DEVICE_MEMORY", ... (the number for unknown codes).
std::string vk_result_name(VkResult result);

// Throws PluginError when `result` is an error: "<what> failed: <result
// name>", with the status that fits (OUT_OF_MEMORY, DEVICE_LOST,
// UNAVAILABLE for missing drivers/features, else `otherwise`).
void vk_check(VkResult result, std::string_view what, kiln_status otherwise = KILN_STATUS_INTERNAL);

}  // namespace kiln::vulkan
