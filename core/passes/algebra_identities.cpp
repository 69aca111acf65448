// The identity rules of simplify_algebra (see algebra_rules.hpp).
#include "algebra_rules.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "patterns.hpp"

#include <cmath>

namespace kiln::passes::detail {

using ir::BinaryOp;
using ir::DType;
using ir::OpKind;
using ir::UnaryOp;
using ir::Value;
using ir::ValueId;

namespace {

bool integral(DType dtype) { return ir::is_int(dtype) || dtype == DType::Bool; }

// A scalar CONST, or a BROADCAST of one: its op (to read exact bits).
const ir::Op* splat_op(const ir::Kernel& kernel, ValueId id) {
  if (id >= kernel.size()) return nullptr;
  if (kernel[id].kind == OpKind::Broadcast) id = kernel[id].src[0];
  return id < kernel.size() && kernel[id].kind == OpKind::Const ? &kernel[id] : nullptr;
}

bool is_zero_with_sign(const ir::Kernel& kernel, ValueId id, bool negative) {
  const ir::Op* c = splat_op(kernel, id);
  if (c == nullptr || !ir::is_float(c->dtype)) return false;
  const double v = ir::decode_double(c->dtype, c->imm);
  return v == 0 && std::signbit(v) == negative;
}

class Rules {
 public:
  Rules(const AlgebraContext& context, ValueId id) : c_(context), op_(context.kernel[id]) {}

  std::optional<Value> run() {
    switch (op_.kind) {
      case OpKind::Unary: return unary();
      case OpKind::Cast:
        if (operand_type(0) == ir::ValueType{op_.dtype, op_.lanes}) return old(op_.src[0]);
        return std::nullopt;
      case OpKind::Select:
        if (op_.src[1] == op_.src[2]) return old(op_.src[1]);
        return std::nullopt;
      case OpKind::Binary: return binary();
      default: return std::nullopt;
    }
  }

 private:
  const ir::Kernel& k() const { return c_.kernel; }
  Value old(ValueId v) const { return c_.rw.map(v); }
  ir::Builder& b() const { return c_.rw.out(); }
  ir::ValueType operand_type(std::size_t i) const {
    const ValueId v = op_.src[i];
    return v < k().size() ? ir::ValueType{k()[v].dtype, k()[v].lanes} : ir::ValueType{};
  }
  std::optional<double> constant(std::size_t i) const { return splat_constant(k(), op_.src[i]); }
  bool constant_is(std::size_t i, double value) const { return constant(i) == value; }
  const std::optional<Range>& range(std::size_t i) const { return c_.ranges[op_.src[i]]; }

  // A constant of the op's result type (a broadcast for vectors).
  Value splat_int(DType dtype, std::int64_t value) const {
    const Value scalar = b().constant_bits(dtype, ir::encode_int(dtype, value));
    return op_.lanes == 1 ? scalar : b().broadcast(scalar, op_.lanes);
  }
  Value negated(ValueId v) const { return b().neg(old(v)); }

  std::optional<Value> unary() {
    const ValueId x = op_.src[0];
    if (x >= k().size() || k()[x].kind != OpKind::Unary) return std::nullopt;
    const bool involution = op_.unary() == UnaryOp::Neg || op_.unary() == UnaryOp::BitNot;
    if (involution && k()[x].code == op_.code) return old(k()[x].src[0]);  // --x, ~~x
    return std::nullopt;
  }

  std::optional<Value> binary() {
    const ValueId x = op_.src[0];
    const ValueId y = op_.src[1];
    const DType dtype = operand_type(0).dtype;
    const bool is_integral = integral(dtype);
    const bool same = x == y;
    switch (op_.binary()) {
      case BinaryOp::Add:
        if (is_integral ? constant_is(1, 0) : is_zero_with_sign(k(), y, true)) return old(x);
        if (is_integral ? constant_is(0, 0) : is_zero_with_sign(k(), x, true)) return old(y);
        return reassociate(BinaryOp::Add);
      case BinaryOp::Sub:
        if (is_integral ? constant_is(1, 0) : is_zero_with_sign(k(), y, false)) return old(x);
        if (is_integral && same) return splat_int(dtype, 0);
        if (is_integral && op_.lanes == 1) {  // x - c -> x + (-c): one shape for constant offsets
          if (const auto c = ir::constant_int(k(), y)) {
            const Value minus = b().constant_bits(dtype, ir::encode_int(dtype, static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(*c))));
            return b().add(old(x), minus);
          }
        }
        return std::nullopt;
      case BinaryOp::Mul:
        if (constant_is(1, 1)) return old(x);
        if (constant_is(0, 1)) return old(y);
        if (is_integral && (constant_is(1, 0) || constant_is(0, 0))) return splat_int(dtype, 0);
        if (constant_is(1, -1)) return negated(x);
        if (constant_is(0, -1)) return negated(y);
        return reassociate(BinaryOp::Mul);
      case BinaryOp::Div:
        if (constant_is(1, 1)) return old(x);
        if (constant_is(1, -1)) return negated(x);
        if (!is_integral) return divide_by_power_of_two(dtype);
        return std::nullopt;
      case BinaryOp::Mod:
        if (is_integral && (constant_is(1, 1) || constant_is(1, -1))) return splat_int(dtype, 0);
        return std::nullopt;
      case BinaryOp::Max: case BinaryOp::Min:
        if (same) return old(x);
        return decided_min_max();
      case BinaryOp::And: case BinaryOp::BitAnd:
        if (same) return old(x);
        if (constant_is(1, 0) || constant_is(0, 0)) return splat_int(dtype, 0);
        if (dtype == DType::Bool && constant_is(1, 1)) return old(x);
        if (dtype == DType::Bool && constant_is(0, 1)) return old(y);
        return std::nullopt;
      case BinaryOp::Or: case BinaryOp::BitOr:
        if (same || constant_is(1, 0)) return old(x);
        if (constant_is(0, 0)) return old(y);
        if (dtype == DType::Bool && (constant_is(1, 1) || constant_is(0, 1))) return splat_int(DType::Bool, 1);
        return std::nullopt;
      case BinaryOp::BitXor:
        if (constant_is(1, 0)) return old(x);
        if (constant_is(0, 0)) return old(y);
        if (same) return splat_int(dtype, 0);
        return std::nullopt;
      case BinaryOp::Shl: case BinaryOp::Shr:
        if (constant_is(1, 0)) return old(x);
        return std::nullopt;
      case BinaryOp::Eq: case BinaryOp::NotEq: case BinaryOp::CmpLt: case BinaryOp::CmpGt:
        if (is_integral && same) return splat_int(DType::Bool, op_.binary() == BinaryOp::Eq ? 1 : 0);
        return decided_comparison();
      default:
        return std::nullopt;
    }
  }

