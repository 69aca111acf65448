#include <kiln/sdk/integer_ranges.hpp>

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <array>
#include <limits>

namespace kiln::sdk {

namespace {

using Maybe = std::optional<IntRange>;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

Maybe add(const IntRange& a, const IntRange& b) {
  IntRange r;
  if (__builtin_add_overflow(a.lo, b.lo, &r.lo) || __builtin_add_overflow(a.hi, b.hi, &r.hi)) return std::nullopt;
  return r;
}

Maybe negate(const IntRange& a) {
  if (a.lo == kMin) return std::nullopt;
  return IntRange{-a.hi, -a.lo};
}

Maybe multiply(const IntRange& a, const IntRange& b) {
  std::array<std::int64_t, 4> corners{};
  const std::array<std::pair<std::int64_t, std::int64_t>, 4> pairs = {
      {{a.lo, b.lo}, {a.lo, b.hi}, {a.hi, b.lo}, {a.hi, b.hi}}};
  for (std::size_t i = 0; i < 4; ++i)
    if (__builtin_mul_overflow(pairs[i].first, pairs[i].second, &corners[i])) return std::nullopt;
  return IntRange{*std::min_element(corners.begin(), corners.end()), *std::max_element(corners.begin(), corners.end())};
}

// The range of an integer dtype narrower than i64 (what a cast from it gives).
Maybe dtype_range(unsigned dtype) {
  switch (dtype) {
    case KILN_DTYPE_BOOL: return IntRange{0, 1};
    case KILN_DTYPE_U8: return IntRange{0, 0xff};
    case KILN_DTYPE_U16: return IntRange{0, 0xffff};
    case KILN_DTYPE_U32: return IntRange{0, 0xffffffffll};
    case KILN_DTYPE_I8: return IntRange{-128, 127};
    case KILN_DTYPE_I16: return IntRange{-32768, 32767};
    case KILN_DTYPE_I32:
      return IntRange{std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    default: return std::nullopt;
  }
}

}  // namespace

Maybe product_range(const Maybe& a, const Maybe& b) { return a && b ? multiply(*a, *b) : std::nullopt; }

Maybe op_range(std::span<const kiln_op> ops, std::uint32_t id, const RangeOf& of_operand) {
  const kiln_op& op = ops[id];
  if (op.dtype != KILN_DTYPE_I64 || op.lanes != 1) return std::nullopt;
  auto of = [&](std::uint32_t v) -> Maybe { return v < id ? of_operand(v) : std::nullopt; };
  auto constant = [&](std::uint32_t v) -> std::optional<std::int64_t> {
    const Maybe r = of(v);
    return r && r->lo == r->hi ? std::optional(r->lo) : std::nullopt;
  };
  const unsigned operands = operand_count(op.kind);
  const Maybe x = operands > 0 ? of(op.src[0]) : std::nullopt;
  const Maybe y = operands > 1 ? of(op.src[1]) : std::nullopt;
  // MIN and MAX bound their result by one known operand even when the other
  // is unknown (any i64): the clamps the bounds guard writes rely on it.
  const IntRange any{kMin, kMax};
  Maybe r;
  switch (op.kind) {
    case KILN_OP_CONST:
      r = IntRange{int_from_bits(op.imm, KILN_DTYPE_I64), int_from_bits(op.imm, KILN_DTYPE_I64)};
      break;
    case KILN_OP_INDEX: case KILN_OP_LOOP: {
      // [0, length - 1]; unbounded above when the length is unknown (a
      // loop with count <= 0 never produces a counter value).
      const Maybe length = x;
      r = IntRange{0, length && length->hi >= 1 ? length->hi - 1 : kMax - 1};
      if (length && length->hi < 1) r = IntRange{0, 0};
      break;
    }
    case KILN_OP_CAST:
      if (op.src[0] < id) r = ops[op.src[0]].dtype == KILN_DTYPE_I64 ? x : dtype_range(ops[op.src[0]].dtype);
      break;
    case KILN_OP_UNARY:
      if (op.code == KILN_UNARY_NEG && x) r = negate(*x);
      if (op.code == KILN_UNARY_ABS && x && x->lo > kMin)
        r = x->lo >= 0 ? *x : x->hi <= 0 ? *negate(*x) : IntRange{0, std::max(-x->lo, x->hi)};
      break;
    case KILN_OP_MAD:
      if (const Maybe product = product_range(x, y)) {
        const Maybe z = of(op.src[2]);
        if (z) r = add(*product, *z);
      }
      break;
    case KILN_OP_SELECT: {
      const Maybe z = of(op.src[2]);
      if (y && z) r = IntRange{std::min(y->lo, z->lo), std::max(y->hi, z->hi)};
      break;
    }
    case KILN_OP_BINARY: {
      const auto c = constant(op.src[1]);
      switch (op.code) {
        case KILN_BINARY_ADD:
          if (x && y) r = add(*x, *y);
          break;
        case KILN_BINARY_SUB:
          if (x && y)
            if (const Maybe minus = negate(*y)) r = add(*x, *minus);
          break;
        case KILN_BINARY_MUL:
          r = product_range(x, y);
          break;
        case KILN_BINARY_DIV:  // truncation is monotone in x for a positive divisor
          if (x && c && *c > 0) r = IntRange{x->lo / *c, x->hi / *c};
          break;
        case KILN_BINARY_MOD:
          if (c && *c > 0) {
            const std::int64_t m = *c - 1;
            if (x && x->lo >= 0) r = IntRange{0, std::min(x->hi, m)};
            else if (x && x->hi <= 0) r = IntRange{std::max(x->lo, -m), 0};
            else r = IntRange{-m, m};
          }
          break;
        case KILN_BINARY_SHR:  // arithmetic shift is monotone
          if (x && c && *c >= 0 && *c < 64) r = IntRange{x->lo >> *c, x->hi >> *c};
          break;
        case KILN_BINARY_SHL:
          if (x && c && *c >= 0 && *c < 63)
            r = multiply(*x, IntRange{std::int64_t{1} << *c, std::int64_t{1} << *c});
          break;
        case KILN_BINARY_BIT_AND: case KILN_BINARY_AND: {
          // x & m with m >= 0 lies in [0, m] (and below x when x >= 0).
          const auto m = c ? c : constant(op.src[0]);
          const Maybe other = c ? x : y;
          if (m && *m >= 0) r = IntRange{0, other && other->lo >= 0 ? std::min(*m, other->hi) : *m};
          break;
        }
        case KILN_BINARY_MAX:
          if (x || y)
            r = IntRange{std::max(x.value_or(any).lo, y.value_or(any).lo), std::max(x.value_or(any).hi, y.value_or(any).hi)};
          break;
        case KILN_BINARY_MIN:
          if (x || y)
            r = IntRange{std::min(x.value_or(any).lo, y.value_or(any).lo), std::min(x.value_or(any).hi, y.value_or(any).hi)};
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

std::vector<Maybe> integer_ranges(std::span<const kiln_op> ops) {
  std::vector<Maybe> ranges(ops.size());
  const RangeOf of = [&](std::uint32_t v) { return ranges[v]; };
  for (std::uint32_t id = 0; id < ops.size(); ++id) ranges[id] = op_range(ops, id, of);
  return ranges;
}

}  // namespace kiln::sdk
