// kiln/sdk/single_device.hpp - the device functions of a plugin with exactly
// one device on the host's CPU whose work completes within each call (the C
// and CBLAS plugins): count 1, one handle that needs no opening, nothing to
// close or wait for. The plugin supplies only its DeviceInfo:
//
//   const kiln_device_info& info_of_the_device() { return state().info; }
//   const sdk::DeviceFunctions kDeviceFunctions = sdk::single_host_device<info_of_the_device>();
#pragma once

#include "kiln/sdk/host_memory.hpp"
#include "kiln/sdk/plugin_entry.hpp"
#include "kiln/sdk/plugin_table.hpp"

namespace kiln::sdk {

// The one device's handle: an address that is this plugin's own (the SDK is
// linked into each plugin), never dereferenced.
inline char single_device_object = 0;
inline kiln_device* single_device_handle() { return reinterpret_cast<kiln_device*>(&single_device_object); }

template <const kiln_device_info& (*info_of)()>
constexpr DeviceFunctions single_host_device() {
  return {
      .device_count = [](kiln_device_count_args* raw) {
        return answer_device_count(raw, [] { return std::size_t{1}; });
      },
      .device_info = [](kiln_device_info_args* raw) {
        return answer_device_info(raw, [] { return std::size_t{1}; },
                                  [](std::uint32_t) -> const kiln_device_info& { return info_of(); });
      },
      .device_open = [](kiln_device_open_args* raw) {
        return answer_device_open(raw, [] { return std::size_t{1}; },
                                  [](std::uint32_t) { return single_device_handle(); });
      },
      .device_close = [](kiln_device*) {},
      .device_synchronize = host_device_synchronize,
  };
}

}  // namespace kiln::sdk
