// kiln/sdk/plugin_table.hpp - the kiln_plugin_api table, assembled from the
// parts each role file of a plugin owns (docs/plugin-guide.md, "Plugin
// shape"), and the exported query that hands it to the host.
//
// Each role file ends with its part of the table:
//   device.cpp   const sdk::DeviceFunctions kDeviceFunctions = {...};
//   pool.cpp     const sdk::PoolFunctions kPoolFunctions = {...};
//                (host-memory plugins: sdk::host_memory_pool(), no pool.cpp)
//   compile.cpp  const sdk::CompileFunctions kCompileFunctions = {...};
//   launch.cpp   const sdk::LaunchFunctions kLaunchFunctions = {...};
// and plugin.cpp puts them together:
//   kiln_plugin_api make_table() {
//     return sdk::plugin_table({.name = "c", ...}, {init, shutdown, cache_key}, kDeviceFunctions,
//                              sdk::host_memory_pool(), kCompileFunctions, kLaunchFunctions);
//   }
//   KILN_SDK_PLUGIN_QUERY(kiln::cplugin::make_table)   // at global scope
//
// The 1.1 functions that report failure (shutdown2, device_close2,
// buffer_free2) and the extension chain stay NULL: the host then uses the 1.0
// forms. A plugin that needs them sets them on the returned table.
#pragma once

#include "kiln/sdk/host_memory.hpp"

#include <kiln/plugin.h>

#include <cstdint>

namespace kiln::sdk {

// Who the plugin is (kiln_plugin_api.name/version/description).
struct PluginIdentity {
  const char* name;
  const char* version;
  const char* description;
};

// plugin.cpp: process-wide lifetime and the compiler identity.
struct LifecycleFunctions {
  decltype(kiln_plugin_api::init) init;
  decltype(kiln_plugin_api::shutdown) shutdown;
  decltype(kiln_plugin_api::cache_key) cache_key;
};

// device.cpp: enumeration, open/close, synchronize.
struct DeviceFunctions {
  decltype(kiln_plugin_api::device_count) device_count;
  decltype(kiln_plugin_api::device_info) device_info;
  decltype(kiln_plugin_api::device_open) device_open;
  decltype(kiln_plugin_api::device_close) device_close;
  decltype(kiln_plugin_api::device_synchronize) device_synchronize;
};

// pool.cpp: memory, copies, events.
struct PoolFunctions {
  decltype(kiln_plugin_api::memory_info) memory_info;
  decltype(kiln_plugin_api::buffer_alloc) buffer_alloc;
  decltype(kiln_plugin_api::buffer_free) buffer_free;
  decltype(kiln_plugin_api::buffer_host_pointer) buffer_host_pointer;  // NULL: device memory is not host memory
  decltype(kiln_plugin_api::copy_to_device) copy_to_device;
  decltype(kiln_plugin_api::copy_to_host) copy_to_host;
  decltype(kiln_plugin_api::copy_device_to_device) copy_device_to_device;
  decltype(kiln_plugin_api::event_wait) event_wait;
  decltype(kiln_plugin_api::event_release) event_release;
  decltype(kiln_plugin_api::event_query) event_query;  // NULL: waiting is the only way to learn of completion
};

// compile.cpp: programs.
struct CompileFunctions {
  decltype(kiln_plugin_api::compile) compile;
  decltype(kiln_plugin_api::program_source) program_source;
  decltype(kiln_plugin_api::program_release) program_release;
};

// launch.cpp: running programs.
struct LaunchFunctions {
  decltype(kiln_plugin_api::launch) launch;
  decltype(kiln_plugin_api::launch_timed) launch_timed;
};

// The SDK's host-memory pool (host_memory.hpp), whole.
constexpr PoolFunctions host_memory_pool() {
  return {
      .memory_info = host_memory_info,
      .buffer_alloc = host_buffer_alloc,
      .buffer_free = host_buffer_free,
      .buffer_host_pointer = host_buffer_host_pointer,
      .copy_to_device = host_copy_to_device,
      .copy_to_host = host_copy_to_host,
      .copy_device_to_device = host_copy_device_to_device,
      .event_wait = host_event_wait,
      .event_release = host_event_release,
      .event_query = host_event_query,
  };
}

constexpr kiln_plugin_api plugin_table(const PluginIdentity& who, const LifecycleFunctions& life,
                                       const DeviceFunctions& devices, const PoolFunctions& pool,
                                       const CompileFunctions& programs, const LaunchFunctions& launches) {
  return {
      .struct_size = KILN_PLUGIN_API_STRUCT_SIZE,
      .abi_major = KILN_ABI_MAJOR,
      .abi_minor = KILN_ABI_MINOR,
      .name = who.name,
      .version = who.version,
      .description = who.description,
      .init = life.init,
      .shutdown = life.shutdown,
      .device_count = devices.device_count,
      .device_info = devices.device_info,
      .device_open = devices.device_open,
      .device_close = devices.device_close,
      .device_synchronize = devices.device_synchronize,
      .memory_info = pool.memory_info,
      .buffer_alloc = pool.buffer_alloc,
      .buffer_free = pool.buffer_free,
      .buffer_host_pointer = pool.buffer_host_pointer,
      .copy_to_device = pool.copy_to_device,
      .copy_to_host = pool.copy_to_host,
      .copy_device_to_device = pool.copy_device_to_device,
      .event_wait = pool.event_wait,
      .event_release = pool.event_release,
      .compile = programs.compile,
      .program_source = programs.program_source,
      .program_release = programs.program_release,
      .launch = launches.launch,
      .launch_timed = launches.launch_timed,
      .cache_key = life.cache_key,
      .extensions = nullptr,
      .shutdown2 = nullptr,
      .device_close2 = nullptr,
      .buffer_free2 = nullptr,
      .event_query = pool.event_query,
  };
}

// The table for a host of `host_major`, NULL for another major (plugin.h).
inline const kiln_plugin_api* answer_query(const kiln_plugin_api& table, std::uint32_t host_major) {
  return host_major == KILN_ABI_MAJOR ? &table : nullptr;
}

}  // namespace kiln::sdk

// Defines the one exported symbol, kiln_plugin_query, answering with the
// table `make_table()` returns. The table is made on the first query (a
// function-local static), so it may read the role files' parts whatever
// order the shared object initializes them in. Use at global scope.
#define KILN_SDK_PLUGIN_QUERY(make_table)                                                              \
  extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(std::uint32_t host_major,    \
                                                                         std::uint32_t) {             \
    static const kiln_plugin_api table = make_table();                                                \
    return ::kiln::sdk::answer_query(table, host_major);                                              \
  }
