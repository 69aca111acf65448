// Internal: one open device, shared by every handle made from it (Device,
// Buffer, Program, Event hold a shared_ptr), so it stays open while any of
// them lives. Per-device ABI calls are serialised with `queue_mutex`, as the
// ABI's [per device] rule requires.
#pragma once

#include "kiln/runtime/device_info.hpp"
#include "loaded_library.hpp"

#include <kiln/plugin.h>

#include <mutex>
#include <string>

namespace kiln::detail {

class DeviceState {
 public:
  DeviceState(LoadedLibrary& library, std::string plugin, DeviceInfo info, kiln_device* handle)
      : library_(library), plugin_(std::move(plugin)), info_(std::move(info)), handle_(handle) {}
  ~DeviceState();
  DeviceState(const DeviceState&) = delete;
  DeviceState& operator=(const DeviceState&) = delete;

  LoadedLibrary& library() const { return library_; }
  const kiln_plugin_api& api() const { return library_.api(); }
  const std::string& plugin() const { return plugin_; }
  const DeviceInfo& info() const { return info_; }
  kiln_device* handle() const { return handle_; }
  // False once the plugin shut down (process exit): make no more calls.
  bool alive() const { return !library_.shut_down(); }

  // Converts a plugin error (taking ownership) into an Error naming this
  // device's plugin and the ABI function.
  Error error(kiln_error* error, std::string_view function, std::int64_t op = -1) const;
  // An error for a NULL (not implemented) function pointer.
  Error missing(std::string_view function) const;

  // Serialises [per device] calls.
  std::mutex& queue_mutex() { return queue_mutex_; }
  // Set (under queue_mutex) when a call returned an event: work may still be
  // running, so freeing a buffer or program first waits for the queue.
  void mark_pending() { pending_ = true; }
  // Waits for the queue if work may be pending. Caller holds queue_mutex.
  Result<void> drain_locked();

 private:
  LoadedLibrary& library_;
  std::string plugin_;
  DeviceInfo info_;
  kiln_device* handle_;
  std::mutex queue_mutex_;
  bool pending_ = false;
};

}  // namespace kiln::detail
