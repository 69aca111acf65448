// Constant folding: a scalar UNARY/BINARY/CAST/MAD/SELECT whose operands are
// all CONSTs becomes a CONST with the value the interpreter computes
// (constant_eval.cpp); a SELECT with a constant condition becomes the chosen
// operand; an IF on a constant condition is inlined (true) or dropped with
// its body (false). Integer division by zero is left to the kernel (0 on
// every backend, kernel_ir.h).
//
//   %2 = const i64 3            ->   %2 = const i64 3
//   %3 = const i64 4                 %3 = const i64 4
//   %4 = mul i64 %2, %3              %4 = const i64 12
#include "always_on.hpp"
#include "constant_eval.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"

#include <vector>

namespace kiln::passes::detail {

using ir::OpKind;
using ir::ValueId;

namespace {

// The new op standing for old operand `old_id`, when it is a scalar CONST.
const ir::Op* mapped_constant(ir::Rewriter& rw, ValueId old_id) {
  const ir::Value v = rw.map(old_id);
  if (!v.valid()) return nullptr;
  const ir::Op& op = rw.out().kernel()[v.id];
  return op.kind == OpKind::Const && op.lanes == 1 ? &op : nullptr;
}

}  // namespace

Kernel fold_constants(const Kernel& kernel, const DeviceInfo&) {
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  std::vector<bool> inlined_if(kernel.size(), false);
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
    const ir::Op& op = kernel[id];
    switch (op.kind) {
      case OpKind::Select: {
        if (const ir::Op* condition = mapped_constant(rw, op.src[0])) {
          rw.replace(id, rw.map(op.src[condition->imm != 0 ? 1 : 2]));
          return true;
        }
        [[fallthrough]];
      }
      case OpKind::Unary: case OpKind::Binary: case OpKind::Cast: case OpKind::Mad: {
        if (op.lanes != 1) return false;
        std::vector<ir::Op> operands;
        for (ValueId v : op.operands()) {
          const ir::Op* constant = mapped_constant(rw, v);
          if (constant == nullptr) return false;
          operands.push_back(*constant);
        }
        const auto bits = evaluate_constant_op(op, operands);
        if (!bits) return false;
        rw.replace(id, rw.out().constant_bits(op.dtype, *bits));
        return true;
      }
      case OpKind::If: {
        const ir::Op* condition = mapped_constant(rw, op.src[0]);
        if (condition == nullptr || blocks.end[id] == ir::kNoValue) return false;
        if (condition->imm != 0) {
          inlined_if[id] = true;
          rw.drop(id);
        } else {
          for (ValueId dead = id; dead <= blocks.end[id]; ++dead) rw.drop(dead);
        }
        return true;
      }
      case OpKind::EndIf:
        if (op.src[0] < kernel.size() && inlined_if[op.src[0]]) {
          rw.drop(id);
          return true;
        }
        return false;
      default:
        return false;
    }
  });
}

}  // namespace kiln::passes::detail