  // (a + c1) + c2 -> a + (c1 + c2), (a * c1) * c2 -> a * (c1 * c2) on
  // scalar integers (wrapping arithmetic is associative).
  std::optional<Value> reassociate(BinaryOp kind) {
    const DType dtype = op_.dtype;
    if (!ir::is_int(dtype) || op_.lanes != 1) return std::nullopt;
    const auto c2 = ir::constant_int(k(), op_.src[1]);
    const ValueId inner = op_.src[0];
    if (!c2 || inner >= k().size() || k()[inner].kind != OpKind::Binary || k()[inner].binary() != kind) return std::nullopt;
    const auto c1 = ir::constant_int(k(), k()[inner].src[1]);
    if (!c1) return std::nullopt;
    const auto u1 = static_cast<std::uint64_t>(*c1);
    const auto u2 = static_cast<std::uint64_t>(*c2);
    const std::uint64_t combined = kind == BinaryOp::Add ? u1 + u2 : u1 * u2;
    const Value folded = b().constant_bits(dtype, ir::encode_int(dtype, static_cast<std::int64_t>(combined)));
    return b().binary(kind, old(k()[inner].src[0]), folded);
  }

  // x / 2^k -> x * 2^-k: both are the correctly rounded x/2^k (the
  // reciprocal of a power of two is exact), and a multiply is cheaper.
  std::optional<Value> divide_by_power_of_two(DType dtype) {
    const auto c = constant(1);
    if (!c || !std::isfinite(*c) || *c == 0) return std::nullopt;
    int exponent = 0;
    if (std::abs(std::frexp(*c, &exponent)) != 0.5) return std::nullopt;
    const double reciprocal = 1.0 / *c;
    const std::uint64_t bits = ir::encode_float(dtype, reciprocal);
    if (ir::decode_double(dtype, bits) != reciprocal) return std::nullopt;  // not representable in the dtype
    const Value scalar = b().constant_bits(dtype, bits);
    const Value factor = op_.lanes == 1 ? scalar : b().broadcast(scalar, op_.lanes);
    return b().mul(old(op_.src[0]), factor);
  }

  // A comparison of i64 values whose ranges decide it.
  std::optional<Value> decided_comparison() {
    const auto& rx = range(0);
    const auto& ry = range(1);
    if (!rx || !ry) return std::nullopt;
    std::optional<bool> result;
    switch (op_.binary()) {
      case BinaryOp::CmpLt:
        if (rx->hi < ry->lo) result = true;
        if (rx->lo >= ry->hi) result = false;
        break;
      case BinaryOp::CmpGt:
        if (rx->lo > ry->hi) result = true;
        if (rx->hi <= ry->lo) result = false;
        break;
      case BinaryOp::Eq: case BinaryOp::NotEq:
        if (rx->hi < ry->lo || ry->hi < rx->lo) result = op_.binary() == BinaryOp::NotEq;
        break;
      default:
        break;
    }
    if (!result) return std::nullopt;
    return splat_int(DType::Bool, *result ? 1 : 0);
  }

  // max(x, y) / min(x, y) of i64 values whose ranges decide it.
  std::optional<Value> decided_min_max() {
    const auto& rx = range(0);
    const auto& ry = range(1);
    if (!rx || !ry) return std::nullopt;
    const bool is_max = op_.binary() == BinaryOp::Max;
    if (rx->lo >= ry->hi) return old(op_.src[is_max ? 0 : 1]);
    if (ry->lo >= rx->hi) return old(op_.src[is_max ? 1 : 0]);
    return std::nullopt;
  }

  const AlgebraContext& c_;
  const ir::Op& op_;
};

}  // namespace

std::optional<ir::Value> simplify_identity(const AlgebraContext& context, ir::ValueId id) {
  return Rules(context, id).run();
}

}  // namespace kiln::passes::detail
