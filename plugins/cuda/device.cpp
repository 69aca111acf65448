// Discovery through the driver (cuInit, cuDeviceGetAttribute) and the
// device's primary context and stream.
#include "cuda.hpp"

#include <kiln/sdk/handles.hpp>

#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/plugin_entry.hpp>

#include <algorithm>

namespace kiln::cuda {

namespace {

int attribute(CUdevice device, CUdevice_attribute which, const char* name) {
  int value = 0;
  check_cu(cu().cuDeviceGetAttribute(&value, which, device), std::string("cuDeviceGetAttribute(") + name + ")");
  return value;
}

#define KILN_ATTR(device, which) attribute(device, CU_DEVICE_ATTRIBUTE_##which, #which)

// FP32 lanes per SM by architecture, for the cost model's peak estimate.
int fp32_lanes_per_sm(int major, int minor) {
  if (major == 6) return minor == 0 ? 64 : 128;
  if (major == 7) return 64;
  if (major == 8) return minor == 0 ? 64 : 128;
  return 128;  // Hopper (9.0), Blackwell (10.x, 12.x)
}

void describe(Device& d, int driver_version) {
  kiln_device_info& info = d.info;
  info.struct_size = KILN_DEVICE_INFO_STRUCT_SIZE;
  char name[256] = {};
  check_cu(cu().cuDeviceGetName(name, sizeof(name), d.handle), "cuDeviceGetName");
  sdk::copy_string(info.name, name);
  sdk::copy_string(info.vendor, "NVIDIA");
  d.cc_major = KILN_ATTR(d.handle, COMPUTE_CAPABILITY_MAJOR);
  d.cc_minor = KILN_ATTR(d.handle, COMPUTE_CAPABILITY_MINOR);
  sdk::copy_string(info.driver_version, "CUDA " + std::to_string(driver_version / 1000) + "." +
                                            std::to_string(driver_version % 1000 / 10) + ", sm_" +
                                            std::to_string(d.cc_major) + std::to_string(d.cc_minor));
  char bus[32] = {};
  if (cu().cuDeviceGetPCIBusId(bus, sizeof(bus), d.handle) == CUDA_SUCCESS) sdk::copy_string(info.pci_bus_id, bus);

  info.kind = KILN_DEVICE_KIND_GPU;
  info.flags = KILN_DEVICE_CAN_COMPILE | KILN_DEVICE_DEVICE_TIMER | KILN_DEVICE_NATIVE_EXP2;
  std::size_t total = 0;
  check_cu(cu().cuDeviceTotalMem(&total, d.handle), "cuDeviceTotalMem");
  info.memory_bytes = total;
  // The opt-in maximum (227 KiB on Hopper, 163 KiB on the A100): static
  // __shared__ arrays stop at 48 KiB, so a kernel with more LOCAL storage is
  // emitted with one dynamic buffer (the dialect's dynamic_local_above) and
  // compile opts its function in (cuFuncSetAttribute).
  info.local_memory_bytes = static_cast<std::uint64_t>(KILN_ATTR(d.handle, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  info.max_local_threads = static_cast<std::uint32_t>(KILN_ATTR(d.handle, MAX_THREADS_PER_BLOCK));
  // A thread's share of the register file when a full block runs (32-bit registers).
  const int registers = KILN_ATTR(d.handle, MAX_REGISTERS_PER_BLOCK);
  if (info.max_local_threads != 0) info.register_bytes = std::uint64_t(registers) * 4 / info.max_local_threads;
  info.max_register_bytes = 512 * 1024;  // per-thread local memory (what spills go to) on compute capability >= 2.0
  info.max_local_dims[0] = static_cast<std::uint32_t>(KILN_ATTR(d.handle, MAX_BLOCK_DIM_X));
  info.max_local_dims[1] = static_cast<std::uint32_t>(KILN_ATTR(d.handle, MAX_BLOCK_DIM_Y));
  info.max_local_dims[2] = static_cast<std::uint32_t>(KILN_ATTR(d.handle, MAX_BLOCK_DIM_Z));
  info.max_grid_dims[0] = static_cast<std::uint64_t>(KILN_ATTR(d.handle, MAX_GRID_DIM_X));
  info.max_grid_dims[1] = static_cast<std::uint64_t>(KILN_ATTR(d.handle, MAX_GRID_DIM_Y));
  info.max_grid_dims[2] = static_cast<std::uint64_t>(KILN_ATTR(d.handle, MAX_GRID_DIM_Z));
  info.compute_units = static_cast<std::uint32_t>(KILN_ATTR(d.handle, MULTIPROCESSOR_COUNT));
  info.warp_size = static_cast<std::uint32_t>(KILN_ATTR(d.handle, WARP_SIZE));
  info.clock_mhz = static_cast<std::uint32_t>(KILN_ATTR(d.handle, CLOCK_RATE) / 1000);
  sdk::set_cuda_caps(info, d.cc_major, d.cc_minor, info.warp_size);
  info.cache_bytes[1] = static_cast<std::uint64_t>(KILN_ATTR(d.handle, L2_CACHE_SIZE));
  info.peak_gflops = double(info.compute_units) * fp32_lanes_per_sm(d.cc_major, d.cc_minor) * 2.0 * info.clock_mhz / 1000.0;
  // Double data rate: two transfers per memory clock (kHz) over the bus (bits).
  const double memory_khz = KILN_ATTR(d.handle, MEMORY_CLOCK_RATE);
  const double bus_bits = KILN_ATTR(d.handle, GLOBAL_MEMORY_BUS_WIDTH);
  info.memory_bandwidth_gbps = 2.0 * memory_khz * 1e3 * bus_bits / 8.0 / 1e9;
}

}  // namespace

void discover_devices(PluginState& st) {
  check_cu(cu().cuInit(0), "cuInit", KILN_STATUS_UNAVAILABLE);
  int driver_version = 0;
  check_cu(cu().cuDriverGetVersion(&driver_version), "cuDriverGetVersion", KILN_STATUS_UNAVAILABLE);
  int count = 0;
  check_cu(cu().cuDeviceGetCount(&count), "cuDeviceGetCount", KILN_STATUS_UNAVAILABLE);
  if (count == 0) sdk::fail(KILN_STATUS_UNAVAILABLE, "the CUDA driver reports no device");
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    auto device = std::make_unique<Device>();
    device->ordinal = ordinal;
    check_cu(cu().cuDeviceGet(&device->handle, ordinal), "cuDeviceGet", KILN_STATUS_UNAVAILABLE);
    describe(*device, driver_version);  // for the name the filter may ask for; no context is made
    if (!st.settings.devices.keeps(static_cast<std::size_t>(ordinal), device->info.name)) continue;
    std::string flags;
    try {
      const std::string target = nvrtc_target(st.nvrtc, device->cc_major, device->cc_minor, st.settings.nvrtc.force_ptx);
      for (const std::string& f : nvrtc_flags(target, st.settings.nvrtc)) flags += " " + f;
    } catch (const sdk::PluginError& e) {
      // Too old for this NVRTC: memory and copies still work, compile says why.
      device->info.flags &= ~KILN_DEVICE_CAN_COMPILE;
      flags = " (no target)";
      sdk::Host::log(KILN_LOG_WARNING, std::string("cuda: device ") + std::to_string(ordinal) + ": " + e.what());
    }
    device->cache_key = std::string("cuda ") + kPluginVersion + "; nvrtc " + st.nvrtc.version() + ";" + flags;
    st.devices.push_back(std::move(device));
  }
  if (st.devices.empty())
    sdk::fail(KILN_STATUS_UNAVAILABLE, "no CUDA device left: the driver has " + std::to_string(count) +
                                           ", none is selected by option 'devices'");
}

void close_device(Device& d) {
  std::lock_guard lock(d.mutex);
  if (!d.open) return;
  if (d.lost) return;  // synchronizing would wait for the runaway kernel (cuda.hpp)
  {
    ContextScope scope(d.context);
    cu().cuStreamSynchronize(d.stream);
    d.staging.reset();
    if (d.flush_buffer != 0) cu().cuMemFree(d.flush_buffer);
    cu().cuStreamDestroy(d.stream);
  }
  cu().cuDevicePrimaryCtxRelease(d.handle);
  d.flush_buffer = 0;
  d.stream = nullptr;
  d.context = nullptr;
  d.open = false;
}

Device& checked_device(kiln_device* device, const char* function) {
  Device& d = sdk::checked_device(device, state().devices, function);
  if (d.lost)
    sdk::fail(KILN_STATUS_DEVICE_LOST, std::string(function) + ": the device is lost: a timed kernel passed its time "
                                                               "limit and CUDA cannot stop it without destroying the context");
  return d;
}

std::size_t device_total() { return state().devices.size(); }

kiln_error* device_count(kiln_device_count_args* raw) { return sdk::answer_device_count(raw, device_total); }

kiln_error* device_info(kiln_device_info_args* raw) {
  return sdk::answer_device_info(raw, device_total, [](std::uint32_t index) -> const kiln_device_info& {
    return state().devices[index]->info;
  });
}

kiln_error* device_open(kiln_device_open_args* raw) {
  return sdk::answer_device_open(raw, device_total, [](std::uint32_t index) {
    Device& d = *state().devices[index];
    std::lock_guard lock(d.mutex);
    if (!d.open) {
      check_cu(cu().cuDevicePrimaryCtxRetain(&d.context, d.handle), "cuDevicePrimaryCtxRetain", KILN_STATUS_UNAVAILABLE);
      try {
        ContextScope scope(d.context);
        check_cu(cu().cuStreamCreate(&d.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", KILN_STATUS_UNAVAILABLE);
        d.staging = std::make_unique<StagingPool>();
      } catch (...) {
        cu().cuDevicePrimaryCtxRelease(d.handle);
        d.context = nullptr;
        throw;
      }
      d.open = true;
    }
    return reinterpret_cast<kiln_device*>(&d);
  });
}

void device_close(kiln_device* device) {
  if (device == nullptr || !state_ready()) return;
  for (const auto& known : state().devices)
    if (known.get() == as_device(device)) close_device(*known);
}

kiln_error* device_synchronize(kiln_device* device) {
  return sdk::guard([&] {
    Device& d = checked_device(device, "device_synchronize");
    ContextScope scope(d.context);
    check_cu(cu().cuStreamSynchronize(d.stream), "cuStreamSynchronize", KILN_STATUS_LAUNCH_FAILED);
  });
}

const sdk::DeviceFunctions kDeviceFunctions = {device_count, device_info, device_open, device_close,
                                                device_synchronize};

}  // namespace kiln::cuda
