// The CUDA plugin's objects behind the ABI's opaque handles, and the table
// functions each source file implements:
//   plugin.cpp  table, init/shutdown, options, cache key
//   device.cpp  discovery (cuDeviceGetAttribute), open/close
//   pool.cpp    buffers, copies through pinned staging, events
//   compile.cpp CUDA C++ from the SDK emitter -> NVRTC -> module
//   launch.cpp  launch, timed launch (cuEvent pairs)
#pragma once

#include "driver_api.hpp"
#include "nvrtc_compiler.hpp"
#include "staging.hpp"

#include <kiln/plugin.h>
#include <kiln/sdk/device_filter.hpp>
#include <kiln/sdk/launch_args.hpp>
#include <kiln/sdk/plugin_table.hpp>

#include <cstdint>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::cuda {

inline constexpr const char* kPluginVersion = "1.0.0";

// Options from config.json's "cuda" section (see plugin.cpp).
struct Settings {
  std::string driver_library = "libcuda.so.1";
  std::string nvrtc_library;          // empty: the usual places
  sdk::DeviceFilter devices;          // "devices" (docs/config.md); default: all
  NvrtcOptions nvrtc;
};

// One CUDA device found at init; kiln_device* points at it once opened.
struct Device {
  CUdevice handle = 0;
  int ordinal = 0;
  int cc_major = 0;
  int cc_minor = 0;
  kiln_device_info info{};
  std::string cache_key;

  // Opened state, guarded by mutex (device_open may race with itself).
  std::mutex mutex;
  bool open = false;
  CUcontext context = nullptr;  // the device's primary context (shared with other CUDA users)
  CUstream stream = nullptr;    // the device's one in-order queue
  std::unique_ptr<StagingPool> staging;
  CUdeviceptr flush_buffer = 0;  // lazily made for timed launches that flush the L2
  std::size_t flush_bytes = 0;
  // Set when a timed run passed its timeout. CUDA can stop a running kernel
  // only by destroying the context, which is the primary context other CUDA
  // users in this process share, so the kernel is left to run: every later
  // call fails DEVICE_LOST, and nothing it may use (memory, module, stream)
  // is freed or synchronized (that would wait for it), only leaked.
  std::atomic<bool> lost{false};
};

struct Buffer {
  Device* device;
  CUdeviceptr ptr;
  std::uint64_t bytes;
};

// A kiln_event: the completion of one submitted operation. Shared with the
// staging pool, which keeps the pinned blocks of a copy until it completes
// even when the host releases the event earlier.
struct Event {
  SharedEvent done;
};

struct Program {
  explicit Program(Device* d) : device(d) {}
  Device* device;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::string source;
  std::string target;  // "sm_90" or "compute_90"
  std::vector<sdk::ParamSlot> params;
  unsigned dynamic_shared_bytes = 0;  // passed to every launch
};

struct PluginState {
  Settings settings;
  NvrtcApi nvrtc;
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

// Hands a recorded completion to the host as a kiln_event.
kiln_event* wrap_event(SharedEvent done);

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

}  // namespace kiln::cuda
