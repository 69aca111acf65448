#include "logical_device.hpp"

#include "glsl_compiler.hpp"
#include "memory.hpp"
#include "version.hpp"
#include "vk_check.hpp"
#include "vk_struct.hpp"

#include <kiln/sdk/deadline.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <chrono>

namespace kiln::vulkan {

namespace {

std::string make_cache_key(const PhysicalDevice& physical) {
  const DeviceCaps& c = physical.caps;
  std::string features;
  for (bool f : {c.float64, c.int64, c.int16, c.int8, c.storage16, c.storage8}) features += f ? '1' : '0';
  return std::string("kiln-vulkan ") + kPluginVersion + "; " + glslang_identity() + "; " + physical.info.name +
         "; " + physical.info.driver_version + "; features " + features;
}

}  // namespace

Submission::Submission(Device& device, VkCommandBuffer command_buffer, VkFence fence)
    : device_(device), command_buffer_(command_buffer), fence_(fence) {}

Submission::~Submission() {
  if (device_.lost()) return;  // the running dispatch may still use them
  if (command_buffer_ != VK_NULL_HANDLE) {
    // Never submitted (recording failed) or reusable; such a submission is
    // never destroyed by retire_locked, so taking the lock here is safe.
    std::lock_guard lock(device_.mutex_);
    device_.free_command_buffers_.push_back(command_buffer_);
  }
  device_.recycle_fence(fence_);
}

Device::Device(const Instance& instance, const PhysicalDevice& physical, std::uint32_t wait_spin_us)
    : physical_(physical), cache_key_(make_cache_key(physical)), wait_spin_us_(wait_spin_us) {
  const DeviceCaps& caps = physical.caps;
  const float priority = 1.0f;
  auto queue = vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queue.queueFamilyIndex = caps.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;

  // Enable exactly the features discovery found and codegen may use.
  auto features = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  features.features.shaderFloat64 = caps.float64;
  features.features.shaderInt64 = caps.int64;
  features.features.shaderInt16 = caps.int16;
  auto storage16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  storage16.storageBuffer16BitAccess = caps.storage16;
  auto storage8 = vk_struct<VkPhysicalDevice8BitStorageFeatures>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
  storage8.storageBuffer8BitAccess = caps.storage8;
  auto f16i8 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  f16i8.shaderInt8 = caps.int8;
  f16i8.shaderFloat16 = caps.float16;
  features.pNext = &storage16;
  void** tail = &storage16.pNext;
  if (caps.storage8) { *tail = &storage8; tail = &storage8.pNext; }
  if (caps.int8 || caps.float16) { *tail = &f16i8; tail = &f16i8.pNext; }

  std::vector<const char*> extensions;
  for (const auto& e : caps.extensions) extensions.push_back(e.c_str());

  auto create = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  create.pNext = &features;
  create.queueCreateInfoCount = 1;
  create.pQueueCreateInfos = &queue;
  create.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  create.ppEnabledExtensionNames = extensions.data();
  vk_check(instance.functions().vkCreateDevice(physical.handle, &create, nullptr, &device_), "vkCreateDevice",
           KILN_STATUS_UNAVAILABLE);
  auto destroy_device = reinterpret_cast<PFN_vkDestroyDevice>(
      instance.functions().vkGetDeviceProcAddr(device_, "vkDestroyDevice"));
  try {
    vk_ = load_device_functions(instance.functions(), device_);
    vk_.vkGetDeviceQueue(device_, caps.queue_family, 0, &queue_);
    auto pool = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;  // recycled: begin resets them
    pool.queueFamilyIndex = caps.queue_family;
    vk_check(vk_.vkCreateCommandPool(device_, &pool, nullptr, &command_pool_), "vkCreateCommandPool");
    staging_ = std::make_unique<StagingCache>(*this);
  } catch (...) {
    if (destroy_device != nullptr) destroy_device(device_, nullptr);
    throw;
  }
}

Device::~Device() {
  if (lost_) return;  // waiting would wait for the runaway dispatch; leak instead
  vk_.vkDeviceWaitIdle(device_);
  {
    std::lock_guard lock(mutex_);
    for (auto& s : in_flight_) finish_locked(*s);
    in_flight_.clear();
  }
  staging_.reset();  // after the in-flight copies gave their buffers back
  for (VkFence fence : free_fences_) vk_.vkDestroyFence(device_, fence, nullptr);
  vk_.vkDestroyCommandPool(device_, command_pool_, nullptr);  // frees its command buffers
  vk_.vkDestroyDevice(device_, nullptr);
}

std::uint32_t Device::memory_type(std::uint32_t allowed, VkMemoryPropertyFlags required,
                                  VkMemoryPropertyFlags preferred) const {
  const auto& memory = caps().memory;
  int fallback = -1;
  for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if (!(allowed & (1u << i))) continue;
    const VkMemoryPropertyFlags flags = memory.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  if (fallback < 0) sdk::fail(KILN_STATUS_OUT_OF_MEMORY, "no Vulkan memory type with the required properties");
  return static_cast<std::uint32_t>(fallback);
}

VkFence Device::take_fence() {
  {
    std::lock_guard lock(fence_mutex_);
    if (!free_fences_.empty()) {
      VkFence fence = free_fences_.back();
      free_fences_.pop_back();
      return fence;
    }
  }
  VkFence fence = VK_NULL_HANDLE;
  auto info = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  vk_check(vk_.vkCreateFence(device_, &info, nullptr, &fence), "vkCreateFence");
  return fence;
}

void Device::recycle_fence(VkFence fence) {
  // A fence comes back signalled (its work finished) or never submitted.
  if (vk_.vkResetFences(device_, 1, &fence) != VK_SUCCESS) {
    vk_.vkDestroyFence(device_, fence, nullptr);
    return;
  }
  std::lock_guard lock(fence_mutex_);
  free_fences_.push_back(fence);
}

VkCommandBuffer Device::take_command_buffer_locked() {
  if (!free_command_buffers_.empty()) {
    VkCommandBuffer command_buffer = free_command_buffers_.back();
    free_command_buffers_.pop_back();
    return command_buffer;
  }
  auto allocate = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  allocate.commandPool = command_pool_;
  allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocate.commandBufferCount = 1;
  VkCommandBuffer command_buffer = VK_NULL_HANDLE;
  vk_check(vk_.vkAllocateCommandBuffers(device_, &allocate, &command_buffer), "vkAllocateCommandBuffers");
  return command_buffer;
}

void Device::check_not_lost() const {
  if (lost_)
    throw sdk::PluginError(KILN_STATUS_DEVICE_LOST, "vulkan: the device is lost: a timed dispatch passed its time limit "
                                                    "and Vulkan cannot cancel it");
}

std::shared_ptr<Submission> Device::begin(bool reusable) {
  check_not_lost();
  const VkFence fence = take_fence();
  VkCommandBuffer command_buffer = VK_NULL_HANDLE;
  try {
    std::lock_guard lock(mutex_);
    command_buffer = take_command_buffer_locked();
  } catch (...) {
    recycle_fence(fence);
    throw;
  }
  auto submission = std::make_shared<Submission>(*this, command_buffer, fence);
  submission->reusable_ = reusable;

  auto begin_info = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin_info.flags = reusable ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(vk_.vkBeginCommandBuffer(command_buffer, &begin_info), "vkBeginCommandBuffer");
  // In-order queue: everything submitted before (copies, launches) completes
  // and its writes are visible before this command buffer's work starts.
  auto barrier = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  vk_.vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                           0, 1, &barrier, 0, nullptr, 0, nullptr);
  return submission;
}

