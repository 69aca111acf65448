// The printer. Each op prints in its readable form when that form says
// everything about it (parse gives back the same op); otherwise as a raw
// line listing every field, so any kernel round-trips exactly.
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/text.hpp"
#include "scalar_text.hpp"

#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <charconv>

namespace kiln::ir {

namespace {

using text_detail::format_scalar;

// The op's fields a readable line does not show must hold these values.
bool unshown_fields_default(const Op& op, bool shows_dtype_lanes, bool shows_code, bool shows_attr,
                            bool shows_imm) {
  if (op.reserved != 0) return false;
  for (std::size_t i = op.operand_count(); i < op.src.size(); ++i)
    if (op.src[i] != kNoValue) return false;
  if (!shows_dtype_lanes && (op.dtype != DType::Invalid || op.lanes != 1)) return false;
  if (!shows_code && op.code != 0) return false;
  if (!shows_attr && op.attr != 0) return false;
  if (!shows_imm && op.imm != 0) return false;
  return true;
}

class Printer {
 public:
  explicit Printer(const Kernel& kernel) : kernel_(kernel) {}

  // The line of op `id`; `innermost` is the LOOP/IF open just before it.
  std::string line(ValueId id, ValueId innermost) const {
    const Op& op = kernel_[id];
    std::string body = readable(id, innermost);
    if (body.empty()) body = raw(op);
    if (op.has_result()) return "%" + std::to_string(id) + " = " + body;
    return body;
  }

 private:
  // A value operand as a name; empty when the readable form cannot name it
  // (not an earlier op with a value).
  std::string name(ValueId user, ValueId operand) const {
    if (operand >= user || !kernel_[operand].has_result()) return {};
    return "%" + std::to_string(operand);
  }

