// The dummy plugin: a configurable simulated device. Its DeviceInfo comes
// entirely from the plugin options; it runs kernels on the SDK's reference
// interpreter over host memory, and its timed launch returns a simulated time
// from a documented model of the kernel's work (docs/dummy.md). It lets the
// autotuner and GPU-shaped optimizations be tested on a machine with no GPU.
#pragma once

#include <kiln/plugin.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/sdk/interpreter.hpp"
#include "kiln/sdk/plugin_support.hpp"
#include "kiln/sdk/plugin_table.hpp"

namespace kiln::dummy {

inline constexpr const char* kPluginName = "dummy";
inline constexpr const char* kPluginVersion = "0.1.0";

// Parameters of the timing model that DeviceInfo has no field for.
struct ModelParams {
  double launch_overhead_ns = 4000;
  std::uint32_t max_threads_per_unit = 2048;
  std::uint32_t max_groups_per_unit = 32;
  std::uint64_t local_memory_per_unit = 0;    // 0: twice local_memory_bytes
  std::uint64_t register_file_bytes = 256 * 1024;
  std::uint32_t latency_warps = 8;            // resident warps per unit that hide latency
  std::uint32_t barrier_cycles = 32;
  std::uint32_t sector_bytes = 32;            // global memory transaction size
  double f64_cost = 2;                        // issue slots of an f64 op (f32: 1)
};

struct DeviceConfig {
  kiln_device_info info{};  // reported as is
  ModelParams model;
  std::uint64_t options_hash = 0;  // of everything above: part of the cache key
};

struct Device {
  DeviceConfig config;
  std::string cache_key;
  std::atomic<std::uint64_t> allocated{0};  // bytes of live buffers
};

struct PluginState {
  std::vector<std::unique_ptr<Device>> devices;
  double noise = 0;            // relative standard deviation of simulated times
  std::uint64_t seed = 0;
  std::uint64_t max_ops = 0;   // interpreter op budget per launch
};

// Set by init, cleared by shutdown; throws INVALID_ARGUMENT outside.
PluginState& state();

// The device behind a handle; throws INVALID_ARGUMENT for NULL or unknown ones.
Device& device_of(kiln_device* handle);

struct Program {
  Device* device;
  sdk::InterpretedProgram interpreted;
  std::string listing;
  std::uint64_t kernel_hash;
  std::atomic<std::uint64_t> simulated_runs{0};  // numbers the noise samples
};

// FNV-1a over bytes, chained from `h`.
std::uint64_t hash_bytes(const void* data, std::size_t size, std::uint64_t h = 14695981039346656037ull);

// ------------------------------------------------- options (device.cpp) --

// Parses the plugin options (init); throws PluginError naming the key.
std::unique_ptr<PluginState> parse_options(const sdk::Options& options);

// ------------------------------------- the table's parts, by role file --

extern const sdk::DeviceFunctions kDeviceFunctions;    // device.cpp
extern const sdk::PoolFunctions kPoolFunctions;        // pool.cpp
extern const sdk::CompileFunctions kCompileFunctions;  // compile.cpp
extern const sdk::LaunchFunctions kLaunchFunctions;    // launch.cpp

}  // namespace kiln::dummy
