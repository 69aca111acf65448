// The CUDA plugin: its ABI table, init (options, driver and NVRTC loading,
// discovery), shutdown and cache key.
//
// Options (config.json "cuda": {"options": {...}}):
//   "devices":        [0, "H200"] device ordinals or name substrings to keep
//                     (docs/config.md, "The devices option"; default: all)
//   "driver_library": path or soname of the driver (default "libcuda.so.1")
//   "nvrtc_library":  path of libnvrtc.so, tried before the usual places
//   "include_dirs":   folders holding cuda_fp16.h/cuda_bf16.h, searched
//                     before the toolkit's include folder found at build time
//   "nvrtc_options":  extra NVRTC flags, e.g. ["--use_fast_math"]
//   "force_ptx":      true: compile to PTX and let the driver JIT it
#include "cuda.hpp"

#include <kiln/sdk/plugin_entry.hpp>
#include <kiln/sdk/plugin_state.hpp>
#include <kiln/sdk/plugin_table.hpp>

namespace kiln::cuda {

namespace {

sdk::PluginState<PluginState> g_state("cuda");

Settings read_settings(const sdk::Options& options) {
  Settings s;
  s.devices = sdk::DeviceFilter::read(options);
  s.driver_library = options.get_string("driver_library", s.driver_library);
  s.nvrtc_library = options.get_string("nvrtc_library", "");
  s.nvrtc.include_dirs = options.get_string_list("include_dirs");
  for (std::string& dir : default_include_dirs()) s.nvrtc.include_dirs.push_back(std::move(dir));
  s.nvrtc.extra = options.get_string_list("nvrtc_options");
  s.nvrtc.force_ptx = options.get_bool("force_ptx", false);
  options.warn_unknown_keys("cuda");
  return s;
}

kiln_error* init(kiln_init_args* raw) {
  return sdk::guard_init(raw, [&](const sdk::Options& options) {
    auto st = std::make_unique<PluginState>();
    st->settings = read_settings(options);
    load_driver_api(cu_mutable(), st->settings.driver_library);
    st->nvrtc = load_nvrtc(nvrtc_candidates(st->settings.nvrtc_library));
    discover_devices(*st);
    sdk::Host::log(KILN_LOG_DEBUG, "cuda: NVRTC " + st->nvrtc.version() + " from " + st->nvrtc.library);
    g_state.set(std::move(st));
  });
}

void shutdown() {
  if (!g_state.ready()) return;
  for (auto& device : g_state.get().devices) close_device(*device);
  g_state.reset();
}

kiln_error* cache_key(kiln_cache_key_args* raw) {
  return sdk::answer_cache_key(raw, [](kiln_device* device) -> const std::string& {
    return checked_device(device, "cache_key").cache_key;
  });
}


}  // namespace

bool state_ready() { return g_state.ready(); }

PluginState& state() { return g_state.get(); }

kiln_plugin_api make_table() {
  return sdk::plugin_table({.name = "cuda",
                            .version = kPluginVersion,
                            .description = "NVIDIA GPUs through the CUDA driver API and NVRTC (both loaded at run time)"},
                           {init, shutdown, cache_key}, kDeviceFunctions, kPoolFunctions, kCompileFunctions,
                           kLaunchFunctions);
}

}  // namespace kiln::cuda

KILN_SDK_PLUGIN_QUERY(kiln::cuda::make_table)
