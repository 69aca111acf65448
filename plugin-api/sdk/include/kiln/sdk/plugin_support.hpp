// kiln/sdk/plugin_support.hpp - what every C++ plugin needs at the ABI boundary:
// errors (throw inside, convert at the edge), struct_size-aware argument
// reading and writing, logging through the host, and plugin options.
//
// Usage in an exported table function:
//
//   kiln_error* my_compile(kiln_compile_args* raw) {
//     return kiln::sdk::guard([&] {
//       auto args = kiln::sdk::read_args(raw);      // struct_size-safe copy
//       ...                                          // may throw PluginError
//       args.program = ...;
//       kiln::sdk::write_args(raw, args);           // writes only what fits
//     });
//   }
#pragma once

#include <kiln/plugin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kiln::sdk {

// An error a plugin function reports. Thrown inside the plugin, turned into a
// host kiln_error by guard().
class PluginError : public std::runtime_error {
 public:
  PluginError(kiln_status status, std::string message, std::int64_t failed_op = -1)
      : std::runtime_error(std::move(message)), status_(status), failed_op_(failed_op) {}
  kiln_status status() const { return status_; }
  std::int64_t failed_op() const { return failed_op_; }

 private:
  kiln_status status_;
  std::int64_t failed_op_;
};

[[noreturn]] inline void fail(kiln_status status, std::string message, std::int64_t failed_op = -1) {
  throw PluginError(status, std::move(message), failed_op);
}

// The checks every pool's copy functions make (plugin.h: INVALID_ARGUMENT).
// A byte range [offset, offset + bytes) inside a buffer of `buffer_bytes`;
// the message reads "<what>: <role> range [a, b) outside buffer of N bytes"
// (no role: "<what>: range ...").
inline void check_buffer_range(std::string_view what, std::string_view role, std::uint64_t offset, std::uint64_t bytes,
                               std::uint64_t buffer_bytes) {
  if (offset <= buffer_bytes && bytes <= buffer_bytes - offset) return;
  fail(KILN_STATUS_INVALID_ARGUMENT, std::string(what) + ": " + std::string(role) + (role.empty() ? "" : " ") +
                                         "range [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                                         ") outside buffer of " + std::to_string(buffer_bytes) + " bytes");
}
// copy_device_to_device's ranges: both inside their buffers and, within one
// buffer, disjoint (plugin.h: INVALID_ARGUMENT; cuMemcpyDtoDAsync leaves an
// overlap undefined, clEnqueueCopyBuffer and vkCmdCopyBuffer refuse it, so
// every plugin refuses it and a program behaves alike on each).
inline void check_device_copy(const kiln_copy_args& args, std::uint64_t destination_bytes, std::uint64_t source_bytes) {
  constexpr std::string_view what = "copy_device_to_device";
  check_buffer_range(what, "destination", args.device_offset, args.bytes, destination_bytes);
  check_buffer_range(what, "source", args.src_offset, args.bytes, source_bytes);
  if (args.device_buffer != args.src_buffer || args.bytes == 0) return;
  if (args.device_offset < args.src_offset + args.bytes && args.src_offset < args.device_offset + args.bytes)
    fail(KILN_STATUS_INVALID_ARGUMENT, std::string(what) + ": source range [" + std::to_string(args.src_offset) + ", " +
                                           std::to_string(args.src_offset + args.bytes) + ") and destination range [" +
                                           std::to_string(args.device_offset) + ", " +
                                           std::to_string(args.device_offset + args.bytes) + ") of one buffer overlap");
}
// A host pointer for a copy that moves any bytes.
inline void check_copy_host(const kiln_copy_args& args, std::string_view what) {
  if (args.bytes != 0 && args.host == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, std::string(what) + ": host pointer is NULL");
}

// The host table handed to init; kept for error creation and logging.
// Set once by init (bind) before any other call; read-only afterwards.
class Host {
 public:
  static void bind(const kiln_host_api* host) { host_ = host; }
  static const kiln_host_api* get() { return host_; }

  // Makes a host error object; returns NULL only if init never bound a host
  // (which cannot happen for calls made after a successful init).
  static kiln_error* error(kiln_status status, std::string_view message) {
    if (host_ == nullptr || host_->struct_size < KILN_STRUCT_SIZE(kiln_host_api, error_create) ||
        host_->error_create == nullptr)
      return nullptr;
    return host_->error_create(status, message.data(), message.size());
  }

  static void log(kiln_log_level level, std::string_view message) {
    if (host_ != nullptr && host_->struct_size >= KILN_STRUCT_SIZE(kiln_host_api, log) && host_->log != nullptr)
      host_->log(host_->context, level, message.data(), message.size());
  }

 private:
  static inline const kiln_host_api* host_ = nullptr;
};

