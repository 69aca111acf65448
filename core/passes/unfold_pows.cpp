// Pow unfolding: POW by a small constant integer exponent becomes
// multiplications (devices often compute pow as exp2(y * log2(x)), which is
// slower, less exact and NaN for negative x):
//   x^0 -> 1, x^1 -> x, x^2 -> x*x, x^3 -> x*x*x, x^4 -> (x*x)*(x*x),
//   x^-1 -> recip(x)
// pow(x, 0) is 1 for every x (NaN included), pow(x, 1) is x, and
// pow(x, -1) is the correctly rounded 1/x; the products round once per
// multiply instead of once (within an ulp or two for x^3 and x^4).
#include "always_on.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"
#include "patterns.hpp"

namespace kiln::passes::detail {

Kernel unfold_pows(const Kernel& kernel, const DeviceInfo&) {
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ir::ValueId id) {
    const ir::Op& op = kernel[id];
    if (op.kind != ir::OpKind::Binary || op.binary() != ir::BinaryOp::Pow) return false;
    const auto exponent = splat_constant(kernel, op.src[1]);
    if (!exponent) return false;
    ir::Builder& b = rw.out();
    const ir::Value x = rw.map(op.src[0]);
    if (!x.valid()) return false;
    ir::Value result;
    if (*exponent == 0) {
      const ir::Value one = b.constant(op.dtype, 1.0);
      result = op.lanes == 1 ? one : b.broadcast(one, op.lanes);
    } else if (*exponent == 1) {
      result = x;
    } else if (*exponent == 2) {
      result = b.mul(x, x);
    } else if (*exponent == 3) {
      const ir::Value square = b.mul(x, x);
      result = b.mul(square, x);
    } else if (*exponent == 4) {
      const ir::Value square = b.mul(x, x);
      result = b.mul(square, square);
    } else if (*exponent == -1) {
      result = b.recip(x);
    } else {
      return false;
    }
    rw.replace(id, result);
    return true;
  });
}

}  // namespace kiln::passes::detail
