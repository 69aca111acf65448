// version.hpp - the plugin's own version (part of every cache key).
#pragma once

namespace kiln::vulkan {

inline constexpr const char* kPluginName = "vulkan";
inline constexpr const char* kPluginVersion = "0.1.0";

}  // namespace kiln::vulkan
