// The Vulkan plugin's ABI table, init (options, instance, discovery) and the
// device functions.
//
// Options (config.json "options" of the vulkan backend):
//   "devices":    [0, 2] or ["H200", "llvmpipe"]: keep only these devices
//                 (indices among the compute-capable devices, or name parts)
//   "validation": true enables VK_LAYER_KHRONOS_validation (debugging; its
//                 messages go to the host log)
//   "wait_spin_us": microseconds a wait polls the fence before blocking in
//                 the driver. Default 100 on GPUs (NVIDIA H200: launch+wait
//                 of a tiny kernel 45 us -> 21 us), 0 on CPU devices, where
//                 a spinning thread takes a core from the device itself.
#include "compile.hpp"
#include "launch.hpp"
#include "plugin_state.hpp"
#include "pool.hpp"
#include "version.hpp"

#include <kiln/sdk/plugin_entry.hpp>

#include <string>

namespace kiln::vulkan {

namespace {

constexpr std::uint32_t kGpuWaitSpinUs = 100;

// The holder is never destroyed: a host that exits without calling shutdown
// must not have Vulkan objects torn down by a static destructor, after the
// loader and driver may already have torn down their own state.
std::unique_ptr<PluginState>& state_slot() {
  static auto* state = new std::unique_ptr<PluginState>();
  return *state;
}

DeviceFilter read_device_filter(const sdk::Options& options) {
  DeviceFilter filter;
  if (!options.has("devices")) return filter;
  try {
    filter.indices = options.get_int_list("devices");
  } catch (const sdk::PluginError&) {
    try {
      filter.names = options.get_string_list("devices");
    } catch (const sdk::PluginError&) {
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT,
                "option 'devices' must be a list of device indices or of device name parts");
    }
  }
  return filter;
}

kiln_error* init(kiln_init_args* raw) {
  return sdk::guard_init(raw, [&](const sdk::Options& options) {
    const DeviceFilter filter = read_device_filter(options);
    const bool validation = options.get_bool("validation", false);
    const std::int64_t spin = options.get_int("wait_spin_us", -1);  // absent: by device kind
    if (options.has("wait_spin_us") && (spin < 0 || spin > 1000000))
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "option 'wait_spin_us' must be in 0..1000000, got " + std::to_string(spin));
    options.warn_unknown_keys(kPluginName);

    auto state = std::make_unique<PluginState>();
    state->instance = std::make_unique<Instance>(validation);
    state->devices = discover_devices(*state->instance, filter);
    if (state->devices.empty())
      sdk::fail(KILN_STATUS_UNAVAILABLE, filter.indices.empty() && filter.names.empty()
                                             ? "no Vulkan device with a compute queue"
                                             : "no Vulkan device matches option 'devices'");
    state->opened.resize(state->devices.size());
    state->wait_spin_us = static_cast<std::int32_t>(spin);
    state_slot() = std::move(state);
  });
}

void shutdown() {
  if (state_slot() == nullptr) return;
  // Devices first (they wait for their queues), then the instance.
  state_slot()->opened.clear();
  state_slot().reset();
}

std::size_t device_total() { return plugin_state().devices.size(); }

kiln_error* device_count(kiln_device_count_args* raw) { return sdk::answer_device_count(raw, device_total); }

kiln_error* device_info(kiln_device_info_args* raw) {
  return sdk::answer_device_info(raw, device_total, [](std::uint32_t index) -> const kiln_device_info& {
    return plugin_state().devices[index].info;
  });
}

kiln_error* device_open(kiln_device_open_args* raw) {
  return sdk::answer_device_open(raw, device_total, [](std::uint32_t index) {
    PluginState& state = plugin_state();
    const PhysicalDevice& physical = state.devices[index];
    std::lock_guard lock(state.open_mutex);
    auto& slot = state.opened[index];
    if (slot == nullptr) slot = std::make_unique<Device>(
          *state.instance, physical,
          state.wait_spin_us >= 0 ? static_cast<std::uint32_t>(state.wait_spin_us)
                                  : (physical.info.kind == KILN_DEVICE_KIND_GPU ? kGpuWaitSpinUs : 0));
    return to_handle(slot.get());
  });
}

void device_close(kiln_device* handle) {
  if (handle == nullptr || state_slot() == nullptr) return;
  PluginState& state = *state_slot();
  std::lock_guard lock(state.open_mutex);
  for (auto& slot : state.opened)
    if (to_handle(slot.get()) == handle) slot.reset();
}

const kiln_plugin_api kTable = {
    .struct_size = KILN_PLUGIN_API_STRUCT_SIZE,
    .abi_major = KILN_ABI_MAJOR,
    .abi_minor = KILN_ABI_MINOR,
    .name = kPluginName,
    .version = kPluginVersion,
    .description = "Vulkan compute: GLSL compute shaders compiled to SPIR-V with glslang",
    .init = init,
    .shutdown = shutdown,
    .device_count = device_count,
    .device_info = device_info,
    .device_open = device_open,
    .device_close = device_close,
    .device_synchronize = device_synchronize,
    .memory_info = memory_info,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    .buffer_host_pointer = nullptr,
    .copy_to_device = copy_to_device,
    .copy_to_host = copy_to_host,
    .copy_device_to_device = copy_device_to_device,
    .event_wait = event_wait,
    .event_release = event_release,
    .compile = compile,
    .program_source = program_source,
    .program_release = program_release,
    .launch = launch,
    .launch_timed = launch_timed,
    .cache_key = cache_key,
    .extensions = nullptr,
    .shutdown2 = nullptr,      // the 1.0 forms above are used
    .device_close2 = nullptr,
    .buffer_free2 = nullptr,
    .event_query = nullptr,  // not yet: waiting is the only way to learn of completion
};

}  // namespace

PluginState& plugin_state() {
  if (state_slot() == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "the vulkan plugin is not initialised");
  return *state_slot();
}

Device& to_device(kiln_device* handle, const char* what) {
  if (handle == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, std::string(what) + " is NULL");
  return *reinterpret_cast<Device*>(handle);
}

Allocation& to_buffer(kiln_buffer* handle, const char* what) {
  if (handle == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, std::string(what) + " is NULL");
  return *reinterpret_cast<Allocation*>(handle);
}

}  // namespace kiln::vulkan

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(uint32_t host_major, uint32_t) {
  return host_major == KILN_ABI_MAJOR ? &kiln::vulkan::kTable : nullptr;
}
