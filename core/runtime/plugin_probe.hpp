// Internal: the child-process probe run before a plugin is loaded in-process
// (docs/config.md, "Plugin probe"). The probe executable
// (core/probe/plugin_probe_main.cpp, installed as <libdir>/kiln/kiln-plugin-probe)
// loads the plugin, queries it, inits it with the config's options and reads
// its devices; a plugin that crashes, hangs or exits there is skipped with
// the signal, the exit status or the timeout, and never touches the host.
#pragma once

#include <kiln/kernel_ir.h>

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kiln::detail {

struct ProbeSettings {
  bool enabled = true;
  std::chrono::milliseconds timeout{30000};
  std::filesystem::path executable;  // empty: not found (then plugins load without a probe)
};

// Defaults, then $KILN_PLUGIN_PROBE ("0"/"off" disables it) and
// $KILN_PLUGIN_PROBE_TIMEOUT (seconds, > 0). `problem` is set for a value
// that cannot be read (the default is kept).
ProbeSettings probe_settings(std::string& problem);

// What a probe found: nullopt when the plugin got through (or failed
// cleanly, which the in-process load reports exactly), else the reason to
// skip it with.
using ProbeVerdict = std::optional<std::string>;

// One probe in flight. start() spawns it (posix_spawn: the host may have
// threads, so never a bare fork) and returns at once, so that the probes of
// several plugins run side by side; verdict() waits for it, at most until
// the timeout, then kills it. A verdict found earlier in this process for
// the same library file (path, size, modification time), options and ABI
// minor is reused without a process.
// The compile probe's request (a plugin with "isolate_compile",
// docs/config.md): after init, open device `device_index` and compile `ops`.
struct CompileProbeRequest {
  std::uint32_t device_index = 0;
  const std::vector<kiln_op>* ops = nullptr;
};

class PluginProbe {
 public:
  // With `compile`, the probe also compiles a kernel; its verdict is never
  // cached (each kernel is a new question).
  static PluginProbe start(const ProbeSettings& settings, const std::filesystem::path& library,
                           const std::string& options_json, std::uint32_t host_minor,
                           const CompileProbeRequest* compile = nullptr);
  PluginProbe(PluginProbe&& other) noexcept;
  PluginProbe& operator=(PluginProbe&&) = delete;
  PluginProbe(const PluginProbe&) = delete;
  ~PluginProbe();

  ProbeVerdict verdict();

 private:
  PluginProbe() = default;
  ProbeVerdict finish();

  std::string cache_key_;  // empty: not cached (a compile probe)
  bool compile_ = false;
  std::optional<ProbeVerdict> known_;  // cached, or found when starting failed
  pid_t pid_ = -1;
  int report_fd_ = -1;
  int stderr_fd_ = -1;
  std::chrono::steady_clock::time_point deadline_;
  std::chrono::milliseconds timeout_{0};
};

}  // namespace kiln::detail
