#include "memory.hpp"

#include "vk_check.hpp"
#include "vk_struct.hpp"

#include <kiln/sdk/plugin_support.hpp>

namespace kiln::vulkan {

Allocation::Allocation(Device& device, std::uint64_t bytes, MemoryUse use) : device_(device), bytes_(bytes) {
  const DeviceFunctions& vk = device.vk();
  auto create = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  // Vulkan rounds nothing for us: keep the size a multiple of 4 so the
  // whole buffer can be bound as 32-bit words.
  create.size = (bytes + 3) & ~std::uint64_t{3};
  create.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (use == MemoryUse::Device) create.usage |= VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  vk_check(vk.vkCreateBuffer(device.handle(), &create, nullptr, &buffer_), "vkCreateBuffer");

  VkMemoryRequirements requirements{};
  vk.vkGetBufferMemoryRequirements(device.handle(), buffer_, &requirements);
  VkMemoryPropertyFlags required = 0;
  VkMemoryPropertyFlags preferred = 0;
  switch (use) {
    case MemoryUse::Device:
      preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      break;
    case MemoryUse::Upload:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      break;
    case MemoryUse::Readback:
      required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
      break;
  }
  auto allocate = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  allocate.allocationSize = requirements.size;
  try {
    allocate.memoryTypeIndex = device.memory_type(requirements.memoryTypeBits, required, preferred | required);
    const VkResult result = vk.vkAllocateMemory(device.handle(), &allocate, nullptr, &memory_);
    if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY)
      sdk::fail(KILN_STATUS_OUT_OF_MEMORY, "cannot allocate " + std::to_string(bytes) + " bytes of Vulkan memory (" +
                                               vk_result_name(result) + ")");
    vk_check(result, "vkAllocateMemory");
    vk_check(vk.vkBindBufferMemory(device.handle(), buffer_, memory_, 0), "vkBindBufferMemory");
    if (use != MemoryUse::Device)
      vk_check(vk.vkMapMemory(device.handle(), memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
  } catch (...) {
    if (memory_ != VK_NULL_HANDLE) vk.vkFreeMemory(device.handle(), memory_, nullptr);
    vk.vkDestroyBuffer(device.handle(), buffer_, nullptr);
    throw;
  }
}

Allocation::~Allocation() {
  if (device_.lost()) return;  // a runaway dispatch may still use it (logical_device.hpp)
  const DeviceFunctions& vk = device_.vk();
  vk.vkDestroyBuffer(device_.handle(), buffer_, nullptr);
  vk.vkFreeMemory(device_.handle(), memory_, nullptr);  // unmaps implicitly
}

std::shared_ptr<Allocation> StagingCache::take(std::uint64_t bytes, MemoryUse use) {
  const int slot = use == MemoryUse::Upload ? 0 : 1;
  std::uint64_t size = 64 << 10;
  while (size < bytes) size *= 2;
  {
    std::lock_guard lock(mutex_);
    auto& list = free_[slot];
    for (auto it = list.begin(); it != list.end(); ++it) {
      if ((*it)->bytes() == size) {
        auto staging = std::move(*it);
        list.erase(it);
        cached_bytes_[slot] -= size;
        return staging;
      }
    }
  }
  return std::make_shared<Allocation>(device_, size, use);
}

void StagingCache::give_back(std::shared_ptr<Allocation> staging, MemoryUse use) noexcept {
  const int slot = use == MemoryUse::Upload ? 0 : 1;
  const std::uint64_t bytes = staging->bytes();  // read before the move below
  std::lock_guard lock(mutex_);
  if (cached_bytes_[slot] + bytes > kMaxCachedBytes) return;  // freed here
  cached_bytes_[slot] += bytes;
  try {
    free_[slot].push_back(std::move(staging));
  } catch (...) {
    cached_bytes_[slot] -= bytes;  // not cached: freed here
  }
}

}  // namespace kiln::vulkan
