#include "kiln/sdk/single_device.hpp"

#include "kiln/sdk/plugin_support.hpp"

#include <string>

namespace kiln::sdk {

namespace {

struct SingleDevice {
  std::string plugin = "plugin";
  kiln_device_info info{};
  char handle = 0;  // the device handle is this byte's address
};

SingleDevice& the_device() {
  static SingleDevice device;
  return device;
}

void check_index(std::uint32_t index) {
  if (index != 0)
    fail(KILN_STATUS_INVALID_ARGUMENT,
         the_device().plugin + ": device index " + std::to_string(index) + " (there is one device)");
}

}  // namespace

void set_single_device(std::string_view plugin, const kiln_device_info& info) {
  the_device().plugin = std::string(plugin);
  the_device().info = info;
}

kiln_error* single_device_count(kiln_device_count_args* raw) {
  return guard([&] {
    auto args = read_args(raw);
    args.count = 1;
    write_args(raw, args);
  });
}

kiln_error* single_device_info(kiln_device_info_args* raw) {
  return guard([&] {
    auto args = read_args(raw);
    check_index(args.index);
    if (args.info == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, the_device().plugin + ": device_info: info is NULL");
    write_args(args.info, the_device().info);
  });
}

kiln_error* single_device_open(kiln_device_open_args* raw) {
  return guard([&] {
    auto args = read_args(raw);
    check_index(args.index);
    args.device = reinterpret_cast<kiln_device*>(&the_device().handle);
    write_args(raw, args);
  });
}

void single_device_close(kiln_device*) {}

}  // namespace kiln::sdk