  // The readable line of op `id`, or "" when only a raw line is exact.
  std::string readable(ValueId id, ValueId innermost) const {
    const Op& op = kernel_[id];
    const auto kind = op.kind;
    const bool typed = dtype_valid(op.dtype) && op.lanes >= 1;
    const std::string type = typed ? type_name({op.dtype, op.lanes}) : std::string();
    std::string names[3];
    for (std::size_t i = 0; i < op.operand_count(); ++i) {
      names[i] = name(id, op.src[i]);
      if (names[i].empty() && kind != OpKind::EndIf) return {};
    }
    switch (kind) {
      case OpKind::Const:
        if (!typed || op.lanes != 1 || !unshown_fields_default(op, true, false, false, true) ||
            !bits_canonical(op.dtype, op.imm))
          return {};
        return "const " + type + " " + format_scalar(op.dtype, op.imm);
      case OpKind::Param: {
        const auto pk = op.param_kind();
        if (!typed || op.lanes != 1 || !unshown_fields_default(op, true, true, true, true)) return {};
        const std::string head = "param " + std::to_string(op.attr) + " ";
        if (pk == ParamKind::Variable) return op.imm == 0 ? head + "var " + type : std::string();
        if (pk != ParamKind::Global && pk != ParamKind::GlobalMut) return {};
        const std::string count = op.imm == 0 ? "?" : std::to_string(op.imm);
        return head + std::string(sdk::param_kind_name(op.code)) + " " + type + "[" + count + "]";
      }
      case OpKind::Storage:
        if (!typed || op.lanes != 1 || !unshown_fields_default(op, true, true, false, true)) return {};
        if (op.scope() != Scope::Local && op.scope() != Scope::Register) return {};
        return "storage " + std::string(sdk::scope_name(op.code)) + " " + type + "[" + std::to_string(op.imm) + "]";
      case OpKind::Load:
      case OpKind::Store: {
        if (!typed || !unshown_fields_default(op, true, false, true, false)) return {};
        if (op.attr != 0 && op.attr != KILN_ACCESS_UNALIGNED) return {};
        const std::string head = std::string(op.kind == OpKind::Load ? "load " : "store ") +
                                 (op.attr == KILN_ACCESS_UNALIGNED ? "unaligned " : "") + type + " " + names[0] + "[" +
                                 names[1] + "]";
        return op.kind == OpKind::Load ? head : head + ", " + names[2];
      }
      case OpKind::Index:
        if (op.dtype != DType::I64 || op.lanes != 1 || !unshown_fields_default(op, true, true, true, false)) return {};
        if (op.scope() != Scope::Group && op.scope() != Scope::Local) return {};
        return "index " + std::string(sdk::scope_name(op.code)) + " " + std::to_string(op.attr) + " " + names[0];
      case OpKind::Loop:
        if (op.dtype != DType::I64 || op.lanes != 1 || !unshown_fields_default(op, true, false, false, false)) return {};
        return "loop " + names[0];
      case OpKind::EndLoop:
        if (!unshown_fields_default(op, false, false, false, false)) return {};
        return "endloop " + names[0];
      case OpKind::If:
        if (!unshown_fields_default(op, false, false, false, false)) return {};
        return "if " + names[0];
      case OpKind::EndIf:
        // `endif` closes the innermost open block, which must be this IF.
        if (!unshown_fields_default(op, false, false, false, false)) return {};
        if (innermost == kNoValue || op.src[0] != innermost || kernel_[innermost].kind != OpKind::If) return {};
        return "endif";
      case OpKind::Barrier:
        if (!unshown_fields_default(op, false, true, false, false) || op.scope() != Scope::Local) return {};
        return "barrier";
      case OpKind::CopyAsync:
        if (!typed || !unshown_fields_default(op, true, false, false, false)) return {};
        return "copy_async " + type + " " + names[0] + "[" + names[1] + "], " + names[2];
      case OpKind::LoadMatrix:
        if (!typed || !unshown_fields_default(op, true, true, true, false) || op.code > 1 || op.lanes != 2 * op.attr)
          return {};
        return "load_matrix x" + std::to_string(op.attr) + (op.code == 1 ? " trans " : " ") +
               std::string(sdk::dtype_name(static_cast<unsigned>(op.dtype))) + " " + names[0] + "[" + names[1] + "]";
      case OpKind::CopyCommit:
        if (!unshown_fields_default(op, false, false, false, false)) return {};
        return "copy_commit";
      case OpKind::Prefetch:
        if (!typed || op.lanes != 1 || !unshown_fields_default(op, true, false, false, false)) return {};
        return "prefetch " + type + " " + names[0] + "[" + names[1] + "]";
      case OpKind::Wgmma:
        if (!typed || op.lanes != 1 || op.code > 1 || !unshown_fields_default(op, true, true, true, false)) return {};
        return "wgmma n" + std::to_string(op.attr) + (op.code == 1 ? " a_regs " : " ") + type + " " + names[0] + "[" + names[1] +
               "], " + names[2];
      case OpKind::WgmmaFence:
        if (!unshown_fields_default(op, false, false, false, false)) return {};
        return "wgmma_fence";
      case OpKind::WgmmaCommit:
        if (!unshown_fields_default(op, false, false, false, false)) return {};
        return "wgmma_commit";
      case OpKind::WgmmaWait:
        if (!unshown_fields_default(op, false, false, true, false)) return {};
        return "wgmma_wait " + std::to_string(op.attr);
      case OpKind::CopyWait:
        if (!unshown_fields_default(op, false, false, true, false)) return {};
        return "copy_wait " + std::to_string(op.attr);
      case OpKind::Unary:
        if (!typed || op.code == 0 || op.code >= KILN_UNARY_COUNT || !unshown_fields_default(op, true, true, false, false))
          return {};
        return std::string(sdk::unary_name(op.code)) + " " + type + " " + names[0];
      case OpKind::Binary:
        if (!typed || op.code == 0 || op.code >= KILN_BINARY_COUNT ||
            !unshown_fields_default(op, true, true, false, false))
          return {};
        return std::string(sdk::binary_name(op.code)) + " " + type + " " + names[0] + ", " + names[1];
      case OpKind::Cast:
      case OpKind::Broadcast:
        if (!typed || !unshown_fields_default(op, true, false, false, false)) return {};
        return std::string(sdk::op_kind_name(static_cast<unsigned>(kind))) + " " + type + " " + names[0];
      case OpKind::Mad:
      case OpKind::Select:
      case OpKind::DotBf16:
        if (!typed || !unshown_fields_default(op, true, false, false, false)) return {};
        return std::string(sdk::op_kind_name(static_cast<unsigned>(kind))) + " " + type + " " + names[0] + ", " +
               names[1] + ", " + names[2];
      case OpKind::Bf16Pair:
        if (!typed || !unshown_fields_default(op, true, false, false, false)) return {};
        return "bf16_pair " + type + " " + names[0] + ", " + names[1];
      case OpKind::Insert:
        if (!typed || !unshown_fields_default(op, true, false, true, false)) return {};
        return "insert " + type + " " + names[0] + "[" + std::to_string(op.attr) + "], " + names[1];
      case OpKind::Extract:
        if (!typed || !unshown_fields_default(op, true, false, true, false)) return {};
        return "extract " + type + " " + names[0] + "[" + std::to_string(op.attr) + "]";
      case OpKind::Mma:
        // The result type is always f32x4: the readable line shows shape and inputs.
        if (op.dtype != DType::F32 || op.lanes != 4 || !unshown_fields_default(op, true, true, true, false) ||
            !sdk::mma_input_allowed(op.code, op.attr))
          return {};
        return "mma " + std::string(sdk::mma_shape_name(op.code)) + " " +
               std::string(sdk::mma_input_name(op.code, op.attr)) + " " + names[0] + ", " + names[1] + ", " + names[2];
      case OpKind::SubgroupReduce:
        if (!typed || !sdk::subgroup_reduction_allowed(op.code) || !unshown_fields_default(op, true, true, true, false))
          return {};
        return "subgroup_reduce " + std::string(sdk::binary_name(op.code)) + " " + std::to_string(op.attr) + " " +
               type + " " + names[0];
      default:
        return {};
    }
  }

