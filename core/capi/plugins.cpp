// kiln_runtime_plugin* and kiln_plugin_*: what happened to each plugin the
// config names (loaded, skipped with its reason, disabled).
#include "capi/handles.hpp"

using kiln::capi::guard;
using kiln::capi::make_status;
using kiln::capi::null_argument;

extern "C" {

kiln_status_t* kiln_runtime_plugin_count(const kiln_runtime_t* runtime, size_t* count) {
  if (runtime == nullptr) return null_argument("kiln_runtime_plugin_count", "runtime");
  if (count == nullptr) return null_argument("kiln_runtime_plugin_count", "count");
  *count = runtime->plugins.size();
  return nullptr;
}

kiln_status_t* kiln_runtime_plugin(const kiln_runtime_t* runtime, size_t index, const kiln_plugin_t** plugin) {
  return guard("kiln_runtime_plugin", [&]() -> kiln_status_t* {
    if (runtime == nullptr) return null_argument("kiln_runtime_plugin", "runtime");
    if (plugin == nullptr) return null_argument("kiln_runtime_plugin", "plugin");
    if (index >= runtime->plugins.size())
      return make_status(KILN_CODE_INVALID_ARGUMENT, "kiln_runtime_plugin: index " + std::to_string(index) + " of " +
                                                         std::to_string(runtime->plugins.size()) + " plugins");
    *plugin = &runtime->plugins[index];
    return nullptr;
  });
}

const char* kiln_plugin_name(const kiln_plugin_t* plugin) { return plugin ? plugin->record.name.c_str() : nullptr; }

kiln_plugin_state_t kiln_plugin_state(const kiln_plugin_t* plugin) {
  if (plugin == nullptr) return KILN_PLUGIN_SKIPPED;
  switch (plugin->record.status) {
    case kiln::PluginStatus::Loaded: return KILN_PLUGIN_LOADED;
    case kiln::PluginStatus::Skipped: return KILN_PLUGIN_SKIPPED;
    case kiln::PluginStatus::Disabled: return KILN_PLUGIN_DISABLED;
  }
  return KILN_PLUGIN_SKIPPED;
}

const char* kiln_plugin_state_name(kiln_plugin_state_t state) {
  switch (state) {
    case KILN_PLUGIN_LOADED: return "loaded";
    case KILN_PLUGIN_SKIPPED: return "skipped";
    case KILN_PLUGIN_DISABLED: return "disabled";
  }
  return "unknown";
}

const char* kiln_plugin_reason(const kiln_plugin_t* plugin) { return plugin ? plugin->record.reason.c_str() : nullptr; }
const char* kiln_plugin_version(const kiln_plugin_t* plugin) {
  return plugin ? plugin->record.version.c_str() : nullptr;
}
const char* kiln_plugin_library(const kiln_plugin_t* plugin) {
  return plugin ? plugin->record.library.c_str() : nullptr;
}
uint32_t kiln_plugin_device_count(const kiln_plugin_t* plugin) {
  return plugin ? static_cast<uint32_t>(plugin->record.devices.size()) : 0;
}

}  // extern "C"
