// kiln/runtime/event.hpp - completion of one submitted copy or launch.
#pragma once

#include <kiln/result.hpp>

#include <memory>

struct kiln_event;

namespace kiln {

namespace detail {
class DeviceState;
struct LaunchAccess;
}

// An Event tracks work submitted to a device's in-order queue. Destroying
// an Event waits for the work: host memory handed to an async copy must stay
// valid (and, for writes, unchanged) until the Event is waited or destroyed.
// An Event made for work that completed at once is already complete.
// Threads: one Event is waited on or queried by one thread at a time
// (waiting releases it); different Events, of one device or several, may be
// waited on concurrently. An Event may move between threads.
class Event {
 public:
  Event() = default;  // complete
  Event(std::shared_ptr<detail::DeviceState> device, kiln_event* event);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Blocks until the work completed; returns its error if it failed. After
  // the first call the Event is complete and wait() returns success.
  Result<void> wait();
  bool complete() const { return event_ == nullptr; }
  // Whether the work has completed, without blocking: true once it has (its
  // error, if it failed, is returned instead and the Event is complete).
  // A plugin without event_query (ABI 1.0, or NULL) gives NotImplemented.
  Result<bool> ready();

 private:
  void release();
  std::shared_ptr<detail::DeviceState> device_;
  kiln_event* event_ = nullptr;
};

}  // namespace kiln
