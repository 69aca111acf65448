// The division rules of simplify_algebra (see algebra_rules.hpp).
//
// For x >= 0 written in affine form as M + R, where every coefficient of
// M (and its constant) is a multiple of c and R >= 0:
//   x / c = M/c + R/c     and     x % c = R % c
// (floor and truncation agree on non-negative values, and M/c is exact).
// When also R < c, R/c is 0 and R % c is R. The ranges of x and of every
// atom are known and the emitted sums cannot overflow, so the rewrite holds
// for the wrapping arithmetic the kernel performs, not just for integers.
#include "algebra_rules.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"

#include <cstdlib>

namespace kiln::passes::detail {

using ir::BinaryOp;
using ir::DType;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

namespace {

using Terms = std::vector<std::pair<ValueId, std::int64_t>>;

bool power_of_two(std::int64_t c) { return c > 0 && (c & (c - 1)) == 0; }
int log2_of(std::int64_t c) { return __builtin_ctzll(static_cast<unsigned long long>(c)); }

// What the op divides by: a Div/Mod by a positive constant, or a SHR / a
// BIT_AND mask that acts as one on a non-negative x.
struct Division {
  bool is_mod = false;
  std::int64_t divisor = 0;
  ValueId x = ir::kNoValue;
};

std::optional<Division> as_division(const AlgebraContext& c, const ir::Op& op) {
  if (op.kind != OpKind::Binary || op.lanes != 1) return std::nullopt;
  const auto y = ir::constant_int(c.kernel, op.src[1]);
  switch (op.binary()) {
    case BinaryOp::Div: case BinaryOp::Mod:
      if (y && *y > 0) return Division{op.binary() == BinaryOp::Mod, *y, op.src[0]};
      return std::nullopt;
    case BinaryOp::Shr:
      if (y && *y >= 1 && *y <= 62) return Division{false, std::int64_t{1} << *y, op.src[0]};
      return std::nullopt;
    case BinaryOp::BitAnd:
      if (y && *y >= 1 && *y < INT64_MAX && power_of_two(*y + 1)) return Division{true, *y + 1, op.src[0]};
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// sum(coefficient * atom) + constant, emitted with the fewest ops.
Value emit_affine(const AlgebraContext& c, const Terms& terms, std::int64_t constant) {
  ir::Builder& b = c.rw.out();
  Value sum;
  for (const auto& [atom, coefficient] : terms) {
    Value term = c.rw.map(atom);
    if (coefficient != 1) {
      const Value factor = b.constant_i64(coefficient);
      term = b.mul(term, factor);
    }
    sum = sum.valid() ? b.add(sum, term) : term;
  }
  if (constant != 0 || !sum.valid()) {
    const Value k = b.constant_i64(constant);
    sum = sum.valid() ? b.add(sum, k) : k;
  }
  return sum;
}

// The range of sum(coefficient * atom) + constant, when every atom's range
// is known and nothing overflows; also bounds every partial sum, so that
// emit_affine's intermediate values cannot wrap either.
std::optional<Range> affine_range(const AlgebraContext& c, const Terms& terms, std::int64_t constant) {
  Range total{constant, constant};
  std::int64_t magnitude = std::abs(constant == INT64_MIN ? INT64_MAX : constant);
  for (const auto& [atom, coefficient] : terms) {
    const auto& r = c.ranges[atom];
    if (!r) return std::nullopt;
    std::int64_t a = 0, b = 0, big = 0;
    if (__builtin_mul_overflow(coefficient, r->lo, &a) || __builtin_mul_overflow(coefficient, r->hi, &b)) return std::nullopt;
    if (__builtin_add_overflow(total.lo, std::min(a, b), &total.lo) || __builtin_add_overflow(total.hi, std::max(a, b), &total.hi))
      return std::nullopt;
    if (a == INT64_MIN || b == INT64_MIN || __builtin_add_overflow(magnitude, std::max(std::abs(a), std::abs(b)), &big))
      return std::nullopt;
    magnitude = big;
  }
  return total;
}

std::optional<Value> split_affine(const AlgebraContext& c, const Division& d) {
  const auto& x_range = c.ranges[d.x];
  if (!x_range || x_range->lo < 0) return std::nullopt;
  const auto form = ir::affine_form(c.kernel, d.x);
  if (!form) return std::nullopt;
  Terms quotient, remainder;  // M / c and R
  for (const auto& [atom, coefficient] : form->terms) {
    if (coefficient % d.divisor == 0) quotient.emplace_back(atom, coefficient / d.divisor);
    else remainder.emplace_back(atom, coefficient);
  }
  std::int64_t q0 = form->constant / d.divisor;  // floor division of the constant
  std::int64_t r0 = form->constant % d.divisor;
  if (r0 < 0) {
    r0 += d.divisor;
    --q0;
  }
  const auto r_range = affine_range(c, remainder, r0);
  if (!r_range || r_range->lo < 0 || !affine_range(c, quotient, q0)) return std::nullopt;
  const bool remainder_small = r_range->hi < d.divisor;
  const bool splits = !quotient.empty() || q0 != 0;
  if (!splits && !remainder_small) return std::nullopt;
  ir::Builder& b = c.rw.out();
  if (d.is_mod) {
    if (!splits) return c.rw.map(d.x);  // 0 <= x < c
    const Value r = emit_affine(c, remainder, r0);
    if (remainder_small) return r;
    const Value divisor = b.constant_i64(d.divisor);
    return b.mod(r, divisor);
  }
  if (!splits) return b.constant_i64(0);
  const Value whole = emit_affine(c, quotient, q0);
  if (remainder_small) return whole;
  const Value r = emit_affine(c, remainder, r0);
  const Value divisor = b.constant_i64(d.divisor);
  const Value part = b.div(r, divisor);
  return b.add(whole, part);
}

// x / 2^k -> x >> k and x % 2^k -> x & (2^k - 1) for x >= 0 (i64 with a
// known range, or any unsigned type).
std::optional<Value> to_shift_or_mask(const AlgebraContext& c, const ir::Op& op) {
  if (op.kind != OpKind::Binary || op.lanes != 1) return std::nullopt;
  if (op.binary() != BinaryOp::Div && op.binary() != BinaryOp::Mod) return std::nullopt;
  const DType dtype = op.dtype;
  const bool non_negative = (dtype == DType::I64 && c.ranges[op.src[0]] && c.ranges[op.src[0]]->lo >= 0) ||
                            (ir::is_int(dtype) && !ir::is_signed_int(dtype));
  const auto y = ir::constant_int(c.kernel, op.src[1]);
  if (!non_negative || !y || !power_of_two(*y) || *y == 1) return std::nullopt;
  ir::Builder& b = c.rw.out();
  const bool is_div = op.binary() == BinaryOp::Div;
  const Value amount = b.constant_bits(dtype, ir::encode_int(dtype, is_div ? log2_of(*y) : *y - 1));
  return b.binary(is_div ? BinaryOp::Shr : BinaryOp::BitAnd, c.rw.map(op.src[0]), amount);
}

}  // namespace

std::optional<ir::Value> simplify_division(const AlgebraContext& context, ir::ValueId id) {
  const ir::Op& op = context.kernel[id];
  if (op.dtype == DType::I64)
    if (const auto division = as_division(context, op))
      if (auto split = split_affine(context, *division)) return split;
  return to_shift_or_mask(context, op);
}

}  // namespace kiln::passes::detail
