// kiln/sdk/device_filter.hpp - the "devices" plugin option, one meaning in
// every plugin that discovers several devices (docs/config.md, "The devices
// option"): a list whose items are device ordinals (integers >= 0: the
// device's position in what the plugin finds, before filtering) or name
// substrings (strings: kept when the device's name contains one). A device
// is kept when any item selects it; no option, or an empty list, keeps all.
// It is the same rule as the config-level "devices" of a plugin section
// (core/runtime/plugin_loader.cpp), applied inside the plugin, so that
// devices left out are never opened.
#pragma once

#include "kiln/sdk/plugin_support.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::sdk {

class DeviceFilter {
 public:
  DeviceFilter() = default;  // keeps every device

  // Reads option `key` ("devices"). Throws INVALID_ARGUMENT naming the key
  // and the item for anything but a list of ordinals and strings.
  static DeviceFilter read(const Options& options, std::string_view key = "devices");

  bool keeps_all() const { return ordinals_.empty() && names_.empty(); }
  // Whether the device at `ordinal` (discovery order) named `name` is kept.
  bool keeps(std::size_t ordinal, std::string_view name) const;

  const std::vector<std::uint64_t>& ordinals() const { return ordinals_; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::uint64_t> ordinals_;
  std::vector<std::string> names_;
};

}  // namespace kiln::sdk