  static std::string operand(ValueId v) { return v == kNoValue ? "_" : "@" + std::to_string(v); }

  static std::string raw(const Op& op) {
    char imm[24];
    const auto end = std::to_chars(imm, imm + sizeof imm, op.imm, 16).ptr;
    return "raw kind=" + std::to_string(static_cast<unsigned>(op.kind)) +
           " dtype=" + std::to_string(static_cast<unsigned>(op.dtype)) + " lanes=" + std::to_string(op.lanes) +
           " code=" + std::to_string(op.code) + " attr=" + std::to_string(op.attr) + " src=" + operand(op.src[0]) +
           "," + operand(op.src[1]) + "," + operand(op.src[2]) + " reserved=" + std::to_string(op.reserved) +
           " imm=0x" + std::string(imm, end);
  }

  const Kernel& kernel_;
};

// Walks the ops keeping the stack of open LOOP/IF blocks (by kind alone, so
// that broken nesting still prints).
template <class Visit>
void walk_blocks(const Kernel& kernel, ValueId last, Visit&& visit) {
  std::vector<ValueId> open;
  for (ValueId id = 0; id < kernel.size() && id <= last; ++id) {
    const Op& op = kernel[id];
    const bool closes = op.kind == OpKind::EndLoop || op.kind == OpKind::EndIf;
    const ValueId innermost = open.empty() ? kNoValue : open.back();
    if (closes && !open.empty()) open.pop_back();
    visit(id, innermost, open.size());
    if (op.kind == OpKind::Loop || op.kind == OpKind::If) open.push_back(id);
  }
}

}  // namespace

constexpr std::size_t kMaxPrintedIndent = 64;

std::string print(const Kernel& kernel) {
  const Printer printer(kernel);
  std::string out;
  walk_blocks(kernel, kNoValue, [&](ValueId id, ValueId innermost, std::size_t depth) {
    // Indentation stops growing at kMaxPrintedIndent levels (the parser
    // ignores it): 20000 nested loops printed 800 MB, quadratic in depth.
    out.append(2 * std::min(depth, kMaxPrintedIndent), ' ');
    out += printer.line(id, innermost);
    out += '\n';
  });
  return out;
}

std::string print_op(const Kernel& kernel, ValueId id) {
  if (id >= kernel.size()) return "<no op " + std::to_string(id) + ">";
  const Printer printer(kernel);
  std::string line;
  walk_blocks(kernel, id, [&](ValueId at, ValueId innermost, std::size_t) {
    if (at == id) line = printer.line(id, innermost);
  });
  return line;
}

}  // namespace kiln::ir
