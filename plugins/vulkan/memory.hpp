// memory.hpp - a VkBuffer with its own VkDeviceMemory (RAII). Used for
// kiln buffers (device-local where possible) and for staging buffers
// (host-visible, coherent, mapped).
#pragma once

#include "logical_device.hpp"

namespace kiln::vulkan {

enum class MemoryUse {
  Device,    // kiln buffers: device-local preferred; storage + transfer
  Upload,    // staging host -> device
  Readback,  // staging device -> host: host-cached preferred
};

class Allocation {
 public:
  Allocation(Device& device, std::uint64_t bytes, MemoryUse use);
  ~Allocation();
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  VkBuffer buffer() const { return buffer_; }
  std::uint64_t bytes() const { return bytes_; }
  // Host address of a staging allocation (persistently mapped); else NULL.
  void* mapped() const { return mapped_; }

 private:
  Device& device_;
  std::uint64_t bytes_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
};

}  // namespace kiln::vulkan
