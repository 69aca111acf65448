// kiln/runtime/plugin_record.hpp - what happened to each plugin the config
// names: loaded (with its devices), skipped (with the exact reason) or
// disabled. `kiln devices` prints these.
#pragma once

#include <kiln/runtime/config.hpp>
#include <kiln/runtime/device_info.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace kiln {

enum class PluginStatus { Loaded, Skipped, Disabled };
std::string_view plugin_status_name(PluginStatus status);  // "loaded", "skipped", "disabled"

enum class LogLevel { Debug = KILN_LOG_DEBUG, Info = KILN_LOG_INFO, Warning = KILN_LOG_WARNING, Error = KILN_LOG_ERROR };
std::string_view log_level_name(LogLevel level);  // "debug", "info", "warning", "error"

struct LogLine {
  LogLevel level = LogLevel::Info;
  std::string text;
};

struct PluginRecord {
  std::string name;
  std::filesystem::path library;
  std::string version;       // from the plugin table; empty if never queried
  std::string description;
  PluginStatus status = PluginStatus::Skipped;
  std::string reason;        // why skipped or disabled; empty when loaded
  std::int64_t priority = 0;
  bool required = false;
  SourceLocation origin;     // the config entry or manifest that named it
  std::vector<DeviceInfo> devices;  // loaded plugins: the exposed devices
  std::vector<LogLine> log;  // what the plugin logged while loading
  std::vector<std::string> warnings;  // about this plugin (options, filters, names)

  bool can_compile() const;  // some device accepts kernels
};

}  // namespace kiln
