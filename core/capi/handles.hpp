// core/capi/handles.hpp - what the C API's opaque handles (kiln/kiln.h) are
// on the C++ side, and the helpers every capi/*.cpp file uses to keep C++
// errors and exceptions on this side of the boundary.
#pragma once

#include <kiln/kiln.h>

#include <kiln/ir/builder.hpp>
#include <kiln/ir/kernel.hpp>
#include <kiln/result.hpp>
#include <kiln/runtime/runtime.hpp>
#include <kiln/tune/tuning_db.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

struct kiln_status_t {
  kiln_code_t code = KILN_CODE_INTERNAL;
  std::string message;
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  std::int64_t op = -1;
};

// A plugin entry: the runtime's record of it, copied when the runtime opens
// (the runtime's records do not change afterwards).
struct kiln_plugin_t {
  kiln::PluginRecord record;
};

struct kiln_runtime_t {
  kiln::Runtime runtime;
  std::shared_ptr<const kiln::Config> config;  // shared with the devices opened from it
  std::vector<std::string> warnings;
  std::vector<kiln_plugin_t> plugins;
  std::vector<kiln::DeviceInfo> devices;
};

struct kiln_device_t {
  kiln::Device device;
  std::shared_ptr<const kiln::Config> config;  // tuning database and autotune settings
};

struct kiln_buffer_t {
  kiln::Buffer buffer;
};

struct kiln_kernel_t {
  kiln::ir::Kernel kernel;
};

struct kiln_builder_t {
  kiln::ir::Builder builder;
};

struct kiln_program_t {
  kiln::Device device;
  kiln::Program program;
  std::string sequence;  // "" = untuned
  bool from_database = false;
  std::uint64_t tuned_ns = 0;
  // Filled by the first successful kiln_program_source, never changed after.
  std::mutex source_mutex;
  bool source_loaded = false;
  std::string language, source;
};

struct kiln_tuning_db_t {
  kiln::tune::TuningDb db;
  std::string path;
  std::vector<kiln::tune::TuningEntry> listed;  // the last kiln_tuning_db_list
};

namespace kiln::capi {

// A status object for `error` (nullptr never: allocation failure gives a
// static out-of-memory status, which kiln_status_free knows not to delete).
kiln_status_t* make_status(const Error& error);
kiln_status_t* make_status(kiln_code_t code, std::string message);
kiln_status_t* out_of_memory_status();

// `nullptr` for a success, else the error as a status.
inline kiln_status_t* status_of(const Result<void>& result) {
  return result.ok() ? nullptr : make_status(result.error());
}

// "kiln_buffer_write: buffer is NULL"
kiln_status_t* null_argument(const char* function, const char* argument);

// Runs `body` (returning kiln_status_t*) and turns every exception into a
// status: nothing crosses the C boundary.
template <class Body>
kiln_status_t* guard(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return out_of_memory_status();
  } catch (const ErrorException& e) {
    return make_status(e.error());
  } catch (const std::exception& e) {
    return make_status(KILN_CODE_INTERNAL, std::string(function) + ": " + e.what());
  } catch (...) {
    return make_status(KILN_CODE_INTERNAL, std::string(function) + ": unknown exception");
  }
}

// A string the caller frees with kiln_string_free.
char* copy_string(const std::string& text);

// Checks a caller's out-struct: non-NULL and at least `needed` bytes.
kiln_status_t* check_struct(const char* function, const void* out, std::size_t struct_size, std::size_t needed);

}  // namespace kiln::capi
