// kiln/runtime/runtime.hpp - loads the plugins a Config names and hands out
// devices.
//
//   kiln::Result<kiln::Runtime> runtime = kiln::Runtime::open();  // search order
//   for (const kiln::PluginRecord& p : runtime->plugins()) ...     // loaded/skipped/disabled
//   kiln::Result<kiln::Device> cpu = runtime->device("c:0");
//
// Loading never fails because one plugin fails: that plugin is skipped and
// its record says why. It is fatal only for a plugin the config marks
// "required", or when the caller asks for a device of a skipped plugin. A
// plugin that crashes, hangs or exits while it loads is caught by the plugin
// probe, a separate process (docs/config.md, "The plugin probe").
//
// Threads: create() and open() may run on several threads at once (each
// library is loaded and initialised once per process, whichever thread
// gets there first; the others wait and share it). A Runtime's methods are
// all const and may be called from any number of threads at once; copies of
// a Runtime share one state. Devices opened from it follow device.hpp. The
// Runtime must outlive nothing: handles keep what they need alive.
#pragma once

#include <kiln/result.hpp>
#include <kiln/runtime/config.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/plugin_record.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace kiln {

class Runtime {
 public:
  // Loads every enabled plugin of `config`. Fails only when a required
  // plugin cannot be loaded (the error names it and the reason).
  static Result<Runtime> create(Config config);
  // load_config(config_file) (the search order), then create.
  static Result<Runtime> open(const std::optional<std::filesystem::path>& config_file = std::nullopt);

  const Config& config() const;
  // One record per plugin the config names, in the config's order.
  std::span<const PluginRecord> plugins() const;
  const PluginRecord* plugin(std::string_view name) const;
  // Every exposed device of every loaded plugin.
  std::vector<DeviceInfo> devices() const;
  // Config warnings and loader warnings (duplicate names, ...).
  std::vector<std::string> warnings() const;

  // Opens a device by id: "<plugin>:<index>", or "<plugin>" for its first
  // device. Asking for a device of a skipped or disabled plugin is an error
  // that names the reason.
  Result<Device> device(std::string_view id) const;
  // The first device of the loaded plugin with the highest priority that
  // can compile; an error naming every skip reason when there is none.
  Result<Device> default_device() const;

 private:
  struct State;
  explicit Runtime(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace kiln
