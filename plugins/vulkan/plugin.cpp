// The Vulkan plugin's ABI table, init (options, instance, discovery),
// shutdown and cache key.
//
// Options (config.json "options" of the vulkan backend):
//   "devices":    [0, "llvmpipe"]: device ordinals (among the compute-capable
//                 devices) or name substrings to keep (docs/config.md, "The
//                 devices option"; default: all)
//   "validation": true enables VK_LAYER_KHRONOS_validation (debugging; its
//                 messages go to the host log)
//   "wait_spin_us": microseconds a wait polls the fence before blocking in
//                 the driver. Default 100 on GPUs (NVIDIA H200: launch+wait
//                 of a tiny kernel 45 us -> 21 us), 0 on CPU devices, where
//                 a spinning thread takes a core from the device itself.
#include "vulkan.hpp"
#include "version.hpp"

#include <kiln/sdk/handles.hpp>
#include <kiln/sdk/plugin_entry.hpp>
#include <kiln/sdk/plugin_state.hpp>
#include <kiln/sdk/plugin_table.hpp>

#include <string>

namespace kiln::vulkan {

namespace {

constexpr std::uint32_t kGpuWaitSpinUs = 100;

// sdk::PluginState never destroys the state at exit: a host that exits
// without calling shutdown must not have Vulkan objects torn down by a static
// destructor, after the loader and driver may already have torn down theirs.
sdk::PluginState<PluginState> g_state(kPluginName);


kiln_error* init(kiln_init_args* raw) {
  return sdk::guard_init(raw, [&](const sdk::Options& options) {
    const sdk::DeviceFilter filter = sdk::DeviceFilter::read(options);
    const bool validation = options.get_bool("validation", false);
    const std::int64_t spin = options.get_int("wait_spin_us", -1);  // absent: by device kind
    if (options.has("wait_spin_us") && (spin < 0 || spin > 1000000))
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "option 'wait_spin_us' must be in 0..1000000, got " + std::to_string(spin));
    options.warn_unknown_keys(kPluginName);

    auto state = std::make_unique<PluginState>();
    state->instance = std::make_unique<Instance>(validation);
    state->devices = discover_devices(*state->instance, filter);
    if (state->devices.empty())
      sdk::fail(KILN_STATUS_UNAVAILABLE, filter.keeps_all()
                                             ? "no Vulkan device with a compute queue"
                                             : "no Vulkan device matches option 'devices'");
    state->opened.resize(state->devices.size());
    state->wait_spin_us = static_cast<std::int32_t>(spin);
    g_state.set(std::move(state));
  });
}

void shutdown() {
  if (!g_state.ready()) return;
  // Devices first (they wait for their queues), then the instance; but
  // after a lost device (a runaway dispatch still running on the driver's
  // threads, its VkDevice leaked) the instance is leaked too: destroying it
  // before its devices is invalid, and lets the loader unload the driver
  // those threads run in.
  PluginState& state = g_state.get();
  state.opened.clear();
  if (Device::any_lost()) static_cast<void>(state.instance.release());
  g_state.reset();
}

// One key per device: the GLSL compiler's output depends on what the device supports.
kiln_error* cache_key(kiln_cache_key_args* raw) {
  return sdk::answer_cache_key(raw, [](kiln_device* device) -> const std::string& {
    return to_device(device, "cache_key: device").cache_key();
  });
}


}  // namespace

bool plugin_ready() { return g_state.ready(); }

PluginState& plugin_state() { return g_state.get(); }

Device& to_device(kiln_device* handle, const char* what) { return sdk::checked_handle<Device>(handle, "", what); }

Allocation& to_buffer(kiln_buffer* handle, const char* what) {
  return sdk::checked_handle<Allocation>(handle, "", what);
}

kiln_plugin_api make_table() {
  return sdk::plugin_table({.name = kPluginName,
                            .version = kPluginVersion,
                            .description = "Vulkan compute: GLSL compute shaders compiled to SPIR-V with glslang"},
                           {init, shutdown, cache_key}, kDeviceFunctions, kPoolFunctions, kCompileFunctions,
                           kLaunchFunctions);
}

}  // namespace kiln::vulkan

KILN_SDK_PLUGIN_QUERY(kiln::vulkan::make_table)
