// exp/ln <-> exp2/log2 for the device (finalize). On a device with a native
// exp2 (DeviceInfo::native_exp2: GPUs' special-function units):
//   exp(x) -> exp2(x * log2(e)),  ln(x) -> log2(x) * ln(2);
// elsewhere the other way round:
//   exp2(x) -> exp(x * ln(2)),    log2(x) -> ln(x) * log2(e).
// Only f32 and f64: the rounding of the scaled argument costs an ulp or so
// of relative error for moderate |x|, but in f16/bf16 an ulp is too coarse.
#include "always_on.hpp"
#include "kiln/ir/rewriter.hpp"

#include <numbers>

namespace kiln::passes::detail {

Kernel convert_exp_base(const Kernel& kernel, const DeviceInfo& device) {
  const bool native_exp2 = device.native_exp2();
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ir::ValueId id) {
    const ir::Op& op = kernel[id];
    if (op.kind != ir::OpKind::Unary || (op.dtype != ir::DType::F32 && op.dtype != ir::DType::F64)) return false;
    ir::Builder& b = rw.out();
    const ir::Value x = rw.map(op.src[0]);
    if (!x.valid()) return false;
    auto scale = [&](double factor) {
      const ir::Value c = b.constant(op.dtype, factor);
      return op.lanes == 1 ? c : b.broadcast(c, op.lanes);
    };
    // One builder call per statement: the emitted op order must not depend
    // on the compiler's argument evaluation order.
    ir::Value result;
    switch (op.unary()) {
      case ir::UnaryOp::Exp: {
        if (!native_exp2) return false;
        const ir::Value factor = scale(std::numbers::log2e);
        result = b.exp2(b.mul(x, factor));
        break;
      }
      case ir::UnaryOp::Ln: {
        if (!native_exp2) return false;
        const ir::Value log = b.log2(x);
        const ir::Value factor = scale(std::numbers::ln2);
        result = b.mul(log, factor);
        break;
      }
      case ir::UnaryOp::Exp2: {
        if (native_exp2) return false;
        const ir::Value factor = scale(std::numbers::ln2);
        result = b.exp(b.mul(x, factor));
        break;
      }
      case ir::UnaryOp::Log2: {
        if (native_exp2) return false;
        const ir::Value log = b.ln(x);
        const ir::Value factor = scale(std::numbers::log2e);
        result = b.mul(log, factor);
        break;
      }
      default:
        return false;
    }
    rw.replace(id, result);
    return true;
  });
}

}  // namespace kiln::passes::detail
