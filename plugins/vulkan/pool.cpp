// Buffers, copies and events. Copies go through a (reused) staging buffer and a
// vkCmdCopyBuffer on the device's queue, so they run in order with launches:
// to_device reads the host memory during the call (never later); to_host
// copies the staging buffer into host memory when the submission is seen
// complete (event_wait, device_synchronize, or a later call).
#include "pool.hpp"

#include "vulkan.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <string>

namespace kiln::vulkan {

namespace {

void check_range(const char* what, const Allocation& buffer, std::uint64_t offset, std::uint64_t bytes) {
  sdk::check_buffer_range(what, "", offset, bytes, buffer.bytes());
}

// Large host copies go in chunks of this size.
constexpr std::uint64_t kChunkBytes = 8ull << 20;

// Submits chunk copies, waiting for the oldest when kInFlight are pending
// (waiting runs its completion: staging back to the cache, or the memcpy
// into host memory).
class ChunkWindow {
 public:
  explicit ChunkWindow(Device& device) : device_(device) {}
  void submit(std::shared_ptr<Submission> submission) {
    if (pending_.size() == kInFlight) {
      device_.wait(pending_.front());
      pending_.pop_front();
    }
    device_.submit(submission);
    pending_.push_back(std::move(submission));
  }
  // The last chunk's submission: the queue is in order, so it completes last.
  std::shared_ptr<Submission> last() const { return pending_.back(); }

 private:
  static constexpr std::size_t kInFlight = 4;
  Device& device_;
  std::deque<std::shared_ptr<Submission>> pending_;
};

void record_copy(Device& device, Submission& submission, VkBuffer src, std::uint64_t src_offset, VkBuffer dst,
                 std::uint64_t dst_offset, std::uint64_t bytes) {
  VkBufferCopy region{src_offset, dst_offset, bytes};
  device.vk().vkCmdCopyBuffer(submission.command_buffer(), src, dst, 1, &region);
}

}  // namespace

kiln_error* memory_info(kiln_memory_info_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& device = to_device(args.device, "memory_info: device");
    args.total_bytes = device.physical().info.memory_bytes;
    const std::uint64_t used = device.allocated_bytes();
    args.free_bytes = used < args.total_bytes ? args.total_bytes - used : 0;
    sdk::write_args(raw, args);
  });
}

kiln_error* buffer_alloc(kiln_buffer_alloc_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& device = to_device(args.device, "buffer_alloc: device");
    if (args.bytes == 0) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "buffer_alloc: bytes must be > 0");
    auto buffer = std::make_unique<Allocation>(device, args.bytes, MemoryUse::Device);
    device.add_allocated(static_cast<std::int64_t>(args.bytes));
    args.buffer = to_handle(buffer.release());
    sdk::write_args(raw, args);
  });
}

void buffer_free(kiln_device* device, kiln_buffer* buffer) {
  if (buffer == nullptr) return;
  Allocation* allocation = reinterpret_cast<Allocation*>(buffer);
  if (device != nullptr) reinterpret_cast<Device*>(device)->add_allocated(-static_cast<std::int64_t>(allocation->bytes()));
  delete allocation;
}

kiln_error* copy_to_device(kiln_copy_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& device = to_device(args.device, "copy_to_device: device");
    Allocation& dst = to_buffer(args.device_buffer, "copy_to_device: device_buffer");
    check_range("copy_to_device", dst, args.device_offset, args.bytes);
    sdk::check_copy_host(args, "copy_to_device");
    args.event = nullptr;
    if (args.bytes > 0) {
      // In chunks through reused staging buffers, a few in flight: bounded
      // staging memory, and the host memcpy overlaps the device's copies.
      auto* host = static_cast<const std::uint8_t*>(args.host);
      ChunkWindow window(device);
      for (std::uint64_t done = 0; done < args.bytes; done += kChunkBytes) {
        const std::uint64_t n = std::min(kChunkBytes, args.bytes - done);
        auto staging = device.staging().take(n, MemoryUse::Upload);
        std::memcpy(staging->mapped(), host + done, n);
        auto submission = device.begin();
        record_copy(device, *submission, staging->buffer(), 0, dst.buffer(), args.device_offset + done, n);
        submission->on_complete([&device, staging] { device.staging().give_back(staging, MemoryUse::Upload); });
        window.submit(std::move(submission));
      }
      auto submission = window.last();
      args.event = make_event(device, std::move(submission));
    }
    sdk::write_args(raw, args);
  });
}

kiln_error* copy_to_host(kiln_copy_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& device = to_device(args.device, "copy_to_host: device");
    Allocation& src = to_buffer(args.device_buffer, "copy_to_host: device_buffer");
    check_range("copy_to_host", src, args.device_offset, args.bytes);
    sdk::check_copy_host(args, "copy_to_host");
    args.event = nullptr;
    if (args.bytes > 0) {
      auto* host = static_cast<std::uint8_t*>(args.host);
      ChunkWindow window(device);
      for (std::uint64_t done = 0; done < args.bytes; done += kChunkBytes) {
        const std::uint64_t n = std::min(kChunkBytes, args.bytes - done);
        auto staging = device.staging().take(n, MemoryUse::Readback);
        auto submission = device.begin();
        record_copy(device, *submission, src.buffer(), args.device_offset + done, staging->buffer(), 0, n);
        submission->on_complete([&device, staging, to = host + done, n] {
          std::memcpy(to, staging->mapped(), n);
          device.staging().give_back(staging, MemoryUse::Readback);
        });
        window.submit(std::move(submission));
      }
      auto submission = window.last();
      args.event = make_event(device, std::move(submission));
    }
    sdk::write_args(raw, args);
  });
}

kiln_error* copy_device_to_device(kiln_copy_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& device = to_device(args.device, "copy_device_to_device: device");
    Allocation& dst = to_buffer(args.device_buffer, "copy_device_to_device: device_buffer");
    Allocation& src = to_buffer(args.src_buffer, "copy_device_to_device: src_buffer");
    sdk::check_device_copy(args, dst.bytes(), src.bytes());
    args.event = nullptr;
    if (args.bytes > 0) {
      auto submission = device.begin();
      record_copy(device, *submission, src.buffer(), args.src_offset, dst.buffer(), args.device_offset, args.bytes);
      device.submit(submission);
      args.event = make_event(device, std::move(submission));
    }
    sdk::write_args(raw, args);
  });
}

kiln_error* event_wait(kiln_event* handle) {
  return sdk::guard([&] {
    if (handle == nullptr) return;  // NULL events are complete
    Event* event = to_event(handle);
    event->device->wait(event->submission);
  });
}

void event_release(kiln_event* handle) { delete to_event(handle); }

kiln_error* device_synchronize(kiln_device* handle) {
  return sdk::guard([&] { to_device(handle, "device_synchronize: device").synchronize(); });
}

const sdk::PoolFunctions kPoolFunctions = {
    .memory_info = memory_info,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    .buffer_host_pointer = nullptr,  // device memory is not host memory
    .copy_to_device = copy_to_device,
    .copy_to_host = copy_to_host,
    .copy_device_to_device = copy_device_to_device,
    .event_wait = event_wait,
    .event_release = event_release,
    .event_query = nullptr,  // not yet: waiting is the only way to learn of completion
};

}  // namespace kiln::vulkan
