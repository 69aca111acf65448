// lower_math: the ABI 1.1 math ops (TANH ERF SIGMOID RSQRT LOG1P EXPM1) that
// the device does not claim for their dtype become ops of ABI 1.0 that it
// has, in forms that keep the precision docs/ir.md promises:
//   rsqrt(x)   = recip(sqrt(x))
//   expm1(x)   = x + x^2 (1/2! + x/3! + ...) for |x| < 1/2, else e^x - 1
//   log1p(x)   = 2 atanh(s), s = x / (2 + x), as an odd series in s for
//                -1/4 < x < 1/2, else ln(1 + x)
//                (both avoid ln near 1, which devices often get only
//                absolutely right: Kahan's (u - 1) x / ln u lost all
//                precision near 0 on lavapipe)
//   tanh(x)    = sign(x) * -t / (2 + t), t = expm1(-2|x|)  (no overflow; the
//                relative precision near 0 is expm1's), x itself for
//                |x| < 2^-12 (f32) / 2^-27 (f64), where tanh x rounds to x
//                within half an ulp, which also keeps -0
//   sigmoid(x) = 1 / (1 + e), or e / (1 + e) for x < 0, e = e^-|x|  (no
//                overflow: e is at most 1)
//   erf(x)     = x + x * P(x^2) for |x| < 1, else
//                sign(x) * (1 - e^-x^2 * Q((|x| - 2.5) / 1.5)) up to |x| = 4,
//                sign(x) beyond: P (7 terms) and Q (12 terms) are Chebyshev
//                fits (mpmath.chebyfit) of erf(x)/x - 1 in x^2 and of
//                erfc(x) e^(x^2); at most 7.4e-8 relative error in f32
//                (1.24 ulp; measured on 25000 points, and tests/passes
//                lower_math_test.cpp checks it). f32 only: for f64 kiln has
//                no form of f64 accuracy, so f64 erf stays and a device
//                without it refuses the kernel naming the op.
// f16 and bf16 ops compute in f32 (cast, the f32 op or its form, cast back):
// one rounding at the end, as the interpreter does. An op whose form needs
// an op the device lacks (exp on GLSL's f64, say) is left as it is, and
// Device::compile refuses it by name. Runs first in finalize (exp_base then
// turns the forms' exp/ln into exp2/log2 where that is native) and in
// Device::compile, the one door every kernel passes to reach a plugin.
#include "always_on.hpp"
#include "kiln/ir/rewriter.hpp"

#include <array>
#include <cmath>
#include <span>
#include <vector>

namespace kiln::passes::detail {

namespace {

using ir::BinaryOp;
using ir::DType;
using ir::UnaryOp;
using ir::Value;

constexpr std::array<double, 7> kErfSmall = {  // erf(x)/x - 1 in t = x^2, highest power first
    7.875875062685488e-05, -0.000801686428716587, 0.005189087423433974, -0.026854212010626412,
    0.11283594715160218,   -0.37612626666720334,  0.12837916584835093};
constexpr std::array<double, 12> kErfcScaled = {  // erfc(x) e^(x^2) in s = (x - 2.5) / 1.5, highest first
    -3.566417876899525e-05, 9.629120195463984e-05, -0.00014741614293549128, 0.000368151097857375,
    -0.0010136625981274393, 0.0024256389379578133, -0.005568837645570178,   0.012484123148533609,
    -0.027005458212834586,  0.05611094755697202,   -0.11152101793723113,    0.21080635774313639};

bool is_math_1_1(UnaryOp op) { return op >= UnaryOp::Tanh && op <= UnaryOp::Expm1; }

// Writes the forms in dtype `t` (f32 or f64) with `lanes` lanes.
class Forms {
 public:
  Forms(ir::Builder& b, const DeviceInfo& device, DType t, std::uint8_t lanes)
      : b_(b), device_(device), t_(t), lanes_(lanes) {}

  bool native(UnaryOp op) const { return device_.supports_unary(static_cast<unsigned>(op), static_cast<unsigned>(t_)); }

