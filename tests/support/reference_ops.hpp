// tests/support/reference_ops.hpp - the scalar semantics of kernel_ir.h's
// element ops, computed on the host, for checking plugins without the core.
// Values travel as bit patterns in their dtype (as kiln_op.imm of a CONST):
// floats as IEEE bits (f16/bf16 in the low 16 bits), integers zero-extended,
// bool as 0/1.
//
// Float ops compute in the dtype's own precision (f16/bf16 in float, then
// rounded to nearest even); integer ops wrap; DIV/MOD truncate toward zero.
// std::nullopt means the op is not defined on that dtype.
#pragma once

#include <kiln/kernel_ir.h>
#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/half.hpp>
#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>

namespace kiln::test::ref {

inline bool is_half(unsigned dt) { return dt == KILN_DTYPE_F16 || dt == KILN_DTYPE_BF16; }

inline double to_double(unsigned dt, std::uint64_t bits) {
  switch (dt) {
    case KILN_DTYPE_F32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    case KILN_DTYPE_F64: return std::bit_cast<double>(bits);
    case KILN_DTYPE_F16: return sdk::f16_bits_to_f32(static_cast<std::uint16_t>(bits));
    case KILN_DTYPE_BF16: return sdk::bf16_bits_to_f32(static_cast<std::uint16_t>(bits));
    default: {
      const std::int64_t v = sdk::int_from_bits(bits, dt);
      return dt == KILN_DTYPE_U64 ? static_cast<double>(bits) : static_cast<double>(v);
    }
  }
}

// Bits of a float value in dtype dt (rounded as a cast would: f16/bf16 via f32).
inline std::uint64_t float_bits(unsigned dt, double v) {
  switch (dt) {
    case KILN_DTYPE_F32: return std::bit_cast<std::uint32_t>(static_cast<float>(v));
    case KILN_DTYPE_F64: return std::bit_cast<std::uint64_t>(v);
    case KILN_DTYPE_F16: return sdk::f32_to_f16_bits(static_cast<float>(v));
    default: return sdk::f32_to_bf16_bits(static_cast<float>(v));
  }
}

// Integer bits truncated to dt's width (bool: != 0).
inline std::uint64_t wrap(unsigned dt, std::uint64_t v) {
  if (dt == KILN_DTYPE_BOOL) return v != 0;
  const unsigned bits = sdk::dtype_bytes(dt) * 8;
  return bits >= 64 ? v : v & ((std::uint64_t{1} << bits) - 1);
}

inline std::int64_t sint(unsigned dt, std::uint64_t bits) { return sdk::int_from_bits(bits, dt); }

template <class F>
std::optional<F> float_unary(unsigned code, F x) {
  switch (code) {
    case KILN_UNARY_NEG: return -x;
    case KILN_UNARY_EXP: return std::exp(x);
    case KILN_UNARY_EXP2: return std::exp2(x);
    case KILN_UNARY_LN: return std::log(x);
    case KILN_UNARY_LOG2: return std::log2(x);
    case KILN_UNARY_RECIP: return F(1) / x;
    case KILN_UNARY_SQRT: return std::sqrt(x);
    case KILN_UNARY_SIN: return std::sin(x);
    case KILN_UNARY_COS: return std::cos(x);
    case KILN_UNARY_FLOOR: return std::floor(x);
    case KILN_UNARY_TRUNC: return std::trunc(x);
    case KILN_UNARY_ABS: return std::fabs(x);
    default: return std::nullopt;
  }
}

template <class F>
std::optional<F> float_binary(unsigned code, F x, F y) {
  switch (code) {
    case KILN_BINARY_ADD: return x + y;
    case KILN_BINARY_SUB: return x - y;
    case KILN_BINARY_MUL: return x * y;
    case KILN_BINARY_DIV: return x / y;
    case KILN_BINARY_POW: return std::pow(x, y);
    case KILN_BINARY_MOD: return std::fmod(x, y);
    case KILN_BINARY_MAX: return x > y ? x : y;
    case KILN_BINARY_MIN: return x < y ? x : y;
    default: return std::nullopt;
  }
}

// A float result of compute type F, as bits of dt.
template <class F>
std::uint64_t float_result(unsigned dt, F v) {
  return float_bits(dt, static_cast<double>(v));
}

inline std::optional<std::uint64_t> unary(unsigned code, unsigned dt, std::uint64_t x) {
  if (dt == KILN_DTYPE_F64) {
    auto r = float_unary<double>(code, to_double(dt, x));
    return r ? std::optional(float_result(dt, *r)) : std::nullopt;
  }
  if (sdk::dtype_is_float(dt)) {
    auto r = float_unary<float>(code, static_cast<float>(to_double(dt, x)));
    return r ? std::optional(float_result(dt, *r)) : std::nullopt;
  }
  if (dt == KILN_DTYPE_BOOL) return code == KILN_UNARY_BIT_NOT ? std::optional<std::uint64_t>(x == 0) : std::nullopt;
  switch (code) {
    case KILN_UNARY_NEG: return wrap(dt, 0 - x);
    case KILN_UNARY_BIT_NOT: return wrap(dt, ~x);
    case KILN_UNARY_ABS: return sdk::dtype_is_signed_int(dt) && sint(dt, x) < 0 ? wrap(dt, 0 - x) : x;
    default: return std::nullopt;
  }
}

inline std::optional<std::uint64_t> binary(unsigned code, unsigned dt, std::uint64_t x, std::uint64_t y) {
  if (sdk::dtype_is_float(dt)) {
    const double a = to_double(dt, x), b = to_double(dt, y);
    switch (code) {
      case KILN_BINARY_CMPLT: return a < b;
      case KILN_BINARY_CMPGT: return a > b;
      case KILN_BINARY_EQ: return a == b;
      case KILN_BINARY_NOT_EQ: return a != b;
      default: break;
    }
    if (dt == KILN_DTYPE_F64) {
      auto r = float_binary<double>(code, a, b);
      return r ? std::optional(float_result(dt, *r)) : std::nullopt;
    }
    auto r = float_binary<float>(code, static_cast<float>(a), static_cast<float>(b));
    return r ? std::optional(float_result(dt, *r)) : std::nullopt;
  }
  const bool is_signed = sdk::dtype_is_signed_int(dt);
  const unsigned width = sdk::dtype_bytes(dt) * 8;
  // Compare as the dtype's values.
  const auto less = [&](std::uint64_t p, std::uint64_t q) { return is_signed ? sint(dt, p) < sint(dt, q) : p < q; };
  switch (code) {
    case KILN_BINARY_CMPLT: return less(x, y);
    case KILN_BINARY_CMPGT: return less(y, x);
    case KILN_BINARY_EQ: return x == y;
    case KILN_BINARY_NOT_EQ: return x != y;
    case KILN_BINARY_MAX: return less(y, x) ? x : y;
    case KILN_BINARY_MIN: return less(x, y) ? x : y;
    case KILN_BINARY_AND: case KILN_BINARY_BIT_AND: return x & y;
    case KILN_BINARY_OR: case KILN_BINARY_BIT_OR: return x | y;
    case KILN_BINARY_BIT_XOR: return x ^ y;
    default: break;
  }
  if (dt == KILN_DTYPE_BOOL) return std::nullopt;
  switch (code) {
    case KILN_BINARY_ADD: return wrap(dt, x + y);
    case KILN_BINARY_SUB: return wrap(dt, x - y);
    case KILN_BINARY_MUL: return wrap(dt, x * y);
    case KILN_BINARY_DIV:
    case KILN_BINARY_MOD: {
      if (y == 0) return std::nullopt;  // a kernel bug
      if (is_signed) {
        const std::int64_t a = sint(dt, x), b = sint(dt, y);
        if (b == -1) return code == KILN_BINARY_DIV ? wrap(dt, 0 - x) : 0;  // MIN / -1 wraps
        return wrap(dt, static_cast<std::uint64_t>(code == KILN_BINARY_DIV ? a / b : a % b));
      }
      return code == KILN_BINARY_DIV ? x / y : x % y;
    }
    case KILN_BINARY_SHL: return wrap(dt, x << (y & (width - 1)));
    case KILN_BINARY_SHR:
      if (is_signed) return wrap(dt, static_cast<std::uint64_t>(sint(dt, x) >> (y & (width - 1))));
      return x >> (y & (width - 1));
    default: return std::nullopt;
  }
}

inline std::optional<std::uint64_t> mad(unsigned dt, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  if (dt == KILN_DTYPE_BOOL) return std::nullopt;
  if (dt == KILN_DTYPE_F64) return float_result(dt, to_double(dt, a) * to_double(dt, b) + to_double(dt, c));
  if (sdk::dtype_is_float(dt)) {
    const float p = static_cast<float>(to_double(dt, a)) * static_cast<float>(to_double(dt, b));
    return float_result(dt, p + static_cast<float>(to_double(dt, c)));
  }
  return wrap(dt, a * b + c);
}

// The f16/bf16 bits nearest to x (ties to even, overflow to inf), with x
// exact in long double: one rounding, independent of the f32 route.
inline std::uint64_t nearest_half(unsigned dt, long double x) {
  if (std::isnan(x)) return float_bits(dt, static_cast<double>(x));
  const std::uint64_t sign = std::signbit(x) ? 0x8000 : 0;
  const long double magnitude = std::fabs(x);
  const std::uint64_t inf = dt == KILN_DTYPE_F16 ? 0x7c00 : 0x7f80;
  // Where a rounding to inf starts counting: one ulp above the largest finite.
  const long double beyond = dt == KILN_DTYPE_F16 ? 65536.0L : std::ldexp(1.0L, 128);
  auto value = [&](std::uint64_t m) { return m >= inf ? beyond : static_cast<long double>(to_double(dt, m)); };
  const std::uint64_t guess = std::min(float_bits(dt, static_cast<double>(magnitude)) & 0x7fff, inf);
  std::uint64_t best = guess;
  for (std::uint64_t m : {guess == 0 ? guess : guess - 1, guess, std::min(guess + 1, inf)}) {
    const long double d = std::fabs(value(m) - magnitude), bd = std::fabs(value(best) - magnitude);
    if (d < bd || (d == bd && (m & 1) == 0 && (best & 1) != 0)) best = m;
  }
  return sign | best;
}

inline std::uint64_t cast(unsigned from, unsigned to, std::uint64_t x) {
  if (is_half(to) && !sdk::dtype_is_float(from))
    return nearest_half(to, from == KILN_DTYPE_U64 || from == KILN_DTYPE_BOOL ? static_cast<long double>(x)
                                                                              : static_cast<long double>(sint(from, x)));
  if (is_half(to) && from == KILN_DTYPE_F64) return nearest_half(to, static_cast<long double>(to_double(from, x)));
  if (to == KILN_DTYPE_BOOL) return sdk::dtype_is_float(from) ? to_double(from, x) != 0 : x != 0;
  if (sdk::dtype_is_float(to)) {
    if (from == KILN_DTYPE_F64 || to == KILN_DTYPE_F64 || sdk::dtype_is_float(from))
      return float_bits(to, to == KILN_DTYPE_F64 ? to_double(from, x) : static_cast<double>(static_cast<float>(to_double(from, x))));
    // int -> float: one rounding to f32 (or f64), then to f16/bf16.
    const float f = from == KILN_DTYPE_U64 ? static_cast<float>(x) : static_cast<float>(sint(from, x));
    return float_bits(to, f);
  }
  if (sdk::dtype_is_float(from)) {
    const double t = std::trunc(to_double(from, x));
    return wrap(to, sdk::dtype_is_signed_int(to) ? static_cast<std::uint64_t>(static_cast<std::int64_t>(t))
                                                 : static_cast<std::uint64_t>(t));
  }
  return wrap(to, static_cast<std::uint64_t>(sint(from, x)));  // sign- or zero-extend, then truncate
}

}  // namespace kiln::test::ref
