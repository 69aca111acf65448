// vulkan.hpp - the plugin's internal header: what init builds and every ABI
// function reads (the instance, the discovered devices, the opened ones), the
// casts between opaque ABI handles and the plugin's objects, and the parts of
// the table each role file owns (device.cpp, pool.cpp, compile.cpp,
// launch.cpp; plugin.cpp puts them together).
#pragma once

#include "logical_device.hpp"
#include "memory.hpp"

#include <kiln/plugin.h>
#include <kiln/sdk/plugin_table.hpp>

#include <memory>
#include <mutex>
#include <vector>

namespace kiln::vulkan {

struct PluginState {
  std::unique_ptr<Instance> instance;
  std::vector<PhysicalDevice> devices;
  std::vector<std::unique_ptr<Device>> opened;  // per device index; null until opened
  std::mutex open_mutex;
  std::int32_t wait_spin_us = -1;  // option "wait_spin_us"; -1: by device kind
};

// The state between init and shutdown. Throws PluginError(INVALID_ARGUMENT)
// when called outside that window.
PluginState& plugin_state();
bool plugin_ready();  // between init and shutdown

// kiln_event: one submission on one device.
struct Event {
  Device* device;
  std::shared_ptr<Submission> submission;
};

// Checked handle casts: NULL handles throw PluginError(INVALID_ARGUMENT)
// naming `what` (e.g. "copy_to_device: device").
Device& to_device(kiln_device* handle, const char* what);
Allocation& to_buffer(kiln_buffer* handle, const char* what);

inline kiln_device* to_handle(Device* device) { return reinterpret_cast<kiln_device*>(device); }
inline kiln_buffer* to_handle(Allocation* buffer) { return reinterpret_cast<kiln_buffer*>(buffer); }
inline kiln_event* to_handle(Event* event) { return reinterpret_cast<kiln_event*>(event); }
inline Event* to_event(kiln_event* event) { return reinterpret_cast<Event*>(event); }

// Hands a submitted submission to the caller as an event.
inline kiln_event* make_event(Device& device, std::shared_ptr<Submission> submission) {
  return to_handle(new Event{&device, std::move(submission)});
}

extern const sdk::DeviceFunctions kDeviceFunctions;    // device.cpp
extern const sdk::PoolFunctions kPoolFunctions;        // pool.cpp
extern const sdk::CompileFunctions kCompileFunctions;  // compile.cpp
extern const sdk::LaunchFunctions kLaunchFunctions;    // launch.cpp

}  // namespace kiln::vulkan
