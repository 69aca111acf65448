#include "value_range.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace kiln::passes::detail {

using ir::BinaryOp;
using ir::DType;
using ir::OpKind;
using ir::ValueId;
using Maybe = std::optional<Range>;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

Maybe add(const Range& a, const Range& b) {
  Range r;
  if (__builtin_add_overflow(a.lo, b.lo, &r.lo) || __builtin_add_overflow(a.hi, b.hi, &r.hi)) return std::nullopt;
  return r;
}

Maybe negate(const Range& a) {
  if (a.lo == kMin) return std::nullopt;
  return Range{-a.hi, -a.lo};
}

Maybe multiply(const Range& a, const Range& b) {
  std::array<std::int64_t, 4> corners{};
  const std::array<std::pair<std::int64_t, std::int64_t>, 4> pairs = {
      {{a.lo, b.lo}, {a.lo, b.hi}, {a.hi, b.lo}, {a.hi, b.hi}}};
  for (std::size_t i = 0; i < 4; ++i)
    if (__builtin_mul_overflow(pairs[i].first, pairs[i].second, &corners[i])) return std::nullopt;
  return Range{*std::min_element(corners.begin(), corners.end()), *std::max_element(corners.begin(), corners.end())};
}

// The range of an integer dtype narrower than i64 (what a cast from it gives).
Maybe dtype_range(DType dtype) {
  switch (dtype) {
    case DType::Bool: return Range{0, 1};
    case DType::U8: return Range{0, 0xff};
    case DType::U16: return Range{0, 0xffff};
    case DType::U32: return Range{0, 0xffffffffll};
    case DType::I8: return Range{-128, 127};
    case DType::I16: return Range{-32768, 32767};
    case DType::I32: return Range{std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    default: return std::nullopt;
  }
}

}  // namespace

Maybe op_range(const ir::Kernel& kernel, ValueId id, const RangeOf& of_operand) {
  const ir::Op& op = kernel[id];
  if (op.dtype != DType::I64 || op.lanes != 1 || !op.has_result()) return std::nullopt;
  auto of = [&](ValueId v) -> Maybe { return v < id ? of_operand(v) : std::nullopt; };
  auto constant = [&](ValueId v) -> std::optional<std::int64_t> {
    const Maybe r = of(v);
    return r && r->lo == r->hi ? std::optional(r->lo) : std::nullopt;
  };
  const Maybe x = op.operand_count() > 0 ? of(op.src[0]) : std::nullopt;
  const Maybe y = op.operand_count() > 1 ? of(op.src[1]) : std::nullopt;
  // MIN and MAX bound their result by one known operand even when the other
  // is unknown (any i64): the clamps the bounds guard writes rely on it.
  const Range any{kMin, kMax};
  Maybe r;
  switch (op.kind) {
    case OpKind::Const:
      r = Range{ir::decode_int(DType::I64, op.imm), ir::decode_int(DType::I64, op.imm)};
      break;
    case OpKind::Index: case OpKind::Loop: {
      // [0, length - 1]; unbounded above when the length is unknown (a
      // loop with count <= 0 never produces a counter value).
      const Maybe length = x;
      r = Range{0, length && length->hi >= 1 ? length->hi - 1 : kMax - 1};
      if (length && length->hi < 1) r = Range{0, 0};
      break;
    }
    case OpKind::Cast:
      if (op.src[0] < id) r = dtype_range(kernel[op.src[0]].dtype);
      if (op.src[0] < id && kernel[op.src[0]].dtype == DType::I64) r = x;
      break;
    case OpKind::Unary:
      if (op.unary() == ir::UnaryOp::Neg && x) r = negate(*x);
      if (op.unary() == ir::UnaryOp::Abs && x && x->lo > kMin)
        r = x->lo >= 0 ? *x : x->hi <= 0 ? *negate(*x) : Range{0, std::max(-x->lo, x->hi)};
      break;
    case OpKind::Mad:
      if (x && y) {
        const Maybe product = multiply(*x, *y);
        const Maybe z = of(op.src[2]);
        if (product && z) r = add(*product, *z);
      }
      break;
    case OpKind::Select: {
      const Maybe z = of(op.src[2]);
      if (y && z) r = Range{std::min(y->lo, z->lo), std::max(y->hi, z->hi)};
      break;
    }
    case OpKind::Binary: {
      const auto c = constant(op.src[1]);
      switch (op.binary()) {
        case BinaryOp::Add:
          if (x && y) r = add(*x, *y);
          break;
        case BinaryOp::Sub:
          if (x && y)
            if (const Maybe minus = negate(*y)) r = add(*x, *minus);
          break;
        case BinaryOp::Mul:
          if (x && y) r = multiply(*x, *y);
          break;
        case BinaryOp::Div:  // truncation is monotone in x for a positive divisor
          if (x && c && *c > 0) r = Range{x->lo / *c, x->hi / *c};
          break;
        case BinaryOp::Mod:
          if (c && *c > 0) {
            const std::int64_t m = *c - 1;
            if (x && x->lo >= 0) r = Range{0, std::min(x->hi, m)};
            else if (x && x->hi <= 0) r = Range{std::max(x->lo, -m), 0};
            else r = Range{-m, m};
          }
          break;
        case BinaryOp::Shr:  // arithmetic shift is monotone
          if (x && c && *c >= 0 && *c < 64) r = Range{x->lo >> *c, x->hi >> *c};
          break;
        case BinaryOp::Shl:
          if (x && c && *c >= 0 && *c < 63) r = multiply(*x, Range{std::int64_t{1} << *c, std::int64_t{1} << *c});
          break;
        case BinaryOp::BitAnd: case BinaryOp::And: {
          // x & m with m >= 0 lies in [0, m] (and below x when x >= 0).
          const auto m = c ? c : constant(op.src[0]);
          const Maybe other = c ? x : y;
          if (m && *m >= 0) r = Range{0, other && other->lo >= 0 ? std::min(*m, other->hi) : *m};
          break;
        }
        case BinaryOp::Max:
          if (x || y) r = Range{std::max(x.value_or(any).lo, y.value_or(any).lo), std::max(x.value_or(any).hi, y.value_or(any).hi)};
          break;
        case BinaryOp::Min:
          if (x || y) r = Range{std::min(x.value_or(any).lo, y.value_or(any).lo), std::min(x.value_or(any).hi, y.value_or(any).hi)};
          break;
        default:
          break;
      }
      break;
    }
    default:
      break;
  }
  if (r && r->lo == kMin && r->hi == kMax) return std::nullopt;  // "any i64" is what unknown means
  return r;
}

std::vector<Maybe> integer_ranges(const ir::Kernel& kernel) {
  std::vector<Maybe> ranges(kernel.size());
  const RangeOf of = [&](ValueId v) { return ranges[v]; };
  for (ValueId id = 0; id < kernel.size(); ++id) ranges[id] = op_range(kernel, id, of);
  return ranges;
}

}  // namespace kiln::passes::detail
