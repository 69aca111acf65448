// Buffers, copies and events. Copies go through a (reused) staging buffer and a
// vkCmdCopyBuffer on the device's queue, so they run in order with launches:
// to_device reads the host memory during the call (never later); to_host
// copies the staging buffer into host memory when the submission is seen
// complete (event_wait, device_synchronize, or a later call).
#include "pool.hpp"

#include "plugin_state.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <cstring>
#include <string>

namespace kiln::vulkan {

namespace {

void check_range(const char* what, const Allocation& buffer, std::uint64_t offset, std::uint64_t bytes) {
  if (offset > buffer.bytes() || bytes > buffer.bytes() - offset)
    sdk::fail(KILN_STATUS_INVALID_ARGUMENT, std::string(what) + ": range [" + std::to_string(offset) + ", " +
                                                std::to_string(offset) + "+" + std::to_string(bytes) +
                                                ") is outside the buffer of " + std::to_string(buffer.bytes()) +
                                                " bytes");
}

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
    args.event = nullptr;
    if (args.bytes > 0) {
      if (args.host == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "copy_to_device: host is NULL");
      auto staging = device.staging().take(args.bytes, MemoryUse::Upload);
      std::memcpy(staging->mapped(), args.host, args.bytes);
      auto submission = device.begin();
      record_copy(device, *submission, staging->buffer(), 0, dst.buffer(), args.device_offset, args.bytes);
      submission->on_complete([&device, staging] { device.staging().give_back(staging, MemoryUse::Upload); });
      device.submit(submission);
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
    args.event = nullptr;
    if (args.bytes > 0) {
      if (args.host == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "copy_to_host: host is NULL");
      auto staging = device.staging().take(args.bytes, MemoryUse::Readback);
      auto submission = device.begin();
      record_copy(device, *submission, src.buffer(), args.device_offset, staging->buffer(), 0, args.bytes);
      submission->on_complete([&device, staging, host = args.host, bytes = args.bytes] {
        std::memcpy(host, staging->mapped(), bytes);
        device.staging().give_back(staging, MemoryUse::Readback);
      });
      device.submit(submission);
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
    check_range("copy_device_to_device (destination)", dst, args.device_offset, args.bytes);
    check_range("copy_device_to_device (source)", src, args.src_offset, args.bytes);
    args.event = nullptr;
    if (args.bytes > 0) {
      if (&src == &dst && args.src_offset < args.device_offset + args.bytes &&
          args.device_offset < args.src_offset + args.bytes)
        sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "copy_device_to_device: source and destination ranges overlap");
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

}  // namespace kiln::vulkan
