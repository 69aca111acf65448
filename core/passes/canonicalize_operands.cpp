// Commutative operand canonicalization: for ADD, MUL, MAX, MIN, AND, OR,
// BIT_*, EQ, NOT_EQ and the factors of MAD, a constant goes right, else the
// operand defined first goes left; a comparison with a constant on the left
// (or operands out of order) flips: c < x -> x > c. Equal expressions then
// look equal to CSE, and patterns need to match only one shape.
#include "always_on.hpp"
#include "kiln/ir/rewriter.hpp"

#include <kiln/sdk/wire.hpp>

#include <utility>

namespace kiln::passes::detail {

using ir::OpKind;

namespace {

// Whether (a, b) should be (b, a): constants right, then by definition order.
bool out_of_order(const Kernel& out, ir::ValueId a, ir::ValueId b) {
  const bool a_const = out[a].kind == OpKind::Const;
  const bool b_const = out[b].kind == OpKind::Const;
  if (a_const != b_const) return a_const;
  return a > b;
}

}  // namespace

Kernel canonicalize_operands(const Kernel& kernel, const DeviceInfo&) {
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ir::ValueId id) {
    const ir::Op& op = kernel[id];
    const bool binary = op.kind == OpKind::Binary;
    const bool comparison = binary && (op.binary() == ir::BinaryOp::CmpLt || op.binary() == ir::BinaryOp::CmpGt);
    const bool commutative = (binary && sdk::binary_is_commutative(op.code)) || op.kind == OpKind::Mad;
    if (!commutative && !comparison) return false;
    const ir::Value a = rw.map(op.src[0]);
    const ir::Value b = rw.map(op.src[1]);
    if (!a.valid() || !b.valid() || !out_of_order(rw.out().kernel(), a.id, b.id)) return false;
    ir::Op swapped = op;
    for (std::size_t i = 0; i < op.operand_count(); ++i) swapped.src[i] = rw.map(op.src[i]).id;
    std::swap(swapped.src[0], swapped.src[1]);
    if (comparison) swapped.code = static_cast<std::uint8_t>(op.binary() == ir::BinaryOp::CmpLt ? ir::BinaryOp::CmpGt : ir::BinaryOp::CmpLt);
    rw.replace(id, rw.out().append(swapped));
    return true;
  });
}

}  // namespace kiln::passes::detail
