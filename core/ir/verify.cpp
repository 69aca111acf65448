// The verifier's walk: fields, operands (order, kind, scope) and nesting of
// every op, then the per-kind rules (verify_ops.cpp), then the rules about
// the kernel as a whole (parameter slots, unclosed blocks).
#include "kiln/ir/verify.hpp"

#include "kiln/ir/text.hpp"
#include "verifier.hpp"

#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <map>

namespace kiln::ir {

namespace verify_detail {

namespace {

// Which fields beyond kind and src[] each kind uses; the others must be
// zero (dtype Invalid and lanes 1 for ops without a type).
struct FieldUse {
  bool typed, code, attr, imm;
};
FieldUse field_use(OpKind kind) {
  switch (kind) {
    case OpKind::Const: return {true, false, false, true};
    case OpKind::Param: return {true, true, true, true};
    case OpKind::Storage: return {true, true, false, true};
    case OpKind::Index: return {true, true, true, false};
    case OpKind::Barrier: return {false, true, false, false};
    case OpKind::CopyCommit: return {false, false, false, false};
    case OpKind::CopyWait: case OpKind::WgmmaWait: return {false, false, true, false};
    case OpKind::WgmmaFence: case OpKind::WgmmaCommit: return {false, false, false, false};
    case OpKind::Wgmma: return {true, true, true, false};  // code 1: A from registers
    case OpKind::Unary: case OpKind::Binary: return {true, true, false, false};
    case OpKind::Insert: case OpKind::Extract: return {true, false, true, false};
    case OpKind::Load: case OpKind::Store: return {true, false, true, false};  // attr: KILN_ACCESS_UNALIGNED
    case OpKind::Mma: case OpKind::SubgroupReduce: case OpKind::LoadMatrix: return {true, true, true, false};
    case OpKind::EndLoop: case OpKind::If: case OpKind::EndIf: return {false, false, false, false};
    default: return {true, false, false, false};
  }
}

std::string_view kind_name(OpKind kind) { return sdk::op_kind_name(static_cast<unsigned>(kind)); }

}  // namespace

Verifier::Verifier(const Kernel& kernel) : kernel_(kernel), blocks_(analyze_blocks(kernel)), affine_forms_(kernel) {
  varying_ = thread_varying(kernel_, blocks_);
  has_local_index_ = std::any_of(kernel.ops.begin(), kernel.ops.end(), [](const Op& op) {
    return op.kind == OpKind::Index && op.scope() == Scope::Local;
  });
}

bool Verifier::fail(ValueId id, std::string_view rule, const std::string& what) {
  Error error = make_error(ErrorCode::Verify, "rule " + std::string(rule) + ": " + what + ": `" + print_op(kernel_, id) + "`");
  error.function = "verify";
  error.op = id;
  errors_.push_back(std::move(error));
  return false;
}

std::vector<Error> Verifier::run() {
  for (ValueId id = 0; id < kernel_.size(); ++id)
    check_fields(id) && check_operands(id) && check_nesting(id) && check_op(id);
  check_unclosed_blocks();
  check_param_slots();
  std::stable_sort(errors_.begin(), errors_.end(), [](const Error& a, const Error& b) { return a.op < b.op; });
  const auto same_op = [](const Error& a, const Error& b) { return a.op == b.op; };
  errors_.erase(std::unique(errors_.begin(), errors_.end(), same_op), errors_.end());
  return std::move(errors_);
}

bool Verifier::check_fields(ValueId id) {
  const Op& op = kernel_[id];
  if (op.kind == OpKind::Invalid || static_cast<unsigned>(op.kind) >= KILN_OP_KIND_COUNT)
    return fail(id, "kind", "unknown op kind " + std::to_string(static_cast<unsigned>(op.kind)));
  const FieldUse use = field_use(op.kind);
  const std::string kind(kind_name(op.kind));
  if (op.reserved != 0) return fail(id, "unused-fields", "reserved must be 0");
  for (std::size_t i = op.operand_count(); i < op.src.size(); ++i)
    if (op.src[i] != kNoValue) return fail(id, "unused-fields", kind + " uses " + std::to_string(op.operand_count()) + " operands; src[" + std::to_string(i) + "] must be empty");
  if (!use.typed && (op.dtype != DType::Invalid || op.lanes != 1))
    return fail(id, "unused-fields", kind + " has no type: dtype must be 0 and lanes 1");
  if (!use.code && op.code != 0) return fail(id, "unused-fields", kind + " has no code: it must be 0");
  if (!use.attr && op.attr != 0) return fail(id, "unused-fields", kind + " has no attr: it must be 0");
  if (!use.imm && op.imm != 0) return fail(id, "unused-fields", kind + " has no imm: it must be 0");
  if (use.typed && !dtype_valid(op.dtype))
    return fail(id, "dtype", "unknown dtype " + std::to_string(static_cast<unsigned>(op.dtype)));
  if (use.typed && (op.lanes < 1 || op.lanes > KILN_MAX_LANES))
    return fail(id, "lanes", "lanes must be 1.." + std::to_string(KILN_MAX_LANES) + ", got " + std::to_string(op.lanes));
  if (blocks_.parent[id] != kNoValue &&
      (op.kind == OpKind::Param || op.kind == OpKind::Storage || op.kind == OpKind::Index))
    return fail(id, "top-level", kind + " must appear outside every loop and if (it is inside " +
                                     std::string(kind_name(kernel_[blocks_.parent[id]].kind)) + " %" +
                                     std::to_string(blocks_.parent[id]) + ")");
  return true;
}

bool Verifier::check_operands(ValueId id) {
  const Op& op = kernel_[id];
  const auto operands = op.operands();
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const ValueId v = operands[i];
    const auto which = [i] { return "operand " + std::to_string(i); };  // for messages only
    if (v == kNoValue) return fail(id, "operand-missing", which() + " of " + std::string(kind_name(op.kind)) + " is missing");
    if (v >= id)
      return fail(id, "operand-order", which() + " names op " + std::to_string(v) + ", which does not come before it");
    if (op.kind == OpKind::EndIf) continue;  // names its IF marker; nesting rule checks it
    const Op& def = kernel_[v];
    if (!def.has_result())
      return fail(id, "operand-value", which() + " names op " + std::to_string(v) + " (" +
                                           std::string(kind_name(def.kind)) + "), which has no value");
    const bool wants_memory =
        (i == 0 && (op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::CopyAsync ||
                    op.kind == OpKind::LoadMatrix || op.kind == OpKind::Wgmma || op.kind == OpKind::Prefetch)) ||
        (i == 2 && op.kind == OpKind::Wgmma);
    if (wants_memory && !def.is_memory())
      return fail(id, "operand-memory", "the memory operand %" + std::to_string(v) + " is not a buffer param or storage");
    if (!wants_memory && def.is_memory())
      return fail(id, "operand-memory", which() + " %" + std::to_string(v) + " is memory, not a value (load from it)");
    if (op.kind == OpKind::EndLoop) continue;
    const ValueId home = blocks_.value_block(kernel_, v);
    if (home != kNoValue && !blocks_.encloses(home, id))
      return fail(id, "scope", "%" + std::to_string(v) + " is defined inside " +
                                   std::string(kind_name(kernel_[home].kind)) + " %" + std::to_string(home) +
                                   " and used outside it");
  }
  return true;
}

bool Verifier::check_nesting(ValueId id) {
  const Op& op = kernel_[id];
  // Reported once per too-deep branch: at the block that crosses the limit.
  if ((op.kind == OpKind::Loop || op.kind == OpKind::If) && blocks_.depth[id] == kMaxBlockDepth)
    return fail(id, "nesting-depth", "more than " + std::to_string(kMaxBlockDepth) +
                                         " nested loops and ifs (compilers and emitters recurse per level)");
  if (op.kind != OpKind::EndLoop && op.kind != OpKind::EndIf) return true;
  const bool is_loop = op.kind == OpKind::EndLoop;
  const ValueId innermost = blocks_.parent[id];
  const std::string end(kind_name(op.kind));
  if (innermost == kNoValue) return fail(id, "nesting", end + " closes nothing: no loop or if is open");
  const OpKind open_kind = kernel_[innermost].kind;
  if ((open_kind == OpKind::Loop) != is_loop)
    return fail(id, "nesting", end + " cannot close the " + std::string(kind_name(open_kind)) + " at op " +
                                   std::to_string(innermost) + " (the innermost open block)");
  if (op.src[0] != innermost)
    return fail(id, "nesting", end + " names op " + std::to_string(op.src[0]) + " but the innermost open " +
                                   std::string(kind_name(open_kind)) + " is op " + std::to_string(innermost));
  return true;
}

void Verifier::check_unclosed_blocks() {
  for (ValueId id = 0; id < kernel_.size(); ++id) {
    const OpKind kind = kernel_[id].kind;
    if ((kind == OpKind::Loop || kind == OpKind::If) && blocks_.end[id] == kNoValue)
      fail(id, "nesting", std::string(kind_name(kind)) + " is never closed (no matching end" +
                              std::string(kind_name(kind)) + ")");
  }
}

void Verifier::check_param_slots() {
  std::map<std::uint32_t, ValueId> slots;
  for (ValueId id = 0; id < kernel_.size(); ++id) {
    const Op& op = kernel_[id];
    if (op.kind != OpKind::Param) continue;
    const auto [it, inserted] = slots.emplace(op.attr, id);
    if (!inserted)
      fail(id, "param-slots", "slot " + std::to_string(op.attr) + " is taken by op " + std::to_string(it->second));
  }
  std::uint32_t expected = 0;
  for (const auto& [slot, id] : slots) {
    if (slot != expected) {
      fail(id, "param-slots", "slot " + std::to_string(slot) + " but no param has slot " + std::to_string(expected) +
                                  " (slots must be 0..n-1)");
      return;
    }
    ++expected;
  }
}

}  // namespace verify_detail

std::vector<Error> verify_all(const Kernel& kernel) { return verify_detail::Verifier(kernel).run(); }

Result<void> verify(const Kernel& kernel) {
  auto errors = verify_all(kernel);
  if (errors.empty()) return {};
  return std::move(errors.front());
}

}  // namespace kiln::ir
