// Internal: the host side of the ABI's error objects and log callback.
#pragma once

#include "kiln/result.hpp"
#include "kiln/runtime/plugin_record.hpp"

#include <kiln/plugin.h>

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::detail {

// kiln_host_api.error_create: a host-owned error object. Thread-safe.
kiln_error* host_error_create(kiln_status status, const char* message, std::size_t len);

// Takes ownership of `error` (from a plugin function) and turns it into an
// Error naming the plugin and the ABI function. `error` must not be NULL.
Error take_error(kiln_error* error, std::string_view plugin, std::string_view function, std::int64_t op = -1);

// Frees an error object without reading it.
void discard_error(kiln_error* error);

std::string_view status_name(kiln_status status);

// Lines a plugin logged through kiln_host_api.log. Thread-safe.
class PluginLog {
 public:
  static void callback(void* context, kiln_log_level level, const char* message, std::size_t len);
  void add(kiln_log_level level, std::string text);
  std::vector<LogLine> lines() const;

 private:
  mutable std::mutex mutex_;
  std::vector<LogLine> lines_;
};

}  // namespace kiln::detail
