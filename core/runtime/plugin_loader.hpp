// Internal: loads one plugin of a config and fills its record.
#pragma once

#include "kiln/runtime/config.hpp"
#include "kiln/runtime/plugin_record.hpp"
#include "loaded_library.hpp"

#include <filesystem>
#include <vector>

namespace kiln::detail {

// Loads, queries and initialises the plugin, then reads its devices and
// applies the config's device filter. Fills `record` (status, reason,
// version, devices, log, warnings). Returns the library when loaded, else
// NULL with record.status = Skipped and the reason.
LoadedLibrary* load_plugin(const PluginConfig& plugin, const std::vector<std::filesystem::path>& plugin_paths,
                           PluginRecord& record);

}  // namespace kiln::detail
