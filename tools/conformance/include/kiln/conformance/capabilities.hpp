// kiln/conformance/capabilities.hpp - what a device says it can do, read in
// one place. ABI 1.1 adds per-op dtype arrays (unary_dtypes/binary_dtypes)
// next to 1.0's dtype_ops bit masks; when it lands, these three functions
// are the only code that changes (the suite and the kit never read
// dtype_ops themselves).
#pragma once

#include <kiln/plugin.h>

namespace kiln::conformance {

// The device has dtype `dt` at all (loads, stores, casts).
inline bool has_dtype(const kiln_device_info& info, unsigned dt) {
  return dt < sizeof info.dtype_ops / sizeof info.dtype_ops[0] && info.dtype_ops[dt] != 0;
}
inline bool has_unary(const kiln_device_info& info, unsigned dt, unsigned u) {
  return has_dtype(info, dt) && (info.dtype_ops[dt] & KILN_CAP_UNARY(u)) != 0;
}
inline bool has_binary(const kiln_device_info& info, unsigned dt, unsigned b) {
  return has_dtype(info, dt) && (info.dtype_ops[dt] & KILN_CAP_BINARY(b)) != 0;
}

}  // namespace kiln::conformance
