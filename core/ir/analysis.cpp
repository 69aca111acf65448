#include "kiln/ir/analysis.hpp"

#include "kiln/ir/dtype.hpp"

#include <kiln/sdk/wire.hpp>

#include <map>

namespace kiln::ir {

namespace {

// Deep enough for any real index or length expression; deeper chains are
// answered conservatively instead of recursing without bound.
constexpr int kMaxExpressionDepth = 64;

bool valid_operand(const Kernel& kernel, ValueId user, ValueId operand) {
  return operand < user && operand < kernel.size();
}

std::int64_t wrap(DType dtype, std::int64_t value) { return decode_int(dtype, encode_int(dtype, value)); }

std::int64_t wrapping(DType dtype, std::uint64_t bits) { return wrap(dtype, static_cast<std::int64_t>(bits)); }

// Integer semantics of kernel_ir.h for one BINARY op; nullopt for division
// by zero and for ops that are not integer ops.
std::optional<std::int64_t> integer_binary(BinaryOp op, DType dtype, std::int64_t x, std::int64_t y) {
  const bool is_signed = is_signed_int(dtype);
  const auto ux = static_cast<std::uint64_t>(x);
  const auto uy = static_cast<std::uint64_t>(y);
  const unsigned shift = static_cast<unsigned>(uy % dtype_bits(dtype));
  switch (op) {
    case BinaryOp::Add: return wrapping(dtype, ux + uy);
    case BinaryOp::Sub: return wrapping(dtype, ux - uy);
    case BinaryOp::Mul: return wrapping(dtype, ux * uy);
    case BinaryOp::Div:
    case BinaryOp::Mod: {
      if (y == 0) return std::nullopt;
      const bool is_div = op == BinaryOp::Div;
      if (!is_signed) return wrapping(dtype, is_div ? ux / uy : ux % uy);
      if (y == -1) return is_div ? wrapping(dtype, std::uint64_t{0} - ux) : 0;  // INT_MIN / -1 wraps
      return wrap(dtype, is_div ? x / y : x % y);
    }
    case BinaryOp::Max: return is_signed ? std::max(x, y) : wrapping(dtype, std::max(ux, uy));
    case BinaryOp::Min: return is_signed ? std::min(x, y) : wrapping(dtype, std::min(ux, uy));
    case BinaryOp::And: case BinaryOp::BitAnd: return wrapping(dtype, ux & uy);
    case BinaryOp::Or: case BinaryOp::BitOr: return wrapping(dtype, ux | uy);
    case BinaryOp::BitXor: return wrapping(dtype, ux ^ uy);
    case BinaryOp::Shl: return dtype == DType::Bool ? std::nullopt : std::optional(wrapping(dtype, ux << shift));
    case BinaryOp::Shr:
      if (dtype == DType::Bool) return std::nullopt;
      return is_signed ? wrap(dtype, x >> shift) : wrapping(dtype, ux >> shift);
    case BinaryOp::CmpLt: return is_signed ? x < y : ux < uy;
    case BinaryOp::CmpGt: return is_signed ? x > y : ux > uy;
    case BinaryOp::Eq: return x == y;
    case BinaryOp::NotEq: return x != y;
    default: return std::nullopt;
  }
}

std::optional<std::int64_t> fold(const Kernel& kernel, ValueId id, int depth) {
  if (id >= kernel.size() || depth > kMaxExpressionDepth) return std::nullopt;
  const Op& op = kernel[id];
  if (op.lanes != 1 || !(is_int(op.dtype) || op.dtype == DType::Bool)) return std::nullopt;
  auto operand = [&](std::size_t i) -> std::optional<std::int64_t> {
    if (!valid_operand(kernel, id, op.src[i])) return std::nullopt;
    return fold(kernel, op.src[i], depth + 1);
  };
  switch (op.kind) {
    case OpKind::Const:
      return decode_int(op.dtype, op.imm);
    case OpKind::Cast: {
      const auto x = operand(0);  // nullopt for float sources: not an integer expression
      return x ? std::optional(wrap(op.dtype, *x)) : std::nullopt;
    }
    case OpKind::Unary: {
      const auto x = operand(0);
      if (!x) return std::nullopt;
      switch (op.unary()) {
        case UnaryOp::Neg: return op.dtype == DType::Bool ? std::nullopt : std::optional(wrapping(op.dtype, 0 - static_cast<std::uint64_t>(*x)));
        case UnaryOp::Abs: return op.dtype == DType::Bool ? std::nullopt : std::optional(*x < 0 ? wrapping(op.dtype, 0 - static_cast<std::uint64_t>(*x)) : *x);
        case UnaryOp::BitNot: return op.dtype == DType::Bool ? (*x == 0 ? 1 : 0) : wrap(op.dtype, ~*x);
        default: return std::nullopt;
      }
    }
    case OpKind::Binary: {
      const auto x = operand(0);
      const auto y = operand(1);
      if (!x || !y || kernel[op.src[0]].dtype != kernel[op.src[1]].dtype) return std::nullopt;
      return integer_binary(op.binary(), kernel[op.src[0]].dtype, *x, *y);
    }
    default:
      return std::nullopt;
  }
}

using Terms = std::map<ValueId, std::int64_t>;

bool add_scaled(AffineForm& into, const AffineForm& from, std::int64_t scale) {
  std::int64_t c = 0;
  if (__builtin_mul_overflow(from.constant, scale, &c) || __builtin_add_overflow(into.constant, c, &into.constant))
    return false;
  Terms merged(into.terms.begin(), into.terms.end());
  for (const auto& [atom, coefficient] : from.terms) {
    std::int64_t scaled = 0;
    if (__builtin_mul_overflow(coefficient, scale, &scaled) || __builtin_add_overflow(merged[atom], scaled, &merged[atom]))
      return false;
  }
  into.terms.clear();
  for (const auto& [atom, coefficient] : merged)
    if (coefficient != 0) into.terms.emplace_back(atom, coefficient);
  return true;
}

std::optional<AffineForm> affine(const Kernel& kernel, ValueId id, int depth) {
  if (id >= kernel.size()) return std::nullopt;
  const Op& op = kernel[id];
  if (op.dtype != DType::I64 || op.lanes != 1 || !op.has_result()) return std::nullopt;
  AffineForm atom;
  atom.terms.emplace_back(id, 1);
  if (op.kind == OpKind::Const) return AffineForm{decode_int(DType::I64, op.imm), {}};
  if (depth > kMaxExpressionDepth) return atom;
  auto sub = [&](std::size_t i) -> std::optional<AffineForm> {
    if (!valid_operand(kernel, id, op.src[i])) return std::nullopt;
    return affine(kernel, op.src[i], depth + 1);
  };
  auto combine = [&](std::initializer_list<std::pair<std::optional<AffineForm>, std::int64_t>> parts)
      -> std::optional<AffineForm> {
    AffineForm sum;
    for (const auto& [part, scale] : parts)
      if (!part || !add_scaled(sum, *part, scale)) return std::nullopt;
    return sum;
  };
  if (op.kind == OpKind::Unary && op.unary() == UnaryOp::Neg) return combine({{sub(0), -1}});
  if (op.kind != OpKind::Binary) return atom;
  switch (op.binary()) {
    case BinaryOp::Add: return combine({{sub(0), 1}, {sub(1), 1}});
    case BinaryOp::Sub: return combine({{sub(0), 1}, {sub(1), -1}});
    case BinaryOp::Mul: {
      if (!valid_operand(kernel, id, op.src[0]) || !valid_operand(kernel, id, op.src[1])) return std::nullopt;
      if (auto c = constant_int(kernel, op.src[1])) return combine({{sub(0), *c}});
      if (auto c = constant_int(kernel, op.src[0])) return combine({{sub(1), *c}});
      return atom;
    }
    case BinaryOp::Shl: {
      const auto s = valid_operand(kernel, id, op.src[1]) ? constant_int(kernel, op.src[1]) : std::nullopt;
      if (s && *s >= 0 && *s < 63) return combine({{sub(0), std::int64_t{1} << *s}});
      return atom;
    }
    default:
      return atom;
  }
}

}  // namespace

bool Blocks::encloses(ValueId block, ValueId id) const {
  if (id >= parent.size()) return false;
  for (ValueId p = parent[id]; p != kNoValue; p = parent[p])
    if (p == block) return true;
  return false;
}

ValueId Blocks::value_block(const Kernel& kernel, ValueId id) const {
  if (id >= parent.size()) return kNoValue;
  return kernel[id].kind == OpKind::Loop ? id : parent[id];
}

Blocks analyze_blocks(const Kernel& kernel) {
  const std::size_t n = kernel.size();
  Blocks blocks;
  blocks.parent.assign(n, kNoValue);
  blocks.end.assign(n, kNoValue);
  blocks.depth.assign(n, 0);
  blocks.loop_depth.assign(n, 0);
  std::vector<ValueId> open;
  std::uint32_t loops_open = 0;
  for (ValueId id = 0; id < n; ++id) {
    const Op& op = kernel[id];
    blocks.parent[id] = open.empty() ? kNoValue : open.back();
    blocks.depth[id] = static_cast<std::uint32_t>(open.size());
    blocks.loop_depth[id] = loops_open;
    if ((op.kind == OpKind::EndLoop || op.kind == OpKind::EndIf) && !open.empty()) {
      blocks.end[open.back()] = id;
      if (kernel[open.back()].kind == OpKind::Loop) --loops_open;
      open.pop_back();
    }
    if (op.kind == OpKind::Loop || op.kind == OpKind::If) {
      open.push_back(id);
      if (op.kind == OpKind::Loop) ++loops_open;
    }
  }
  return blocks;
}

std::vector<std::uint32_t> use_counts(const Kernel& kernel) {
  std::vector<std::uint32_t> counts(kernel.size(), 0);
  for (const Op& op : kernel.ops)
    for (ValueId v : op.operands())
      if (v < counts.size()) ++counts[v];
  return counts;
}

std::vector<bool> loop_invariant_values(const Kernel& kernel, const Blocks& blocks, ValueId loop) {
  const std::size_t n = kernel.size();
  std::vector<bool> written_in_loop(n, false);
  for (ValueId id = 0; id < n; ++id) {
    const Op& op = kernel[id];
    if (op.kind == OpKind::Store && op.src[0] < n && blocks.encloses(loop, id)) written_in_loop[op.src[0]] = true;
  }
  std::vector<bool> invariant(n, false);
  for (ValueId id = 0; id < n; ++id) {
    const Op& op = kernel[id];
    if (!op.has_result() || id == loop) continue;
    if (!blocks.encloses(loop, id)) {
      invariant[id] = true;
      continue;
    }
    bool operands_invariant = true;
    for (ValueId v : op.operands()) operands_invariant = operands_invariant && valid_operand(kernel, id, v) && invariant[v];
    switch (op.kind) {
      case OpKind::Const:
        invariant[id] = true;
        break;
      case OpKind::Unary: case OpKind::Binary: case OpKind::Cast: case OpKind::Mad: case OpKind::Select:
      case OpKind::Broadcast: case OpKind::Insert: case OpKind::Extract:
        invariant[id] = operands_invariant;
        break;
      case OpKind::Load:
        invariant[id] = operands_invariant && !written_in_loop[op.src[0]];
        break;
      default:
        break;
    }
  }
  return invariant;
}

bool is_loop_invariant(const Kernel& kernel, ValueId value, ValueId loop) {
  if (value >= kernel.size()) return false;
  return loop_invariant_values(kernel, analyze_blocks(kernel), loop)[value];
}

std::optional<std::int64_t> constant_int(const Kernel& kernel, ValueId id) { return fold(kernel, id, 0); }

std::optional<double> constant_double(const Kernel& kernel, ValueId id) {
  if (id < kernel.size() && kernel[id].kind == OpKind::Const && kernel[id].lanes == 1 && dtype_valid(kernel[id].dtype))
    return decode_double(kernel[id].dtype, kernel[id].imm);
  if (auto value = constant_int(kernel, id)) {
    if (kernel[id].dtype == DType::U64) return static_cast<double>(static_cast<std::uint64_t>(*value));
    return static_cast<double>(*value);
  }
  return std::nullopt;
}

std::optional<AffineForm> affine_form(const Kernel& kernel, ValueId id) { return affine(kernel, id, 0); }

std::optional<std::pair<std::int64_t, std::int64_t>> atom_range(const Kernel& kernel, ValueId id) {
  if (id >= kernel.size()) return std::nullopt;
  const Op& op = kernel[id];
  if (op.kind != OpKind::Index && op.kind != OpKind::Loop) return std::nullopt;
  if (!valid_operand(kernel, id, op.src[0])) return std::nullopt;
  const auto length = constant_int(kernel, op.src[0]);
  if (!length || *length <= 0) return std::nullopt;
  return std::pair<std::int64_t, std::int64_t>{0, *length - 1};
}

std::vector<bool> thread_varying(const Kernel& kernel, const Blocks& blocks) {
  const std::size_t n = kernel.size();
  std::vector<bool> varying(n, false);
  std::vector<bool> tainted(n, false);  // memory written with thread-dependent data
  auto control_varies = [&](ValueId id) {
    for (ValueId p = blocks.parent[id]; p != kNoValue; p = blocks.parent[p]) {
      const ValueId controller = kernel[p].src[0];
      if (controller < n && varying[controller]) return true;
    }
    return false;
  };
  // Taint only grows, so this settles within (number of memories + 1) rounds.
  for (bool changed = true; changed;) {
    changed = false;
    for (ValueId id = 0; id < n; ++id) {
      const Op& op = kernel[id];
      bool any_operand = false;
      for (ValueId v : op.operands()) any_operand = any_operand || (v < n && varying[v]);
      if (op.kind == OpKind::Index) {
        varying[id] = op.scope() == Scope::Local || any_operand;
      } else if (op.kind == OpKind::Load) {
        varying[id] = any_operand || (op.src[0] < n && tainted[op.src[0]]);
      } else if (op.kind == OpKind::Store) {
        if (op.src[0] < n && !tainted[op.src[0]] && (any_operand || control_varies(id))) {
          tainted[op.src[0]] = true;
          changed = true;
        }
      } else if (op.has_result()) {
        varying[id] = any_operand;
      }
    }
  }
  return varying;
}

}  // namespace kiln::ir
