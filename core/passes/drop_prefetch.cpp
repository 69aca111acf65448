// PREFETCH ops (kernel_ir.h) dropped for a device that does not claim them on
// their dtype: a prefetch is a hint with no effect on any result, so a kernel
// written or tuned with it still runs everywhere (finalize, and
// Device::compile for every other way in).
#include "always_on.hpp"
#include "kiln/ir/rewriter.hpp"

#include <algorithm>

namespace kiln::passes::detail {

namespace {

bool unclaimed_prefetch(const ir::Op& op, const DeviceInfo& device) {
  return op.kind == ir::OpKind::Prefetch && !device.supports_op_kind(KILN_OP_PREFETCH, static_cast<unsigned>(op.dtype));
}

}  // namespace

bool has_unclaimed_prefetch(const Kernel& kernel, const DeviceInfo& device) {
  return std::any_of(kernel.ops.begin(), kernel.ops.end(), [&](const ir::Op& op) { return unclaimed_prefetch(op, device); });
}

Kernel drop_unclaimed_prefetch(const Kernel& kernel, const DeviceInfo& device) {
  if (!has_unclaimed_prefetch(kernel, device)) return kernel;
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ir::ValueId id) {
    if (!unclaimed_prefetch(kernel[id], device)) return false;
    rw.drop(id);
    return true;
  });
}

}  // namespace kiln::passes::detail
