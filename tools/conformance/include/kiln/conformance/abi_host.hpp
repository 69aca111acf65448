// kiln/conformance/abi_host.hpp - a minimal host for testing a plugin at the ABI
// level, without libkiln: dlopen a plugin, query it, init it with a host
// table, and call its functions through wrappers that throw on error.
//
// The real loader lives in core/runtime; this one serves the plugin unit
// tests and `kiln conformance`, which must judge a plugin by the ABI alone
// (no config entry, no loader policy in between).
#pragma once

#include <kiln/plugin.h>
#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::conformance {

struct AbiError : std::runtime_error {
  AbiError(kiln_status s, const std::string& m) : std::runtime_error(m), status(s) {}
  kiln_status status;
};

// Host-side error object: the struct behind kiln_error*.
struct HostError {
  kiln_status status;
  std::string message;
};

inline kiln_error* test_error_create(kiln_status status, const char* message, std::size_t len) {
  return reinterpret_cast<kiln_error*>(new HostError{status, std::string(message, len)});
}

// The plugins' log lines, in order. Read them while no plugin call runs:
// test_log appends under test_log_mutex(), the readers take no lock.
inline std::vector<std::string>& test_log_lines() {
  static std::vector<std::string> lines;
  return lines;
}

// How many of the plugins' log lines hold `fragment` (same rule as test_log_lines).
inline std::size_t test_log_count(std::string_view fragment) {
  std::size_t count = 0;
  for (const std::string& line : test_log_lines()) count += line.find(fragment) != std::string::npos ? 1 : 0;
  return count;
}

inline std::mutex& test_log_mutex() {
  static std::mutex mutex;
  return mutex;
}

// The host's log (plugin.h: [any thread]): plugins log from their own threads
// and from the callers' (the C plugin's concurrent compiles each log a line),
// so the append is serialized.
inline void test_log(void*, kiln_log_level, const char* message, std::size_t len) {
  const std::lock_guard<std::mutex> lock(test_log_mutex());
  test_log_lines().emplace_back(message, len);
}

// Throws AbiError if `error` is not NULL (and frees it).
inline void check(kiln_error* error) {
  if (error == nullptr) return;
  HostError* e = reinterpret_cast<HostError*>(error);
  AbiError ex(e->status, e->message);
  delete e;
  throw ex;
}

// dlopens `path` and returns the plugin's table (static, for the life of the
// process: plugins are never dlclosed, OpenMP objects crash on unload).
// Throws std::runtime_error when it is not a library or not a plugin.
inline const kiln_plugin_api* query_plugin(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto query = reinterpret_cast<kiln_plugin_query_fn>(dlsym(handle, KILN_PLUGIN_QUERY_SYMBOL));
  if (query == nullptr) throw std::runtime_error("no " KILN_PLUGIN_QUERY_SYMBOL " in " + path + ": not a kiln plugin");
  const kiln_plugin_api* api = query(KILN_ABI_MAJOR, KILN_ABI_MINOR);
  if (api == nullptr) throw std::runtime_error(KILN_PLUGIN_QUERY_SYMBOL " returned NULL for ABI " +
                                               std::to_string(KILN_ABI_MAJOR) + "." + std::to_string(KILN_ABI_MINOR));
  return api;
}

class AbiPlugin {
 public:
  // Loads `path` and inits it with `options_json`. Throws on any failure.
  explicit AbiPlugin(const std::string& path, const std::string& options_json = "{}")
      : AbiPlugin(query_plugin(path), options_json) {}

  // Inits the table query_plugin() returned. Throws AbiError when init fails.
  AbiPlugin(const kiln_plugin_api* api, const std::string& options_json) : api_(api) {
    host_.struct_size = KILN_HOST_API_STRUCT_SIZE;
    host_.abi_major = KILN_ABI_MAJOR;
    host_.abi_minor = KILN_ABI_MINOR;
    host_.host_version = "test";
    host_.error_create = test_error_create;
    host_.log = test_log;
    kiln_init_args init{};
    init.struct_size = KILN_INIT_ARGS_STRUCT_SIZE;
    init.host = &host_;
    init.options_json = options_json.c_str();
    init.options_json_len = options_json.size();
    check(api_->init(&init));
  }
  ~AbiPlugin() {
    if (api_ != nullptr && api_->shutdown != nullptr) api_->shutdown();
    // Never dlclose: plugins are never unloaded (OpenMP objects crash on unload).
  }
  AbiPlugin(const AbiPlugin&) = delete;
  AbiPlugin& operator=(const AbiPlugin&) = delete;

  const kiln_plugin_api& api() const { return *api_; }

