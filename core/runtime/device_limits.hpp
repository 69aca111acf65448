// Internal: the device limits a kernel must fit before it is compiled
// (Device::compile): LOCAL storage within the device's local memory, the
// threads of a work-group within its maxima. Errors name the limit.
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/result.hpp"
#include "kiln/runtime/device_info.hpp"

namespace kiln::detail {

Result<void> check_device_limits(const ir::Kernel& kernel, const DeviceInfo& info);

}  // namespace kiln::detail