  // Whether the device has every op op's form (and the forms it uses) needs.
  bool can_lower(UnaryOp op) const {
    if (native(op)) return true;
    if (op == UnaryOp::Rsqrt) return native(UnaryOp::Sqrt) && native(UnaryOp::Recip);
    if (op == UnaryOp::Erf && t_ != DType::F32) return false;
    const auto binary = [&](BinaryOp b) {
      return device_.supports_binary(static_cast<unsigned>(b), static_cast<unsigned>(t_));
    };
    for (UnaryOp u : {UnaryOp::Exp, UnaryOp::Ln, UnaryOp::Recip, UnaryOp::Sqrt, UnaryOp::Abs, UnaryOp::Neg})
      if (!native(u)) return false;
    for (BinaryOp o : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::CmpLt, BinaryOp::CmpGt,
                       BinaryOp::Eq})
      if (!binary(o)) return false;
    return device_.supports_binary(KILN_BINARY_AND, KILN_DTYPE_BOOL) &&
           device_.supports_op_kind(KILN_OP_SELECT, static_cast<unsigned>(t_));
  }

  Value apply(UnaryOp op, Value x) {
    if (native(op)) return b_.unary(op, x);
    switch (op) {
      case UnaryOp::Rsqrt: return b_.recip(b_.sqrt(x));
      case UnaryOp::Expm1: return expm1(x);
      case UnaryOp::Log1p: return log1p(x);
      case UnaryOp::Tanh: return tanh(x);
      case UnaryOp::Sigmoid: return sigmoid(x);
      case UnaryOp::Erf: return erf(x);
      default: return b_.unary(op, x);
    }
  }

 private:
  ir::Builder& b_;
  const DeviceInfo& device_;
  DType t_;
  std::uint8_t lanes_;

  // One builder call per statement below: the emitted op order must not
  // depend on the compiler's argument evaluation order.
  Value c(double v) {
    const Value k = b_.constant(t_, v);
    return lanes_ == 1 ? k : b_.broadcast(k, lanes_);
  }
  Value when(Value condition, Value if_true, Value otherwise) { return b_.select(condition, if_true, otherwise); }

  // Taylor coefficients 1/k! for k = top down to 2 (highest first).
  static std::vector<double> inverse_factorials(int top) {
    std::vector<double> c;
    for (int k = top; k >= 2; --k) c.push_back(1.0 / std::tgamma(k + 1.0));
    return c;
  }

  // |x| < 1/2: x + x^2 (1/2! + x/3! + ...) through x^8/8! (f32) or
  // x^15/15! (f64): truncation below 2^-26 / 2^-59 relative. Elsewhere
  // e^x - 1, which cancels at most 1.6 bits there. No ln: a device's ln near 1
  // (Kahan's (u - 1) x / ln u) is often accurate only absolutely (lavapipe).
  Value expm1(Value x) {
    if (native(UnaryOp::Expm1)) return b_.expm1(x);
    const std::vector<double> coefficients = inverse_factorials(t_ == DType::F32 ? 8 : 15);
    const Value q = horner(coefficients, x);
    const Value xq = b_.mul(x, q);
    const Value x2q = b_.mul(x, xq);
    Value small = b_.add(x, x2q);
    const Value zero = c(0);
    const Value is_zero = b_.eq(x, zero);
    small = when(is_zero, x, small);  // keeps -0
    const Value u = b_.exp(x);
    const Value one = c(1);
    const Value large = b_.sub(u, one);
    const Value a = b_.abs(x);
    const Value half = c(0.5);
    const Value is_small = b_.cmplt(a, half);
    return when(is_small, small, large);
  }

  // -1/4 < x < 1/2: 2 atanh(s), s = x / (2 + x) (|s| <= 1/5), as
  // 2 s (1 + s^2/3 + s^4/5 + ...) through s^11 (f32) or s^23 (f64):
  // truncation below 2^-26 / 2^-55 relative. Elsewhere ln(1 + x), where
  // 1 + x loses at most a bit and ln is away from 1. No ln near 1 (see expm1).
  Value log1p(Value x) {
    if (native(UnaryOp::Log1p)) return b_.log1p(x);
    std::vector<double> coefficients;
    for (int k = t_ == DType::F32 ? 5 : 11; k >= 0; --k) coefficients.push_back(1.0 / (2 * k + 1));
    const Value two = c(2);
    const Value denominator = b_.add(two, x);
    const Value s = b_.div(x, denominator);
    const Value s2 = b_.mul(s, s);
    const Value p = horner(coefficients, s2);
    const Value sp = b_.mul(s, p);
    const Value small = b_.mul(sp, two);  // s carries the sign: -0 stays -0
    const Value one = c(1);
    const Value u = b_.add(one, x);
    const Value large = b_.ln(u);
    const Value lower = c(-0.25);
    const Value upper = c(0.5);
    const Value above = b_.cmpgt(x, lower);
    const Value below = b_.cmplt(x, upper);
    const Value in_range = b_.and_(above, below);
    return when(in_range, small, large);
  }

