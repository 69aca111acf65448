// Internal: loads one plugin of a config and fills its record.
#pragma once

#include "kiln/runtime/config.hpp"
#include "kiln/runtime/plugin_record.hpp"
#include "loaded_library.hpp"
#include "plugin_probe.hpp"

#include <filesystem>
#include <vector>

namespace kiln::detail {

// Loads, queries and initialises the plugin, then reads its devices and
// applies the config's device filter. Fills `record` (status, reason,
// version, devices, log, warnings). Returns the library when loaded, else
// NULL with record.status = Skipped and the reason.
LoadedLibrary* load_plugin(const PluginConfig& plugin, const std::vector<std::filesystem::path>& plugin_paths,
                           PluginRecord& record);

// The probes of the plugins about to load, started together so that they
// run side by side (a Runtime waits for the slowest, not for their sum).
class DiscoveryProbes {
 public:
  // Reads the settings (a problem with them becomes a warning) and starts a
  // probe for each plugin to load (`wanted`) that has a library not yet
  // loaded in this process.
  DiscoveryProbes(const std::vector<PluginConfig>& plugins, const std::vector<bool>& wanted,
                  std::vector<std::string>& warnings);
  // Waits for plugin `index`'s probe; nullopt: load it in-process.
  ProbeVerdict verdict(std::size_t index);

 private:
  std::vector<std::optional<PluginProbe>> probes_;
};

}  // namespace kiln::detail
