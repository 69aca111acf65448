// Internal: the process-wide table of plugin libraries.
//
// A library is dlopened, queried and initialised at most once per process,
// whatever number of Runtimes name it, because the ABI allows init only
// once. It is never unloaded: objects compiled with OpenMP crash when
// unloaded under their threads, and drivers keep threads of their own.
// shutdown runs at process exit, from an atexit handler registered right
// after that plugin's init, so before the plugin's own static destructors.
#pragma once

#include "host_api.hpp"

#include <kiln/plugin.h>

#include <boost/dll/shared_library.hpp>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln::detail {

class DeviceState;

class LoadedLibrary {
 public:
  LoadedLibrary(std::filesystem::path path, boost::dll::shared_library library, const kiln_plugin_api& api);

  const std::filesystem::path& path() const { return path_; }
  void* native_handle() const { return library_.native(); }
  // The plugin table, zero-filled past the plugin's struct_size (so an older
  // plugin's missing functions read as NULL).
  const kiln_plugin_api& api() const { return api_; }
  std::string name() const;  // the table's own name, sanitised ("" if none)
  std::string version() const;
  std::string description() const;
  std::vector<LogLine> log() const { return log_.lines(); }

  // Calls init once (later calls return the first outcome). `options_json`
  // differing from the first call's is reported in `note`.
  Result<void> initialize(const std::string& plugin_name, const std::string& options_json, std::string& note);

  // The open device `index`, shared by every handle and Runtime.
  Result<std::shared_ptr<DeviceState>> open_device(const std::string& plugin_name, std::uint32_t index,
                                                   const DeviceInfo& info);

  // The options init ran with ("" before init).
  std::string init_options() const {
    std::lock_guard lock(mutex_);
    return init_options_;
  }

  // A plugin whose compile crashed or hung in the compile probe
  // (isolate_compile) is quarantined for the rest of the process: every
  // later compile on any of its devices, from any Runtime, is refused with
  // this reason. Its devices' buffers and programs keep working.
  void quarantine(const std::string& reason) {
    std::lock_guard lock(mutex_);
    if (!quarantine_reason_) quarantine_reason_ = reason;
  }
  std::optional<std::string> quarantine_reason() const {
    std::lock_guard lock(mutex_);
    return quarantine_reason_;
  }

  // True once shutdown ran: handles destroyed later must not call in.
  bool shut_down() const { return shut_down_.load(); }
  void shutdown();

  // The release functions of ABI 1.1 (device_close2, buffer_free2,
  // shutdown2) report failures, but they run where nothing can return one
  // (destructors, exit): the error is kept in the plugin's log as a warning.
  void log_release_error(kiln_error* error, std::string_view function);

 private:
  std::filesystem::path path_;
  boost::dll::shared_library library_;
  kiln_plugin_api api_{};
  kiln_host_api host_{};
  PluginLog log_;

  mutable std::mutex mutex_;  // init, the device table, the quarantine
  enum class InitState { NotYet, Ready, Failed } init_state_ = InitState::NotYet;
  std::optional<Error> init_error_;
  std::string init_options_;
  std::optional<std::string> quarantine_reason_;
  std::vector<std::weak_ptr<DeviceState>> devices_;
  std::atomic<bool> shut_down_{false};
};

// Loads the library at `path` (absolute) and queries it, or finds it already
// loaded. Errors (ErrorCode::PluginLoad) carry the exact reason: file
// missing, the dlerror text (e.g. a missing dependency), no entry point,
// query returned NULL, ABI major mismatch, a minor newer than the host's,
// table too small.
//
// `host_minor` is the newest ABI minor the host claims to speak: always
// KILN_ABI_MINOR, except in the loader tests, which pass an older one to
// show how an older host treats a newer plugin.
Result<LoadedLibrary*> load_library(const std::filesystem::path& path, std::uint32_t host_minor = KILN_ABI_MINOR);

// True when the library at `path` was loaded and queried in this process
// already (whatever its init's outcome, which is kept): probing it again
// would tell nothing new.
bool library_loaded(const std::filesystem::path& path);

}  // namespace kiln::detail
