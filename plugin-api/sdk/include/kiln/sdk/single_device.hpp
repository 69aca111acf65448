// kiln/sdk/single_device.hpp - the device functions of a plugin that offers
// exactly one device with no state of its own (the C and CBLAS plugins: the
// host CPU as c:0 / cblas:0). init describes the device once; the table
// takes the four functions as they are:
//
//   sdk::set_single_device("c", info);          // in init
//   .device_count = sdk::single_device_count, .device_info = sdk::single_device_info,
//   .device_open = sdk::single_device_open, .device_close = sdk::single_device_close,
//
// Each plugin links its own copy of the SDK, so each has its own device.
#pragma once

#include <kiln/plugin.h>

#include <string_view>

namespace kiln::sdk {

// Sets the device's info and the plugin name used in messages. Called by
// init, before any other function runs ([exclusive]).
void set_single_device(std::string_view plugin, const kiln_device_info& info);

kiln_error* single_device_count(kiln_device_count_args* args);  // always 1
kiln_error* single_device_info(kiln_device_info_args* args);    // index 0 only
kiln_error* single_device_open(kiln_device_open_args* args);    // index 0: one handle, always the same
void single_device_close(kiln_device* device);                  // nothing to release

}  // namespace kiln::sdk
