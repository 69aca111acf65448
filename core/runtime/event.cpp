#include "kiln/runtime/event.hpp"

#include "device_state.hpp"

#include <utility>

namespace kiln {

Event::Event(std::shared_ptr<detail::DeviceState> device, kiln_event* event)
    : device_(std::move(device)), event_(event) {}

Event::~Event() {
  // Waiting keeps the promise in event.hpp: the host memory of a copy may be
  // freed once its Event is gone.
  (void)wait();
}

Event::Event(Event&& other) noexcept
    : device_(std::move(other.device_)), event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    (void)wait();
    device_ = std::move(other.device_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

Result<void> Event::wait() {
  if (event_ == nullptr) return {};
  if (!device_->alive()) {
    event_ = nullptr;
    return {};
  }
  const kiln_plugin_api& api = device_->api();
  kiln_error* err = api.event_wait != nullptr ? api.event_wait(event_) : nullptr;
  release();
  if (api.event_wait == nullptr) return device_->missing("event_wait");
  if (err != nullptr) return device_->error(err, "event_wait");
  return {};
}

Result<bool> Event::ready() {
  if (event_ == nullptr) return true;
  if (!device_->alive()) {
    event_ = nullptr;
    return true;
  }
  const kiln_plugin_api& api = device_->api();
  if (api.event_query == nullptr) return device_->missing("event_query");
  kiln_event_query_args args{};
  args.struct_size = KILN_EVENT_QUERY_ARGS_STRUCT_SIZE;
  args.event = event_;
  kiln_error* err = api.event_query(&args);
  if (err == nullptr && args.complete == 0) return false;
  release();
  if (err != nullptr) return device_->error(err, "event_query");
  return true;
}

void Event::release() {
  if (device_->api().event_release != nullptr) device_->api().event_release(event_);
  event_ = nullptr;
}

}  // namespace kiln
