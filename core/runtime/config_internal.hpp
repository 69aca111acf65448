// Internal pieces of config loading shared by config_*.cpp and manifest.cpp.
#pragma once

#include "kiln/runtime/config.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::detail {

// The in-tree plugins, in the order `kiln devices` lists them.
inline constexpr const char* kBuiltinPlugins[] = {"c", "cblas", "cuda", "opencl", "vulkan", "dummy"};

// The built-in entries alone (no manifests read yet).
Config builtin_entries();

// Reads every *.json manifest in `dirs` (sorted by file name within a
// folder). A broken manifest is skipped with a warning, never fatal.
std::vector<PluginConfig> read_manifests(const std::vector<std::filesystem::path>& dirs,
                                         std::vector<std::string>& warnings);

// The first folder of `dirs` holding `file_name`, or empty.
std::filesystem::path find_in_dirs(const std::vector<std::filesystem::path>& dirs, const std::string& file_name);

}  // namespace kiln::detail
