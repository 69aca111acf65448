// kiln/runtime/config.hpp - config.json: which plugins to load, with what
// options, and the autotuner's settings. docs/config.md documents every key.
//
// A Config always starts as the built-in default (every in-tree plugin,
// found next to libkiln; dummy disabled). A config file then changes only
// what it names: `{"plugins": {"cuda": {"enabled": false}}}` disables CUDA
// and leaves every other plugin as it was.
#pragma once

#include <kiln/passes/bounds.hpp>
#include <kiln/result.hpp>
#include <kiln/tune/autotune_config.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln {

// Where a value came from, for messages: "/etc/kiln.json:12:5" or "built-in".
struct SourceLocation {
  std::string file;  // empty: the built-in default
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based, in bytes

  std::string to_string() const;
};

// One entry of a plugin's "devices" filter: a device index, or a substring
// of the device name.
using DeviceSelector = std::variant<std::uint32_t, std::string>;

struct PluginConfig {
  std::string name;                 // "c", "cuda", ...: device ids are "<name>:<index>"
  bool enabled = true;
  std::int64_t priority = 0;        // of two plugins with one name, the higher loads
  std::filesystem::path library;    // absolute; empty: not given (see docs/config.md)
  bool required = false;            // failing to load is fatal
  std::vector<DeviceSelector> devices;  // empty: expose every device
  std::string options_json = "{}";  // handed to the plugin's init
  bool isolate_compile = false;     // each compile first in a child process (docs/config.md)
  SourceLocation origin;            // the config entry or manifest that named it
  bool from_manifest = false;
};

// The "autotune" section: the autotuner's typed settings (checked when the
// config is parsed), and the section as JSON text with its location.
struct AutotuneConfig {
  tune::AutotuneSettings settings;
  std::string raw_json = "{}";
  SourceLocation location;
};

struct Config {
  // The file this came from; empty for the built-in default.
  std::filesystem::path file;
  // Folders searched for plugin manifests (*.json) and for libraries named
  // without a folder: the config's "plugin_paths", then the built-in plugin
  // folder. Absolute.
  std::vector<std::filesystem::path> plugin_paths;
  // Every plugin the config or a manifest names, in a stable order: the
  // built-in plugins first, then config entries, then manifests.
  std::vector<PluginConfig> plugins;
  AutotuneConfig autotune;
  // The tuning database file (used by the autotuner); empty: its default.
  std::filesystem::path tuning_db;
  // "bounds": what Device::compile does with memory accesses it cannot
  // prove in range (kiln/passes/bounds.hpp).
  passes::BoundsPolicy bounds = passes::BoundsPolicy::Guard;
  // Unknown keys and other problems that do not stop kiln; never silent:
  // `kiln devices` shows them.
  std::vector<std::string> warnings;

  // "built-in" or the file's path.
  std::string source() const;
  const PluginConfig* plugin(std::string_view name) const;
};

// The folder the in-tree plugins are installed in: <folder of libkiln>/kiln/plugins.
std::filesystem::path builtin_plugin_dir();

// The built-in default: every in-tree plugin, dummy disabled.
Config builtin_config();

// Which file the search order picks: `explicit_path` (--config or an API
// argument), $KILN_CONFIG, $XDG_CONFIG_HOME/kiln/config.json (or, when
// XDG_CONFIG_HOME is unset or empty, ~/.config/kiln/config.json). nullopt:
// none, use the built-in default. An explicit path or $KILN_CONFIG naming a
// file that does not exist is an error, never a silent fallback.
Result<std::optional<std::filesystem::path>> find_config_file(
    const std::optional<std::filesystem::path>& explicit_path = std::nullopt);

// The built-in default overlaid with `text` (JSON, comments and trailing
// commas allowed). `file` names the text in messages and anchors relative
// paths (its folder); manifests in plugin_paths are read too.
Result<Config> parse_config(std::string_view text, const std::filesystem::path& file);

// Reads and parses a config file.
Result<Config> load_config_file(const std::filesystem::path& file);

// The search order, then load_config_file or builtin_config.
Result<Config> load_config(const std::optional<std::filesystem::path>& explicit_path = std::nullopt);

}  // namespace kiln
