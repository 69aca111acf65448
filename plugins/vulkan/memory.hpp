// memory.hpp - a VkBuffer with its own VkDeviceMemory (RAII). Used for
// kiln buffers (device-local where possible) and for staging buffers
// (host-visible, coherent, mapped).
#pragma once

#include "logical_device.hpp"

#include <memory>
#include <mutex>
#include <vector>

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

  Device& device() const { return device_; }
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

// Staging buffers, reused: allocating device memory per copy costs more than
// a small copy itself on some drivers. Sizes are powers of two from 64 KiB;
// at most kMaxCachedBytes stay cached per use.
class StagingCache {
 public:
  explicit StagingCache(Device& device) : device_(device) {}
  std::shared_ptr<Allocation> take(std::uint64_t bytes, MemoryUse use);
  // Called once the device no longer uses the buffer. Never throws.
  void give_back(std::shared_ptr<Allocation> staging, MemoryUse use) noexcept;

 private:
  static constexpr std::uint64_t kMaxCachedBytes = 64ull << 20;
  Device& device_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<Allocation>> free_[2];  // Upload, Readback
  std::uint64_t cached_bytes_[2] = {0, 0};
};

}  // namespace kiln::vulkan
