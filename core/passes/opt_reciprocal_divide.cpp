// reciprocal_divide(): inside a LOOP, an f32/f64 division whose divisor is
// defined outside the innermost loop around it, x / d, becomes x * recip(d);
// the always-on LICM then computes recip(d) once, before the loop. Softmax's
// writing loop divides every element by the row's sum: on the H200 an IEEE
// f32 division is about 11 instructions (a reciprocal, five FMAs, a check
// and a branch), a multiplication one, and the f16/bf16 softmax is bound by
// instructions, not bytes.
//
// Rounding: RN(x * RN(1/d)) differs from RN(x / d) by at most 2 ulp where
// 1/d is a normal number (1.2e-38 < |d| < 8.5e37 in f32), as the tolerance
// of the tests allows; outside that range (1/d a subnormal, or infinite)
// the product loses digits or overflows, so a kernel dividing by such
// values should not take this step. f16/bf16 divisions are left alone
// (their reciprocal, rounded to 16 bits, overflows already for |d| < 2^-16).
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <algorithm>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::ValueId;

// The divisions to rewrite, by op id: true where op `id` is one.
std::vector<bool> loop_invariant_divisions(const Kernel& kernel) {
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  std::vector<bool> found(kernel.size(), false);
  for (ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind != OpKind::Binary || op.binary() != ir::BinaryOp::Div) continue;
    if (op.dtype != ir::DType::F32 && op.dtype != ir::DType::F64) continue;
    const ValueId divisor = op.src[1];
    // A LOOP op's own value (its counter) is defined inside it.
    const std::uint32_t divisor_depth = blocks.loop_depth[divisor] + (kernel[divisor].kind == OpKind::Loop ? 1 : 0);
    found[id] = blocks.loop_depth[id] > 0 && divisor_depth < blocks.loop_depth[id];
  }
  return found;
}

bool any(const std::vector<bool>& flags) { return std::find(flags.begin(), flags.end(), true) != flags.end(); }

class ReciprocalDivide final : public Optimization {
 public:
  std::string_view name() const override { return "reciprocal_divide"; }
  std::string_view description() const override {
    return "f32/f64 divisions in a loop by a value from outside it become multiplications by its reciprocal "
           "(computed once; rounding differs by up to 2 ulp)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo&) const override {
    if (!is_valid(kernel) || !any(loop_invariant_divisions(kernel))) return {};
    return {make_step(name(), {})};
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY(step_params(step, {}));
    const std::vector<bool> divisions = loop_invariant_divisions(kernel);
    if (!any(divisions)) return step_error(step, "no f32/f64 division in a loop by a value from outside it");
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      if (!divisions[id]) return false;
      const ir::Op& op = kernel[id];
      rw.replace(id, rw.out().mul(rw.map(op.src[0]), rw.out().recip(rw.map(op.src[1]))));
      return true;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& reciprocal_divide() {
  static const ReciprocalDivide instance;
  return instance;
}

}  // namespace kiln::passes::opts
