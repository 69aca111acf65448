#include "host_api.hpp"

#include "plugin_text.hpp"

#include <new>

// The struct behind kiln_error*: only the host creates and frees them.
struct kiln_error {
  kiln_status status;
  std::string message;
};

namespace kiln::detail {

namespace {

// Returned when allocating an error fails; never freed.
kiln_error out_of_memory_error{KILN_STATUS_OUT_OF_MEMORY, "out of host memory (while reporting an error)"};

}  // namespace

kiln_error* host_error_create(kiln_status status, const char* message, std::size_t len) {
  try {
    return new kiln_error{status, message != nullptr ? sanitize_plugin_text(std::string_view(message, len), TextKind::Paragraph)
                                                       : std::string()};
  } catch (...) {
    return &out_of_memory_error;
  }
}

void discard_error(kiln_error* error) {
  if (error != &out_of_memory_error) delete error;
}

Error take_error(kiln_error* error, std::string_view plugin, std::string_view function, std::int64_t op) {
  Error e;
  const int status = static_cast<int>(error->status);
  e.code = status >= KILN_STATUS_INVALID_ARGUMENT && status <= KILN_STATUS_TIMEOUT
               ? static_cast<ErrorCode>(status)
               : ErrorCode::Internal;
  e.message = error->message.empty() ? std::string(status_name(error->status)) : error->message;
  // Plugins often start their messages with their own name; the error
  // already carries it.
  const std::string own_prefix = std::string(plugin) + ": ";
  if (!plugin.empty() && e.message.compare(0, own_prefix.size(), own_prefix) == 0) e.message.erase(0, own_prefix.size());
  e.plugin = plugin;
  e.function = function;
  e.op = op;
  discard_error(error);
  return e;
}

std::string_view status_name(kiln_status status) {
  switch (status) {
    case KILN_STATUS_OK: return "ok";
    case KILN_STATUS_INVALID_ARGUMENT: return "invalid argument";
    case KILN_STATUS_UNSUPPORTED: return "unsupported";
    case KILN_STATUS_NOT_IMPLEMENTED: return "not implemented";
    case KILN_STATUS_OUT_OF_MEMORY: return "out of memory";
    case KILN_STATUS_COMPILE_FAILED: return "compile failed";
    case KILN_STATUS_LAUNCH_FAILED: return "launch failed";
    case KILN_STATUS_UNAVAILABLE: return "unavailable";
    case KILN_STATUS_DEVICE_LOST: return "device lost";
    case KILN_STATUS_INTERNAL: return "internal error";
    case KILN_STATUS_TIMEOUT: return "timeout";
  }
  return "unknown status";
}

void PluginLog::callback(void* context, kiln_log_level level, const char* message, std::size_t len) {
  if (context == nullptr) return;
  try {
    static_cast<PluginLog*>(context)->add(
        level, message != nullptr ? sanitize_plugin_text(std::string_view(message, len), TextKind::Paragraph) : std::string());
  } catch (...) {
    // A log line lost to an allocation failure must not unwind into the plugin.
  }
}

void PluginLog::add(kiln_log_level level, std::string text) {
  std::lock_guard lock(mutex_);
  lines_.push_back({static_cast<LogLevel>(level), std::move(text)});
}

std::vector<LogLine> PluginLog::lines() const {
  std::lock_guard lock(mutex_);
  return lines_;
}

}  // namespace kiln::detail
