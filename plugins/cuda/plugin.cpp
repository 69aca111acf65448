// The CUDA plugin: its ABI table, init (options, driver and NVRTC loading,
// discovery), shutdown and cache key.
//
// Options (config.json "cuda": {"options": {...}}):
//   "devices":        [0, 2]  keep these device ordinals (default: all)
//   "driver_library": path or soname of the driver (default "libcuda.so.1")
//   "nvrtc_library":  path of libnvrtc.so, tried before the usual places
//   "include_dirs":   folders holding cuda_fp16.h/cuda_bf16.h, searched
//                     before the toolkit's include folder found at build time
//   "nvrtc_options":  extra NVRTC flags, e.g. ["--use_fast_math"]
//   "force_ptx":      true: compile to PTX and let the driver JIT it
#include "cuda.hpp"

#include <kiln/sdk/plugin_entry.hpp>

namespace kiln::cuda {

namespace {

std::unique_ptr<PluginState> g_state;

Settings read_settings(const sdk::Options& options) {
  Settings s;
  s.devices = options.get_int_list("devices");
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
    g_state = std::move(st);
  });
}

void shutdown() {
  if (!g_state) return;
  for (auto& device : g_state->devices) close_device(*device);
  g_state.reset();
}

kiln_error* cache_key(kiln_cache_key_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "cache_key");
    args.key = d.cache_key.c_str();
    sdk::write_args(raw, args);
  });
}

constexpr kiln_plugin_api kTable = {
    .struct_size = KILN_PLUGIN_API_STRUCT_SIZE,
    .abi_major = KILN_ABI_MAJOR,
    .abi_minor = KILN_ABI_MINOR,
    .name = "cuda",
    .version = kPluginVersion,
    .description = "NVIDIA GPUs through the CUDA driver API and NVRTC (both loaded at run time)",
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
    .buffer_host_pointer = nullptr,  // device memory is not host memory
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

bool state_ready() { return g_state != nullptr; }

PluginState& state() {
  if (!g_state) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "the cuda plugin is not initialised");
  return *g_state;
}

}  // namespace kiln::cuda

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(uint32_t host_major, uint32_t) {
  return host_major == KILN_ABI_MAJOR ? &kiln::cuda::kTable : nullptr;
}
