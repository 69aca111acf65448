// The OpenCL plugin's objects behind the ABI's opaque handles, and the table
// functions each source file implements:
//   plugin.cpp  table, init/shutdown, options, cache key
//   device.cpp  discovery, kiln_device_info, open/close
//   pool.cpp    buffers, copies, events
//   compile.cpp OpenCL C from the SDK emitter -> clBuildProgram
//   launch.cpp  launch, timed launch
#pragma once

#include "cl_api.hpp"

#include <kiln/plugin.h>
#include <kiln/sdk/device_filter.hpp>
#include <kiln/sdk/launch_args.hpp>
#include <kiln/sdk/plugin_table.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln::opencl {

inline constexpr const char* kPluginVersion = "1.0.0";

// Options from config.json's "opencl" section.
struct Settings {
  std::string library = "libOpenCL.so.1";  // "library": the ICD loader to dlopen
  std::vector<std::string> platforms;      // "platforms": keep platforms whose name or vendor contains one
  sdk::DeviceFilter devices;               // "devices" (docs/config.md); default: all
  std::string build_options;               // "build_options": appended to clBuildProgram's options
  std::optional<std::string> pocl_cache_dir;  // "pocl_cache_dir": POCL_CACHE_DIR when unset ("" : leave it)
};

// One device found at init; kiln_device* points at it once opened.
struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string platform_name;
  kiln_device_info info{};
  bool nvidia = false;
  bool pocl = false;      // PoCL builds a kernel at its first launch (launch.cpp, wait_for_start)
  bool has_fp16 = false;  // cl_khr_fp16: half arithmetic (storage works without it)
  bool has_fp64 = false;
  std::uint64_t last_level_cache_bytes = 0;  // for KILN_TIMED_FLUSH_CACHE
  std::string cache_key;

  // Opened state, guarded by mutex (device_open may race with itself).
  std::mutex mutex;
  bool open = false;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;  // in-order, profiling enabled
  cl_mem flush_buffer = nullptr;     // lazily made for timed launches that flush caches
  std::atomic<std::uint64_t> allocated_bytes{0};
  // Set when a timed run passed its timeout: OpenCL cannot cancel a running
  // kernel, so it keeps the device; every later call fails DEVICE_LOST and
  // close skips the clFinish that would wait for it.
  std::atomic<bool> lost{false};
};

struct Buffer {
  Device* device;
  cl_mem mem;
  std::uint64_t bytes;
};

// An enqueued command. The cl_event is released with the kiln_event; the
// command itself runs on regardless.
struct Event {
  cl_event event;
};

struct Program {
  explicit Program(Device* d) : device(d) {}
  Device* device;
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
  std::string source;
  std::vector<sdk::ParamSlot> params;
};

struct PluginState {
  Settings settings;
  std::vector<std::unique_ptr<Device>> devices;
};

// Valid between a successful init and shutdown.
PluginState& state();
bool state_ready();

inline Device* as_device(kiln_device* d) { return reinterpret_cast<Device*>(d); }
inline Buffer* as_buffer(kiln_buffer* b) { return reinterpret_cast<Buffer*>(b); }
inline Event* as_event(kiln_event* e) { return reinterpret_cast<Event*>(e); }
inline Program* as_program(kiln_program* p) { return reinterpret_cast<Program*>(p); }

// Throws INVALID_ARGUMENT unless `device` is an open device of this plugin.
Device& checked_device(kiln_device* device, const char* function);

// Wraps an enqueued command's event for the host (takes ownership).
kiln_event* wrap_event(cl_event event);

// Waits for an enqueued command; throws LAUNCH_FAILED naming `what` and the
// command's error code when it failed.
// The command's execution status (CL_COMPLETE, a positive stage, or its error).
cl_int command_status(cl_event event);
void wait_for_command(cl_event event, const char* what);

// device.cpp
void discover_devices(PluginState& state);
void close_device(Device& device);
extern const sdk::DeviceFunctions kDeviceFunctions;

// pool.cpp
extern const sdk::PoolFunctions kPoolFunctions;

// compile.cpp
extern const sdk::CompileFunctions kCompileFunctions;

// launch.cpp
extern const sdk::LaunchFunctions kLaunchFunctions;

}  // namespace kiln::opencl
