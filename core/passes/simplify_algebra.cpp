// Algebraic simplification: identities (algebra_identities.cpp) and the
// range-based division rules (algebra_division.cpp), one rewrite per op per
// round; normalize repeats the pipeline until nothing changes, so chains
// simplify step by step.
//
//   %5 = mul i64 %3, %c16         # %3 = index group 0 (len 8), %4 = index local 0 (len 16)
//   %6 = add i64 %5, %4
//   %7 = div i64 %6, %c16    ->   (uses of %7 use %3)
//   %8 = mod i64 %6, %c16    ->   (uses of %8 use %4)
//
// Every rule preserves results exactly as the interpreter computes them
// (wrapping integers, IEEE floats with signed zeros and NaN): float rules
// that would change a result (x*0, x+0.0, x-x) are not applied, and range
// rules apply only where ranges prove no i64 arithmetic wraps.
#include "algebra_rules.hpp"
#include "always_on.hpp"

namespace kiln::passes::detail {

Kernel simplify_algebra(const Kernel& kernel, const DeviceInfo&) {
  const std::vector<std::optional<Range>> ranges = integer_ranges(kernel);
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ir::ValueId id) {
    const AlgebraContext context{kernel, ranges, rw};
    std::optional<ir::Value> replacement = simplify_identity(context, id);
    if (!replacement) replacement = simplify_division(context, id);
    if (!replacement || !replacement->valid()) return false;
    rw.replace(id, *replacement);
    return true;
  });
}

}  // namespace kiln::passes::detail
