// vk_struct.hpp - a zero-filled Vulkan struct with its sType set.
#pragma once

#include <vulkan/vulkan_core.h>

namespace kiln::vulkan {

template <class T>
T vk_struct(VkStructureType type) {
  T value{};
  value.sType = type;
  return value;
}

}  // namespace kiln::vulkan