  std::uint32_t device_count() const {
    kiln_device_count_args a{};
    a.struct_size = KILN_DEVICE_COUNT_ARGS_STRUCT_SIZE;
    check(api_->device_count(&a));
    return a.count;
  }
  kiln_device_info info(std::uint32_t index) const {
    kiln_device_info info{};
    info.struct_size = KILN_DEVICE_INFO_STRUCT_SIZE;
    kiln_device_info_args a{};
    a.struct_size = KILN_DEVICE_INFO_ARGS_STRUCT_SIZE;
    a.index = index;
    a.info = &info;
    check(api_->device_info(&a));
    sdk::normalize_capabilities(info);  // a 1.0 plugin states capabilities per dtype only
    return info;
  }
  kiln_device* open(std::uint32_t index) const {
    kiln_device_open_args a{};
    a.struct_size = KILN_DEVICE_OPEN_ARGS_STRUCT_SIZE;
    a.index = index;
    check(api_->device_open(&a));
    return a.device;
  }
  kiln_buffer* alloc(kiln_device* d, std::uint64_t bytes) const {
    kiln_buffer_alloc_args a{};
    a.struct_size = KILN_BUFFER_ALLOC_ARGS_STRUCT_SIZE;
    a.device = d;
    a.bytes = bytes;
    check(api_->buffer_alloc(&a));
    return a.buffer;
  }
  // The three copies, each waited for; `host` is the host side of the first
  // two, `src` the source buffer of the third.
  void write(kiln_device* d, kiln_buffer* b, const void* src, std::uint64_t bytes) const {
    kiln_copy_args a = copy_args(d, b, 0, bytes);
    a.host = const_cast<void*>(src);
    run_copy(api_->copy_to_device, a);
  }
  void read(kiln_device* d, kiln_buffer* b, void* dst, std::uint64_t bytes) const {
    kiln_copy_args a = copy_args(d, b, 0, bytes);
    a.host = dst;
    run_copy(api_->copy_to_host, a);
  }
  void copy(kiln_device* d, kiln_buffer* dst, std::uint64_t dst_offset, kiln_buffer* src, std::uint64_t src_offset,
            std::uint64_t bytes) const {
    kiln_copy_args a = copy_args(d, dst, dst_offset, bytes);
    a.src_buffer = src;
    a.src_offset = src_offset;
    run_copy(api_->copy_device_to_device, a);
  }
  void wait(kiln_event* e) const {
    if (e == nullptr) return;
    kiln_error* err = api_->event_wait(e);
    api_->event_release(e);
    check(err);
  }
  void* host_pointer(kiln_device* d, kiln_buffer* b) const {
    kiln_buffer_host_pointer_args a{};
    a.struct_size = KILN_BUFFER_HOST_POINTER_ARGS_STRUCT_SIZE;
    a.device = d;
    a.buffer = b;
    check(api_->buffer_host_pointer(&a));
    return a.pointer;
  }
  kiln_program* compile(kiln_device* d, const std::vector<kiln_op>& ops, std::int64_t* failed_op = nullptr) const {
    kiln_kernel k{};
    k.struct_size = KILN_KERNEL_STRUCT_SIZE;
    k.ops = ops.data();
    k.n_ops = ops.size();
    k.op_size = sizeof(kiln_op);
    kiln_compile_args a{};
    a.struct_size = KILN_COMPILE_ARGS_STRUCT_SIZE;
    a.device = d;
    a.kernel = &k;
    a.failed_op = -1;
    kiln_error* err = api_->compile(&a);
    if (failed_op != nullptr) *failed_op = a.failed_op;
    check(err);
    return a.program;
  }
  std::string source(kiln_program* p) const {
    kiln_program_source_args a{};
    a.struct_size = KILN_PROGRAM_SOURCE_ARGS_STRUCT_SIZE;
    a.program = p;
    check(api_->program_source(&a));
    return std::string(a.text, a.text_len);
  }

 private:
  static kiln_copy_args copy_args(kiln_device* d, kiln_buffer* b, std::uint64_t offset, std::uint64_t bytes) {
    kiln_copy_args a{};
    a.struct_size = KILN_COPY_ARGS_STRUCT_SIZE;
    a.device = d;
    a.device_buffer = b;
    a.device_offset = offset;
    a.bytes = bytes;
    return a;
  }
  void run_copy(kiln_error* (*function)(kiln_copy_args*), kiln_copy_args& a) const {
    check(function(&a));
    wait(a.event);
  }
  const kiln_plugin_api* api_ = nullptr;
  kiln_host_api host_{};
};

}  // namespace kiln::conformance