// Runs `body`, converting every exception into a host error. Never throws.
template <class Body>
kiln_error* guard(Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const PluginError& e) {
    return Host::error(e.status(), e.what());
  } catch (const std::bad_alloc&) {
    return Host::error(KILN_STATUS_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return Host::error(KILN_STATUS_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return Host::error(KILN_STATUS_INTERNAL, "internal error: unknown exception");
  }
}

// As guard(), for compile: also reports the failing op index in args->failed_op.
template <class Body>
kiln_error* guard_compile(kiln_compile_args* raw, Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const PluginError& e) {
    if (raw != nullptr && raw->struct_size >= KILN_STRUCT_SIZE(kiln_compile_args, failed_op))
      raw->failed_op = e.failed_op();
    return Host::error(e.status(), e.what());
  } catch (const std::bad_alloc&) {
    return Host::error(KILN_STATUS_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return Host::error(KILN_STATUS_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return Host::error(KILN_STATUS_INTERNAL, "internal error: unknown exception");
  }
}

// Copies an argument struct the host filled, honouring its struct_size:
// fields the host does not know (an older minor) read as zero.
template <class T>
T read_args(const T* raw) {
  if (raw == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, "argument struct is NULL");
  if (raw->struct_size < sizeof(std::size_t))
    fail(KILN_STATUS_INVALID_ARGUMENT, "argument struct_size is " + std::to_string(raw->struct_size));
  T value{};
  std::memcpy(static_cast<void*>(&value), raw, std::min(raw->struct_size, sizeof(T)));
  value.struct_size = raw->struct_size;
  return value;
}

// Checks a struct the caller reached through a pointer or embedded in its
// arguments (the host table, a kernel, device info, a launch): its
// struct_size must cover at least `minimum` bytes (what the oldest minor
// that has the struct defined). Throws INVALID_ARGUMENT naming `what`.
inline void check_nested_size(std::string_view what, std::size_t struct_size, std::size_t minimum) {
  if (struct_size >= minimum) return;
  fail(KILN_STATUS_INVALID_ARGUMENT, std::string(what) + ": struct_size is " + std::to_string(struct_size) +
                                         ", less than the " + std::to_string(minimum) + " bytes ABI 1.0 defines");
}

// The launch of a timed launch, whichever minor the host speaks: a 1.1 host
// points launch_args at the whole launch; a 1.0 host filled only the
// embedded copy. Checks the nested struct_size either way, and that at
// least one run is asked for (plugin.h: repeats == 0 is INVALID_ARGUMENT).
inline kiln_launch_args timed_launch_of(const kiln_timed_launch_args& timed) {
  if (timed.repeats == 0) fail(KILN_STATUS_INVALID_ARGUMENT, "launch_timed: repeats must be >= 1");
  kiln_launch_args launch{};
  const bool has_pointer = timed.struct_size >= KILN_STRUCT_SIZE(kiln_timed_launch_args, launch_args) &&
                           timed.launch_args != nullptr;
  if (has_pointer) {
    check_nested_size("launch_timed: launch_args", timed.launch_args->struct_size, KILN_LAUNCH_ARGS_STRUCT_SIZE);
    std::memcpy(static_cast<void*>(&launch), timed.launch_args,
                std::min(timed.launch_args->struct_size, sizeof(launch)));
  } else {
    check_nested_size("launch_timed: launch", timed.launch.struct_size, sizeof(kiln_launch_args_1_0));
    static_assert(sizeof(kiln_launch_args_1_0) <= sizeof(kiln_launch_args));
    std::memcpy(static_cast<void*>(&launch), &timed.launch, sizeof(kiln_launch_args_1_0));
  }
  launch.struct_size = sizeof(launch);
  return launch;
}

// The frozen 1.0 form of a launch, for a host filling
// kiln_timed_launch_args.launch beside launch_args.
inline kiln_launch_args_1_0 launch_args_1_0(const kiln_launch_args& launch) {
  kiln_launch_args_1_0 frozen{};
  std::memcpy(static_cast<void*>(&frozen), &launch, sizeof(frozen));
  frozen.struct_size = sizeof(frozen);
  return frozen;
}

// Writes an argument struct back, only the bytes that fit in the caller's
// struct_size (out-fields of a newer minor are not written for an older host).
template <class T>
void write_args(T* raw, const T& value) {
  const std::size_t n = std::min(raw->struct_size, sizeof(T));
  std::memcpy(reinterpret_cast<char*>(raw) + sizeof(std::size_t),
              reinterpret_cast<const char*>(&value) + sizeof(std::size_t), n - sizeof(std::size_t));
}

// Copies a string into a fixed char array, truncating, always NUL-terminated.
template <std::size_t N>
void copy_string(char (&dst)[N], std::string_view src) {
  const std::size_t n = std::min(src.size(), N - 1);
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

// Plugin options: the config's "options" object. Typed getters throw
// PluginError(INVALID_ARGUMENT) naming the key when a value has the wrong
// type; keys never read are reported by unknown_keys() so a plugin can warn.
class Options {
 public:
  // Parses JSON text (comments and trailing commas allowed). Empty text = {}.
  static Options parse(std::string_view json_text);

  Options();
  ~Options();
  Options(Options&&) noexcept;
  Options& operator=(Options&&) noexcept;

  bool has(std::string_view key) const;
  bool get_bool(std::string_view key, bool fallback) const;
  std::int64_t get_int(std::string_view key, std::int64_t fallback) const;
  double get_double(std::string_view key, double fallback) const;
  std::string get_string(std::string_view key, std::string_view fallback) const;
  std::vector<std::string> get_string_list(std::string_view key) const;
  std::vector<std::int64_t> get_int_list(std::string_view key) const;
  // An array whose items are each an integer or a string (in order);
  // `item` says what one item must be, for the message of a wrong one
  // ("option 'key[i]' must be <item>, got ...").
  std::vector<std::variant<std::int64_t, std::string>> get_int_or_string_list(std::string_view key,
                                                                              std::string_view item) const;
  // A nested object, as options of its own.
  Options get_object(std::string_view key) const;
  // An array of objects, each as options of its own (named "key[i]." in
  // messages and unknown keys).
  std::vector<Options> get_object_list(std::string_view key) const;

  // Keys present but never asked for (in document order).
  std::vector<std::string> unknown_keys() const;
  // Logs a warning through the host for each unknown key.
  void warn_unknown_keys(std::string_view plugin_name) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::sdk
