#include "loop_equivalence.hpp"

namespace kiln::passes::opts {

namespace {

using ir::OpKind;

bool pure(const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Const: case OpKind::Unary: case OpKind::Binary: case OpKind::Cast: case OpKind::Mad:
    case OpKind::Select: case OpKind::Broadcast: case OpKind::Insert: case OpKind::Extract:
      return true;
    default: return false;
  }
}

// Expressions of indices are a few ops deep; the bound only stops a
// pathological kernel from recursing far.
constexpr int kMaxDepth = 32;

}  // namespace

bool LoopEquivalence::equivalent(ir::ValueId a, ir::ValueId b, int depth) {
  if (a == la_ || b == lb_) return a == la_ && b == lb_;
  const bool a_in = blocks_.encloses(la_, a), b_in = blocks_.encloses(lb_, b);
  const ir::Op &x = kernel_[a], &y = kernel_[b];
  if (!a_in || !b_in) {
    if (a == b && !a_in && !b_in) return true;
    return x.kind == OpKind::Const && y.kind == OpKind::Const && x.dtype == y.dtype && x.imm == y.imm;
  }
  if (depth > kMaxDepth) return false;
  if (auto known = memo_.find({a, b}); known != memo_.end()) return known->second;
  // A read-only buffer holds one value per element for the whole launch
  // (kernel_ir.h): loads of one GLOBAL param at equivalent indices agree.
  const bool read_only = x.kind == OpKind::Load && kernel_[x.src[0]].kind == OpKind::Param &&
                         kernel_[x.src[0]].param_kind() == ir::ParamKind::Global && x.src[0] == y.src[0];
  bool same = (pure(x) || read_only) && x.kind == y.kind && x.dtype == y.dtype && x.lanes == y.lanes && x.code == y.code &&
              x.attr == y.attr && x.imm == y.imm && x.operand_count() == y.operand_count();
  for (std::size_t i = read_only ? 1 : 0; same && i < x.operand_count(); ++i)
    same = equivalent(x.src[i], y.src[i], depth + 1);
  memo_[{a, b}] = same;
  return same;
}

}  // namespace kiln::passes::opts