  // sign(x) * v, v >= 0 or NaN (NaN stays NaN).
  Value with_sign_of(Value x, Value v) {
    const Value zero = c(0);
    const Value negative = b_.cmplt(x, zero);
    const Value minus_v = b_.neg(v);
    return when(negative, minus_v, v);
  }

  Value tanh(Value x) {
    const Value a = b_.abs(x);
    const Value minus_two = c(-2);
    const Value t = expm1(b_.mul(a, minus_two));
    const Value two = c(2);
    const Value denominator = b_.add(t, two);
    const Value minus_t = b_.neg(t);
    const Value magnitude = b_.div(minus_t, denominator);
    const Value r = with_sign_of(x, magnitude);
    const Value small = c(t_ == DType::F32 ? 0x1p-12 : 0x1p-27);
    const Value is_small = b_.cmplt(a, small);
    return when(is_small, x, r);
  }

  Value sigmoid(Value x) {
    const Value a = b_.abs(x);
    const Value e = b_.exp(b_.neg(a));
    const Value one = c(1);
    const Value d = b_.add(one, e);
    const Value positive = b_.recip(d);
    const Value negative = b_.div(e, d);
    const Value zero = c(0);
    const Value is_negative = b_.cmplt(x, zero);
    return when(is_negative, negative, positive);
  }

  Value horner(std::span<const double> coefficients, Value s) {
    Value r = c(coefficients[0]);
    for (std::size_t i = 1; i < coefficients.size(); ++i) {
      const Value scaled = b_.mul(r, s);
      const Value k = c(coefficients[i]);
      r = b_.add(scaled, k);
    }
    return r;
  }

  Value erf(Value x) {
    const Value a = b_.abs(x);
    // |x| < 1: x + x * P(x^2), the leading 1 kept exact.
    const Value t = b_.mul(x, x);
    const Value p = horner(kErfSmall, t);
    const Value xp = b_.mul(x, p);
    const Value near_zero = b_.add(xp, x);
    // 1 <= |x| <= 4: 1 - e^(-x^2) * Q(s); beyond, erf rounds to 1 in f32.
    const Value centre = c(2.5);
    const Value shifted = b_.sub(a, centre);
    const Value inverse_half_width = c(1.0 / 1.5);
    const Value s = b_.mul(shifted, inverse_half_width);
    const Value q = horner(kErfcScaled, s);
    const Value e = b_.exp(b_.neg(t));
    const Value erfc = b_.mul(e, q);
    const Value one = c(1);
    const Value middle = b_.sub(one, erfc);
    const Value four = c(4);
    const Value beyond = b_.cmpgt(a, four);  // NaN is not: it goes through the forms
    const Value tail = when(beyond, one, middle);
    const Value far = with_sign_of(x, tail);
    const Value is_near = b_.cmplt(a, one);
    return when(is_near, near_zero, far);
  }
};

}  // namespace

Kernel lower_math(const Kernel& kernel, const DeviceInfo& device) {
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ir::ValueId id) {
    const ir::Op& op = kernel[id];
    if (op.kind != ir::OpKind::Unary || !is_math_1_1(op.unary()) || !ir::is_float(op.dtype)) return false;
    if (device.supports_unary(op.code, static_cast<unsigned>(op.dtype))) return false;
    const ir::Value x = rw.map(op.src[0]);
    if (!x.valid()) return false;
    ir::Builder& b = rw.out();
    const bool half = op.dtype == DType::F16 || op.dtype == DType::BF16;
    Forms forms(b, device, half ? DType::F32 : op.dtype, op.lanes);
    if (!forms.can_lower(op.unary())) return false;
    if (half && !device.supports_op_kind(KILN_OP_CAST, static_cast<unsigned>(DType::F32))) return false;
    ir::Value result;
    if (half) {
      const ir::Value wide = b.cast(DType::F32, x);
      const ir::Value r = forms.apply(op.unary(), wide);
      result = b.cast(op.dtype, r);
    } else {
      result = forms.apply(op.unary(), x);
    }
    rw.replace(id, result);
    return true;
  });
}

}  // namespace kiln::passes::detail
