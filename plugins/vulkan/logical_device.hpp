// logical_device.hpp - an opened device (kiln_device): the VkDevice, its one
// compute queue, and the submissions in flight on it.
//
// Ordering: every command buffer starts with a full memory barrier, whose
// first scope covers all work submitted earlier to the queue, so
// submissions run in order (kiln's in-order queue) without semaphores.
// Each submission has its own fence; a kiln_event holds the submission.
#pragma once

#include "device.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <deque>
#include <string>
#include <vector>

namespace kiln::vulkan {

class Device;
class StagingCache;

// One vkQueueSubmit: a command buffer, its fence, and what must live (or
// happen on the host) until it completes.
class Submission {
 public:
  Submission(Device& device, VkCommandBuffer command_buffer, VkFence fence);
  ~Submission();
  Submission(const Submission&) = delete;
  Submission& operator=(const Submission&) = delete;

  VkCommandBuffer command_buffer() const { return command_buffer_; }
  VkFence fence() const { return fence_; }

  // Host work to do once the device is done (e.g. staging -> host memory),
  // run exactly once, in submission order.
  void on_complete(std::function<void()> action) { on_complete_.push_back(std::move(action)); }
  // Objects (staging buffers, descriptor pools) kept until completion.
  void keep_alive(std::shared_ptr<void> object) { keep_alive_.push_back(std::move(object)); }

 private:
  friend class Device;
  Device& device_;
  VkCommandBuffer command_buffer_;
  VkFence fence_;
  std::vector<std::function<void()>> on_complete_;
  std::vector<std::shared_ptr<void>> keep_alive_;
  bool reusable_ = false;
  bool recording_ = true;
  bool finished_ = false;
};

class Device {
 public:
  // wait_spin_us: how long wait() polls the fence before sleeping in the
  // driver (a blocking fence wait can take far longer to wake than a short
  // kernel takes to run).
  Device(const Instance& instance, const PhysicalDevice& physical, std::uint32_t wait_spin_us);
  ~Device();  // waits for all work
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceFunctions& vk() const { return vk_; }
  VkDevice handle() const { return device_; }
  const PhysicalDevice& physical() const { return physical_; }
  const DeviceCaps& caps() const { return physical_.caps; }
  // Plugin and glslang versions, device, driver and the features codegen
  // used: what decides compile's output.
  const std::string& cache_key() const { return cache_key_; }

  // A memory type among `allowed` (VkMemoryRequirements::memoryTypeBits)
  // with every `required` flag, preferring one with the `preferred` flags.
  // Throws PluginError(OUT_OF_MEMORY) when none fits.
  std::uint32_t memory_type(std::uint32_t allowed, VkMemoryPropertyFlags required,
                            VkMemoryPropertyFlags preferred) const;

  // Starts a submission: a command buffer in the recording state that
  // already holds the in-order barrier. A reusable one may be submitted
  // again after it finished (timed launches).
  std::shared_ptr<Submission> begin(bool reusable = false);
  // Ends recording (adding a device->host visibility barrier) and submits.
  void submit(const std::shared_ptr<Submission>& submission);
  // Submits a finished reusable submission again (its commands unchanged).
  void resubmit(const std::shared_ptr<Submission>& submission);
  // Waits for a submission (and, in order, all before it) and finishes them.
  // Throws PluginError(DEVICE_LOST/...) on failure.
  void wait(const std::shared_ptr<Submission>& submission);
  // As wait, but gives up after `timeout_ns`: Vulkan cannot stop a running
  // dispatch, so the device is then lost (lost()) and TIMEOUT is thrown.
  void wait_or_lose(const std::shared_ptr<Submission>& submission, std::uint64_t timeout_ns);
  // Waits for all submitted work.
  void synchronize();
  // After a timeout a dispatch may still run on the device: every later
  // begin/submit/synchronize fails DEVICE_LOST, and nothing it may touch
  // (memory, fences, command buffers, the VkDevice) is freed, only leaked.
  bool lost() const { return lost_; }
  // Whether any device of this process was lost: its runaway dispatch may
  // still run on the driver's threads, so the instance (whose destruction
  // lets the loader unload the driver) must then outlive the process too.
  static bool any_lost() { return any_lost_; }

  // Reusable staging buffers for copies.
  StagingCache& staging() { return *staging_; }

  // Bytes allocated by buffer_alloc on this device (for memory_info).
  std::uint64_t allocated_bytes() const;
  void add_allocated(std::int64_t delta);

 private:
  friend class Submission;
  void retire_locked(bool wait_all, const Submission* until);
  void finish_locked(Submission& submission);
  // Fences and command buffers are recycled: creating them costs a few
  // hundred microseconds per launch on some drivers (NVIDIA, measured).
  VkFence take_fence();
  void recycle_fence(VkFence fence);
  VkCommandBuffer take_command_buffer_locked();

  const PhysicalDevice& physical_;
  DeviceFunctions vk_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  mutable std::mutex mutex_;  // queue, command pool, in-flight list
  std::deque<std::shared_ptr<Submission>> in_flight_;
  std::vector<VkCommandBuffer> free_command_buffers_;  // guarded by mutex_
  std::mutex fence_mutex_;  // not mutex_: a Submission may die while mutex_ is held
  std::vector<VkFence> free_fences_;
  std::uint64_t allocated_bytes_ = 0;
  std::string cache_key_;
  std::uint32_t wait_spin_us_ = 0;
  std::atomic<bool> lost_{false};
  static inline std::atomic<bool> any_lost_{false};
  void check_not_lost() const;
  std::unique_ptr<StagingCache> staging_;
};

}  // namespace kiln::vulkan
