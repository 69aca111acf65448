// The OpenCL plugin: its ABI table, init (options, loader, discovery),
// shutdown and cache key.
//
// Options (config.json "opencl": {"options": {...}}):
//   "library":       ICD loader to dlopen (default "libOpenCL.so.1")
//   "platforms":     ["NVIDIA", ...] keep platforms whose name or vendor contains one
//   "devices":       [0, "H200"] device ordinals (among the devices of the
//                    platforms kept) or name substrings to keep
//                    (docs/config.md, "The devices option"; default: all)
//   "build_options": "-cl-mad-enable" extra clBuildProgram options
//   "pocl_cache_dir": folder for PoCL's kernel cache, set as POCL_CACHE_DIR
//                    only when that is unset (default ~/.cache/kiln/pocl);
//                    "" never touches the environment
#include "opencl.hpp"

#include <kiln/sdk/plugin_entry.hpp>
#include <kiln/sdk/plugin_state.hpp>
#include <kiln/sdk/plugin_table.hpp>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>

namespace kiln::opencl {

namespace {

sdk::PluginState<PluginState> g_state("opencl");

// PoCL fails device enumeration (CL_DEVICE_NOT_FOUND, no reason) when it
// cannot write its kernel cache, and it reads POCL_CACHE_DIR only from the
// environment (once, at its first use), so there is no way to hand it a
// folder but the environment. The plugin therefore sets POCL_CACHE_DIR, but
// only when the user left it unset and the "pocl_cache_dir" option is not
// "" (which leaves the environment alone), and it says so in its log, which
// `kiln devices` shows. Must run before the first OpenCL call.
std::filesystem::path default_pocl_cache_dir() {
  std::filesystem::path base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    base = xdg;
  else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    base = std::filesystem::path(home) / ".cache";
  else
    base = std::filesystem::temp_directory_path();
  return base / "kiln" / "pocl";
}

void ensure_pocl_cache_dir(const std::optional<std::string>& option) {
  if (const char* set = std::getenv("POCL_CACHE_DIR"); set != nullptr) return;
  if (option && option->empty()) return;  // the user asked us not to touch the environment
  const std::filesystem::path dir = option ? std::filesystem::path(*option) : default_pocl_cache_dir();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    sdk::Host::log(KILN_LOG_WARNING, "opencl: cannot create PoCL cache folder " + dir.string() + ": " + ec.message());
    return;
  }
  setenv("POCL_CACHE_DIR", dir.c_str(), 0);
  sdk::Host::log(KILN_LOG_INFO, "opencl: environment: POCL_CACHE_DIR was unset; set it to " + dir.string() +
                                    " for PoCL's kernel cache (option \"pocl_cache_dir\"; \"\" leaves it unset)");
}

Settings read_settings(const sdk::Options& options) {
  Settings s;
  s.library = options.get_string("library", s.library);
  s.platforms = options.get_string_list("platforms");
  s.devices = sdk::DeviceFilter::read(options);
  s.build_options = options.get_string("build_options", "");
  if (options.has("pocl_cache_dir")) s.pocl_cache_dir = options.get_string("pocl_cache_dir", "");
  options.warn_unknown_keys("opencl");
  return s;
}

kiln_error* init(kiln_init_args* raw) {
  return sdk::guard_init(raw, [&](const sdk::Options& options) {
    auto st = std::make_unique<PluginState>();
    st->settings = read_settings(options);
    ensure_pocl_cache_dir(st->settings.pocl_cache_dir);
    load_cl_api(cl_mutable(), st->settings.library);
    discover_devices(*st);
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
  return sdk::plugin_table({.name = "opencl",
                            .version = kPluginVersion,
                            .description = "OpenCL devices through the ICD loader (PoCL on CPUs, vendor drivers on GPUs)"},
                           {init, shutdown, cache_key}, kDeviceFunctions, kPoolFunctions, kCompileFunctions,
                           kLaunchFunctions);
}

}  // namespace kiln::opencl

KILN_SDK_PLUGIN_QUERY(kiln::opencl::make_table)
