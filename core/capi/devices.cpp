// kiln_runtime_device_* and kiln_device_*: list devices, open one, read its
// info and what it claims to run.
#include "capi/handles.hpp"

#include <algorithm>
#include <cstring>

using kiln::capi::check_struct;
using kiln::capi::guard;
using kiln::capi::make_status;
using kiln::capi::null_argument;

namespace {

// Writes the fields of `info` that fit in out->struct_size.
void fill(const kiln::DeviceInfo& info, kiln_device_info_t* out) {
  kiln_device_info_t full{};
  full.struct_size = out->struct_size;
  full.id = info.id.c_str();
  full.plugin = info.plugin.c_str();
  full.name = info.name.c_str();
  full.vendor = info.vendor.c_str();
  full.driver_version = info.driver_version.c_str();
  full.kind = static_cast<uint32_t>(info.kind);
  full.flags = info.flags;
  full.memory_bytes = info.memory_bytes;
  full.local_memory_bytes = info.local_memory_bytes;
  full.compute_units = info.compute_units;
  full.warp_size = info.warp_size;
  full.max_local_threads = info.max_local_threads;
  full.peak_gflops = info.peak_gflops;
  full.memory_bandwidth_gbps = info.memory_bandwidth_gbps;
  std::memcpy(out, &full, std::min(out->struct_size, sizeof full));
}

constexpr std::size_t kInfoMinimum = offsetof(kiln_device_info_t, id) + sizeof(const char*);

}  // namespace

extern "C" {

kiln_status_t* kiln_runtime_device_count(const kiln_runtime_t* runtime, size_t* count) {
  if (runtime == nullptr) return null_argument("kiln_runtime_device_count", "runtime");
  if (count == nullptr) return null_argument("kiln_runtime_device_count", "count");
  *count = runtime->devices.size();
  return nullptr;
}

kiln_status_t* kiln_runtime_device_info(const kiln_runtime_t* runtime, size_t index, kiln_device_info_t* info) {
  return guard("kiln_runtime_device_info", [&]() -> kiln_status_t* {
    if (runtime == nullptr) return null_argument("kiln_runtime_device_info", "runtime");
    if (kiln_status_t* s = check_struct("kiln_runtime_device_info", info, info ? info->struct_size : 0, kInfoMinimum))
      return s;
    if (index >= runtime->devices.size())
      return make_status(KILN_CODE_INVALID_ARGUMENT, "kiln_runtime_device_info: index " + std::to_string(index) +
                                                         " of " + std::to_string(runtime->devices.size()) + " devices");
    fill(runtime->devices[index], info);
    return nullptr;
  });
}

kiln_status_t* kiln_device_open(const kiln_runtime_t* runtime, const char* id, kiln_device_t** out) {
  return guard("kiln_device_open", [&]() -> kiln_status_t* {
    if (runtime == nullptr) return null_argument("kiln_device_open", "runtime");
    if (out == nullptr) return null_argument("kiln_device_open", "out");
    kiln::Result<kiln::Device> device = (id == nullptr || *id == '\0') ? runtime->runtime.default_device()
                                                                         : runtime->runtime.device(id);
    if (!device) return make_status(device.error());
    *out = new kiln_device_t{std::move(device).value(), runtime->config};
    return nullptr;
  });
}

void kiln_device_free(kiln_device_t* device) { delete device; }

kiln_status_t* kiln_device_get_info(const kiln_device_t* device, kiln_device_info_t* info) {
  return guard("kiln_device_get_info", [&]() -> kiln_status_t* {
    if (device == nullptr) return null_argument("kiln_device_get_info", "device");
    if (kiln_status_t* s = check_struct("kiln_device_get_info", info, info ? info->struct_size : 0, kInfoMinimum))
      return s;
    fill(device->device.info(), info);
    return nullptr;
  });
}

int kiln_device_supports_unary(const kiln_device_t* device, uint32_t op, uint32_t dtype) {
  if (device == nullptr || op >= KILN_CAP_SLOTS || dtype >= KILN_DTYPE_COUNT) return 0;
  return device->device.info().supports_unary(op, dtype) ? 1 : 0;
}

int kiln_device_supports_binary(const kiln_device_t* device, uint32_t op, uint32_t dtype) {
  if (device == nullptr || op >= KILN_CAP_SLOTS || dtype >= KILN_DTYPE_COUNT) return 0;
  return device->device.info().supports_binary(op, dtype) ? 1 : 0;
}

}  // extern "C"
