// instance.hpp - the plugin's one VkInstance (RAII), with the optional
// validation layer whose messages go to the host log.
#pragma once

#include "vk_loader.hpp"

#include <cstdint>

namespace kiln::vulkan {

class Instance {
 public:
  // Creates an instance for Vulkan 1.2 (1.1 where the loader is older).
  // Throws PluginError(UNAVAILABLE) without a loader, or with a 1.0 one.
  explicit Instance(bool validation);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  const InstanceFunctions& functions() const { return functions_; }
  std::uint32_t api_version() const { return api_version_; }

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  InstanceFunctions functions_;
  std::uint32_t api_version_ = 0;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
};

}  // namespace kiln::vulkan
