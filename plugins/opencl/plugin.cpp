// The OpenCL plugin: its ABI table, init (options, loader, discovery),
// shutdown and cache key.
//
// Options (config.json "opencl": {"options": {...}}):
//   "library":       ICD loader to dlopen (default "libOpenCL.so.1")
//   "platforms":     ["NVIDIA", ...] keep platforms whose name or vendor contains one
//   "devices":       ["H200", ...]   keep devices whose name contains one
//   "build_options": "-cl-mad-enable" extra clBuildProgram options
#include "opencl.hpp"

#include <kiln/sdk/plugin_entry.hpp>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace kiln::opencl {

namespace {

std::unique_ptr<PluginState> g_state;

// PoCL fails device enumeration (CL_DEVICE_NOT_FOUND, no reason) when it
// cannot write its kernel cache; give it a kiln cache folder unless the user
// chose one. Must run before the first OpenCL call.
void ensure_pocl_cache_dir() {
  if (std::getenv("POCL_CACHE_DIR") != nullptr) return;
  std::filesystem::path base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    base = xdg;
  else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    base = std::filesystem::path(home) / ".cache";
  else
    base = std::filesystem::temp_directory_path();
  const std::filesystem::path dir = base / "kiln" / "pocl";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    sdk::Host::log(KILN_LOG_WARNING, "opencl: cannot create PoCL cache folder " + dir.string() + ": " + ec.message());
    return;
  }
  setenv("POCL_CACHE_DIR", dir.c_str(), 0);
}

Settings read_settings(const sdk::Options& options) {
  Settings s;
  s.library = options.get_string("library", s.library);
  s.platforms = options.get_string_list("platforms");
  s.devices = options.get_string_list("devices");
  s.build_options = options.get_string("build_options", "");
  options.warn_unknown_keys("opencl");
  return s;
}

kiln_error* init(kiln_init_args* raw) {
  return sdk::guard_init(raw, [&](const sdk::Options& options) {
    auto st = std::make_unique<PluginState>();
    st->settings = read_settings(options);
    ensure_pocl_cache_dir();
    load_cl_api(cl_mutable(), st->settings.library);
    discover_devices(*st);
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
    .name = "opencl",
    .version = kPluginVersion,
    .description = "OpenCL devices through the ICD loader (PoCL on CPUs, vendor drivers on GPUs)",
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
};

}  // namespace

bool state_ready() { return g_state != nullptr; }

PluginState& state() {
  if (!g_state) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "the opencl plugin is not initialised");
  return *g_state;
}

}  // namespace kiln::opencl

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(uint32_t host_major, uint32_t) {
  return host_major == KILN_ABI_MAJOR ? &kiln::opencl::kTable : nullptr;
}
