// kiln/conformance/capabilities.hpp - what a device says it can do, read in
// one place: ABI 1.1's per-op dtype arrays (the SDK's capabilities.hpp). The
// kit normalizes every device info it reads (AbiPlugin::info), so a 1.0
// plugin's per-dtype words arrive here as arrays too.
#pragma once

#include <kiln/plugin.h>
#include <kiln/sdk/capabilities.hpp>

namespace kiln::conformance {

// The device has dtype `dt` at all (loads, stores, casts).
inline bool has_dtype(const kiln_device_info& info, unsigned dt) { return sdk::has_dtype(info, dt); }
inline bool has_unary(const kiln_device_info& info, unsigned dt, unsigned u) {
  return sdk::has_dtype(info, dt) && sdk::has_unary(info, dt, u);
}
inline bool has_binary(const kiln_device_info& info, unsigned dt, unsigned b) {
  return sdk::has_dtype(info, dt) && sdk::has_binary(info, dt, b);
}

}  // namespace kiln::conformance
