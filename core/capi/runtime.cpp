// kiln_runtime_*: open a runtime from a config file or config text; its
// warnings.
#include "capi/handles.hpp"

#include <kiln/runtime/config.hpp>

#include <filesystem>

using kiln::capi::guard;
using kiln::capi::make_status;
using kiln::capi::null_argument;

namespace {

kiln_status_t* create(kiln::Result<kiln::Config> config, kiln_runtime_t** out) {
  if (!config) return make_status(config.error());
  auto shared = std::make_shared<const kiln::Config>(*config);
  kiln::Result<kiln::Runtime> runtime = kiln::Runtime::create(std::move(config).value());
  if (!runtime) return make_status(runtime.error());
  auto handle = std::make_unique<kiln_runtime_t>(kiln_runtime_t{std::move(runtime).value(), std::move(shared), {}, {}, {}});
  handle->warnings = handle->runtime.warnings();
  for (const kiln::PluginRecord& record : handle->runtime.plugins()) handle->plugins.push_back({record});
  handle->devices = handle->runtime.devices();
  *out = handle.release();
  return nullptr;
}

}  // namespace

extern "C" {

kiln_status_t* kiln_runtime_open(const char* config_path, kiln_runtime_t** out) {
  return guard("kiln_runtime_open", [&]() -> kiln_status_t* {
    if (out == nullptr) return null_argument("kiln_runtime_open", "out");
    std::optional<std::filesystem::path> path;
    if (config_path != nullptr) path = config_path;
    return create(kiln::load_config(path), out);
  });
}

kiln_status_t* kiln_runtime_open_json(const char* json, size_t len, kiln_runtime_t** out) {
  return guard("kiln_runtime_open_json", [&]() -> kiln_status_t* {
    if (out == nullptr) return null_argument("kiln_runtime_open_json", "out");
    if (json == nullptr && len > 0) return null_argument("kiln_runtime_open_json", "json");
    // The name anchors relative paths at the current directory, as a file there would.
    const std::filesystem::path name = std::filesystem::current_path() / "<config text>";
    return create(kiln::parse_config(std::string_view(json == nullptr ? "" : json, len), name), out);
  });
}

void kiln_runtime_free(kiln_runtime_t* runtime) { delete runtime; }

const char* kiln_runtime_config_source(const kiln_runtime_t* runtime) {
  if (runtime == nullptr) return nullptr;
  return runtime->config->file.empty() ? "built-in" : runtime->config->file.c_str();
}

kiln_status_t* kiln_runtime_warning_count(const kiln_runtime_t* runtime, size_t* count) {
  if (runtime == nullptr) return null_argument("kiln_runtime_warning_count", "runtime");
  if (count == nullptr) return null_argument("kiln_runtime_warning_count", "count");
  *count = runtime->warnings.size();
  return nullptr;
}

kiln_status_t* kiln_runtime_warning(const kiln_runtime_t* runtime, size_t index, const char** text) {
  return guard("kiln_runtime_warning", [&]() -> kiln_status_t* {
    if (runtime == nullptr) return null_argument("kiln_runtime_warning", "runtime");
    if (text == nullptr) return null_argument("kiln_runtime_warning", "text");
    if (index >= runtime->warnings.size())
      return make_status(KILN_CODE_INVALID_ARGUMENT, "kiln_runtime_warning: index " + std::to_string(index) +
                                                         " of " + std::to_string(runtime->warnings.size()) +
                                                         " warnings");
    *text = runtime->warnings[index].c_str();
    return nullptr;
  });
}

}  // extern "C"
