// kiln/result.hpp - the error and result types of the kiln C++ API.
//
// Every fallible core function returns Result<T>: a value or an Error. An
// Error carries what kind of failure it is, where it happened (plugin and
// function for ABI calls; file:line:col for config and IR text), and a
// message written for the user.
#pragma once

#include <kiln/plugin.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace kiln {

enum class ErrorCode : int {
  // The plugin ABI's kiln_status values, as they came from a plugin.
  InvalidArgument = KILN_STATUS_INVALID_ARGUMENT,
  Unsupported = KILN_STATUS_UNSUPPORTED,
  NotImplemented = KILN_STATUS_NOT_IMPLEMENTED,
  OutOfMemory = KILN_STATUS_OUT_OF_MEMORY,
  CompileFailed = KILN_STATUS_COMPILE_FAILED,
  LaunchFailed = KILN_STATUS_LAUNCH_FAILED,
  Unavailable = KILN_STATUS_UNAVAILABLE,
  DeviceLost = KILN_STATUS_DEVICE_LOST,
  Internal = KILN_STATUS_INTERNAL,
  Timeout = KILN_STATUS_TIMEOUT,  // a run passed its time limit (TimedLaunchOptions::timeout_ns)
  // The core's own.
  Config = 100,       // config.json unreadable, malformed or of the wrong shape
  Parse = 101,        // IR text does not parse
  Verify = 102,       // a kernel breaks an IR rule
  PluginLoad = 103,   // a plugin library could not be loaded or queried
  NotFound = 104,     // no such device, plugin, kernel, file, database entry
  Io = 105,           // file system or database failure
  Mismatch = 106,     // results differ from the reference
};

std::string_view error_code_name(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::Internal;
  std::string message;   // what went wrong, for the user
  std::string plugin;    // plugin name, for errors from a plugin ("" otherwise)
  std::string device;    // device id ("c:0"), for errors from a device call
  std::string function;  // ABI function or core step ("compile", "config", ...)
  std::int64_t op = -1;  // IR op index at fault, when there is one

  // "c:0: compile: op 12: ..." (or "plugin 'c': ..." when no device is
  // involved), or just the message when there is no context.
  std::string to_string() const;
};

// Thrown only by Result::value() on an error (and by the CLI's top level).
class ErrorException : public std::runtime_error {
 public:
  explicit ErrorException(Error error) : std::runtime_error(error.to_string()), error_(std::move(error)) {}
  const Error& error() const { return error_; }

 private:
  Error error_;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // The value; throws ErrorException when this holds an error.
  T& value() & {
    if (!ok()) throw ErrorException(error());
    return std::get<0>(state_);
  }
  const T& value() const& {
    if (!ok()) throw ErrorException(error());
    return std::get<0>(state_);
  }
  T&& value() && {
    if (!ok()) throw ErrorException(error());
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& { return std::get<1>(state_); }
  Error&& error() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  void value() const {
    if (failed_) throw ErrorException(error_);
  }
  const Error& error() const& { return error_; }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_;
  bool failed_ = false;
};

inline Error make_error(ErrorCode code, std::string message) {
  Error e;
  e.code = code;
  e.message = std::move(message);
  return e;
}

}  // namespace kiln

// Propagate an error from a Result-returning expression.
//   KILN_TRY(do_something());
//   KILN_TRY_ASSIGN(auto device, registry.device("c:0"));
#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)
#define KILN_TRY(expr)                                 \
  do {                                                 \
    auto&& kiln_try_result_ = (expr);                  \
    if (!kiln_try_result_.ok())                        \
      return std::move(kiln_try_result_).error();      \
  } while (0)
#define KILN_TRY_ASSIGN_IMPL(tmp, lhs, expr)           \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return std::move(tmp).error();        \
  lhs = std::move(tmp).value()
#define KILN_TRY_ASSIGN(lhs, expr) KILN_TRY_ASSIGN_IMPL(KILN_CONCAT(kiln_try_, __LINE__), lhs, expr)
