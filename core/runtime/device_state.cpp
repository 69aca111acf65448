#include "device_state.hpp"

namespace kiln::detail {

DeviceState::~DeviceState() {
  if (!alive()) return;
  std::lock_guard lock(queue_mutex_);
  if (api().device_close2 != nullptr) {
    kiln_device_close_args args{};
    args.struct_size = KILN_DEVICE_CLOSE_ARGS_STRUCT_SIZE;
    args.device = handle_;
    if (kiln_error* err = api().device_close2(&args)) library_.log_release_error(err, "device_close2");
  } else if (api().device_close != nullptr) {
    api().device_close(handle_);
  }
}

Error DeviceState::error(kiln_error* error, std::string_view function, std::int64_t op) const {
  Error e = take_error(error, plugin_, function, op);
  e.device = info_.id;
  return e;
}

Error DeviceState::missing(std::string_view function) const {
  Error e = make_error(ErrorCode::NotImplemented, "the plugin does not implement this function");
  e.plugin = plugin_;
  e.device = info_.id;
  e.function = function;
  return e;
}

Result<void> DeviceState::drain_locked() {
  if (!pending_ || !alive()) return {};
  if (api().device_synchronize == nullptr) return missing("device_synchronize");
  if (kiln_error* err = api().device_synchronize(handle_)) return error(err, "device_synchronize");
  pending_ = false;
  return {};
}

}  // namespace kiln::detail
