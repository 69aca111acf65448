// The dummy's memory: plain host memory (the SDK's host-memory pool), with
// the device's memory_bytes as a budget, so that running out of device
// memory can be simulated.
#include "dummy.hpp"
#include "kiln/sdk/host_memory.hpp"

#include <algorithm>

namespace kiln::dummy {

namespace {

kiln_error* memory_info(kiln_memory_info_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    const Device& device = device_of(args.device);
    const std::uint64_t total = device.config.info.memory_bytes;
    const std::uint64_t used = std::min(device.allocated.load(), total);
    args.total_bytes = total;
    args.free_bytes = std::min(total - used, sdk::host_available_bytes());
    sdk::write_args(raw, args);
  });
}

kiln_error* buffer_alloc(kiln_buffer_alloc_args* raw) {
  Device* device = nullptr;
  std::uint64_t bytes = 0;
  // Reserve first, so that concurrent allocations cannot overshoot together.
  kiln_error* error = sdk::guard([&] {
    const auto args = sdk::read_args(raw);
    device = &device_of(args.device);
    bytes = args.bytes;
    const std::uint64_t total = device->config.info.memory_bytes;
    const std::uint64_t before = device->allocated.fetch_add(bytes);
    if (bytes > total || before > total - bytes) {
      device->allocated.fetch_sub(bytes);
      sdk::fail(KILN_STATUS_OUT_OF_MEMORY, "buffer_alloc: " + std::to_string(bytes) + " bytes do not fit in the " +
                                               std::to_string(total - std::min(before, total)) + " bytes left of device '" +
                                               device->config.info.name + "' (memory_bytes " + std::to_string(total) + ")");
    }
  });
  if (error != nullptr) return error;
  error = sdk::host_buffer_alloc(raw);
  if (error != nullptr) device->allocated.fetch_sub(bytes);
  return error;
}

void buffer_free(kiln_device* handle, kiln_buffer* buffer) {
  if (buffer == nullptr) return;
  try {
    device_of(handle).allocated.fetch_sub(sdk::host_buffer_size(buffer));
  } catch (const sdk::PluginError&) {
    // An unknown device: still free the memory, nothing to account.
  }
  sdk::host_buffer_free(handle, buffer);
}

}  // namespace

// Buffers are SDK host-memory buffers, counted against the device's
// memory_bytes; copies and events are the SDK's.
const sdk::PoolFunctions kPoolFunctions = [] {
  sdk::PoolFunctions pool = sdk::host_memory_pool();
  pool.memory_info = memory_info;
  pool.buffer_alloc = buffer_alloc;
  pool.buffer_free = buffer_free;
  return pool;
}();

}  // namespace kiln::dummy