void Device::submit(const std::shared_ptr<Submission>& submission) {
  auto to_host = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  to_host.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vk_.vkCmdPipelineBarrier(submission->command_buffer_, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                           VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0, nullptr);
  vk_check(vk_.vkEndCommandBuffer(submission->command_buffer_), "vkEndCommandBuffer");
  submission->recording_ = false;
  resubmit(submission);
}

void Device::resubmit(const std::shared_ptr<Submission>& submission) {
  check_not_lost();
  std::lock_guard lock(mutex_);
  if (submission->finished_) {
    vk_check(vk_.vkResetFences(device_, 1, &submission->fence_), "vkResetFences");
    submission->finished_ = false;
  }
  auto info = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  info.commandBufferCount = 1;
  info.pCommandBuffers = &submission->command_buffer_;
  vk_check(vk_.vkQueueSubmit(queue_, 1, &info, submission->fence_), "vkQueueSubmit", KILN_STATUS_LAUNCH_FAILED);
  in_flight_.push_back(submission);
}

void Device::wait(const std::shared_ptr<Submission>& submission) {
  {
    std::lock_guard lock(mutex_);
    if (submission->finished_) return;
  }
  // Wait without the lock: other threads may submit or wait meanwhile.
  if (wait_spin_us_ > 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(wait_spin_us_);
    while (vk_.vkGetFenceStatus(device_, submission->fence_) == VK_NOT_READY &&
           std::chrono::steady_clock::now() < deadline) {
    }
  }
  vk_check(vk_.vkWaitForFences(device_, 1, &submission->fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences",
           KILN_STATUS_DEVICE_LOST);
  std::lock_guard lock(mutex_);
  if (!submission->finished_) retire_locked(false, submission.get());  // else another thread did
}

void Device::wait_or_lose(const std::shared_ptr<Submission>& submission, std::uint64_t timeout_ns) {
  const VkResult status = vk_.vkWaitForFences(device_, 1, &submission->fence_, VK_TRUE, timeout_ns);
  if (status == VK_TIMEOUT) {
    lost_ = true;
    any_lost_ = true;
    sdk::fail_timeout("vulkan: a timed dispatch", timeout_ns,
                      "Vulkan cannot cancel a running dispatch, so the device is now lost for this process");
  }
  vk_check(status, "vkWaitForFences", KILN_STATUS_DEVICE_LOST);
  wait(submission);  // retires it (and those before it) in order
}

void Device::synchronize() {
  check_not_lost();
  std::lock_guard lock(mutex_);
  retire_locked(true, nullptr);
}

void Device::retire_locked(bool wait_all, const Submission* until) {
  // Finish in submission order, so host-side completion work (staging
  // copies to host memory) happens in order too.
  bool reached = until == nullptr && !wait_all;
  while (!in_flight_.empty()) {
    Submission& front = *in_flight_.front();
    const bool must_wait = wait_all || (!reached && until != nullptr);
    if (must_wait) {
      vk_check(vk_.vkWaitForFences(device_, 1, &front.fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences",
               KILN_STATUS_DEVICE_LOST);
    } else {
      const VkResult status = vk_.vkGetFenceStatus(device_, front.fence_);
      if (status == VK_NOT_READY) break;
      vk_check(status, "vkGetFenceStatus", KILN_STATUS_DEVICE_LOST);
    }
    if (&front == until) reached = true;
    finish_locked(front);
    in_flight_.pop_front();
  }
}

void Device::finish_locked(Submission& submission) {
  if (submission.finished_) return;
  submission.finished_ = true;
  for (auto& action : submission.on_complete_) action();
  if (!submission.reusable_) {
    submission.on_complete_.clear();
    submission.keep_alive_.clear();
    free_command_buffers_.push_back(submission.command_buffer_);
    submission.command_buffer_ = VK_NULL_HANDLE;
  }
}

std::uint64_t Device::allocated_bytes() const {
  std::lock_guard lock(mutex_);
  return allocated_bytes_;
}

void Device::add_allocated(std::int64_t delta) {
  std::lock_guard lock(mutex_);
  allocated_bytes_ += static_cast<std::uint64_t>(delta);
}

}  // namespace kiln::vulkan
