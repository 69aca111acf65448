// Reference semantics of UNARY, BINARY, CAST and MAD for the interpreter
// tests, written independently of the interpreter: native C++ types, wrapping
// through the unsigned types, and correctly rounded conversions to f16/bf16
// through long double (exact for every source value).
#pragma once

#include <kiln/kernel_ir.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>

#include "kiln/sdk/half.hpp"
#include "kiln/sdk/wire.hpp"

namespace kiln::test::ref {

using u64 = std::uint64_t;

// ------------------------------------------------------ rounding to halves --

// Nearest-even rounding of x to a binary format with `precision` significand
// bits and normal exponents emin..emax (overflow gives infinity).
inline long double round_to_format(long double x, int precision, int emin, int emax) {
  if (x == 0 || std::isnan(x) || std::isinf(x)) return x;
  const long double ax = std::fabs(x);
  int e = 0;
  std::frexp(ax, &e);  // ax in [2^(e-1), 2^e)
  const int exponent = std::max(e - 1, emin);
  const long double quantum = std::ldexp(1.0L, exponent - (precision - 1));
  long double r = std::nearbyint(ax / quantum) * quantum;
  const long double max_finite = std::ldexp(2.0L - std::ldexp(1.0L, 1 - precision), emax);
  if (r > max_finite) r = INFINITY;
  return std::copysign(r, x);
}

inline std::uint16_t to_f16_bits(long double x) {
  if (std::isnan(x)) return 0x7e00;
  return sdk::f32_to_f16_bits(static_cast<float>(round_to_format(x, 11, -14, 15)));
}
inline std::uint16_t to_bf16_bits(long double x) {
  if (std::isnan(x)) return 0x7fc0;
  return sdk::f32_to_bf16_bits(static_cast<float>(round_to_format(x, 8, -126, 127)));
}

// ----------------------------------------------------- element <-> number --

// The value of an element given as zero-extended bits, as long double
// (exact for every dtype).
inline long double value_of(unsigned dt, u64 bits) {
  switch (dt) {
    case KILN_DTYPE_BF16: return sdk::bf16_bits_to_f32(static_cast<std::uint16_t>(bits));
    case KILN_DTYPE_F16: return sdk::f16_bits_to_f32(static_cast<std::uint16_t>(bits));
    case KILN_DTYPE_F32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    case KILN_DTYPE_F64: return std::bit_cast<double>(bits);
    case KILN_DTYPE_I8: return static_cast<std::int8_t>(bits);
    case KILN_DTYPE_I16: return static_cast<std::int16_t>(bits);
    case KILN_DTYPE_I32: return static_cast<std::int32_t>(bits);
    case KILN_DTYPE_I64: return static_cast<std::int64_t>(bits);
    case KILN_DTYPE_BOOL: return bits != 0;
    default: return static_cast<long double>(bits);  // unsigned
  }
}

// Bits of an integer value wrapped to `dt` (two's complement).
inline u64 wrap_bits(unsigned dt, u64 v) {
  const unsigned bytes = sdk::dtype_bytes(dt);
  if (dt == KILN_DTYPE_BOOL) return v != 0;
  return bytes >= 8 ? v : v & ((u64{1} << (8 * bytes)) - 1);
}

// ----------------------------------------------------------------- random --

// Random elements of a dtype as bits: floats in [-8, 8] (a few exact zeros),
// integers over their whole range, bools 0/1.
inline u64 random_bits(unsigned dt, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> real(-8.0, 8.0);
  const bool zero = rng() % 16 == 0;
  switch (dt) {
    case KILN_DTYPE_F32: return std::bit_cast<std::uint32_t>(zero ? 0.0f : static_cast<float>(real(rng)));
    case KILN_DTYPE_F64: return std::bit_cast<u64>(zero ? 0.0 : real(rng));
    case KILN_DTYPE_F16: return to_f16_bits(zero ? 0.0 : real(rng));
    case KILN_DTYPE_BF16: return to_bf16_bits(zero ? 0.0 : real(rng));
    case KILN_DTYPE_BOOL: return rng() & 1;
    default: return zero ? 0 : wrap_bits(dt, rng());
  }
}

// ------------------------------------------------------------------ floats --

// Applies a float op computed in F (float for f16/bf16/f32, double for f64)
// and returns the result's bits in dtype `dt`.
template <class F>
u64 float_bits(unsigned dt, F v) {
  switch (dt) {
    case KILN_DTYPE_F16: return sdk::f32_to_f16_bits(static_cast<float>(v));
    case KILN_DTYPE_BF16: return sdk::f32_to_bf16_bits(static_cast<float>(v));
    case KILN_DTYPE_F32: return std::bit_cast<std::uint32_t>(static_cast<float>(v));
    default: return std::bit_cast<u64>(static_cast<double>(v));
  }
}

// A double rounded once to nearest even on the grid of a float format with
// `mantissa` explicit bits and least normal exponent `min_exp` (overflow:
// beyond the largest finite value the grid continues, and the cast to float
// below gives inf where the format would).
inline double round_to_grid(double d, int mantissa, int min_exp) {
  if (!std::isfinite(d) || d == 0) return d;
  const double ulp = std::ldexp(1.0, std::max(std::ilogb(d), min_exp) - mantissa);
  return std::nearbyint(d / ulp) * ulp;
}

// The bits of double `v` rounded once to dtype `dt`.
inline u64 double_bits(unsigned dt, double v) {
  switch (dt) {
    case KILN_DTYPE_F16: {
      const double r = round_to_grid(v, 10, -14);
      return sdk::f32_to_f16_bits(std::fabs(r) > 65504.0 ? std::copysign(INFINITY, r) : static_cast<float>(r));
    }
    case KILN_DTYPE_BF16: return sdk::f32_to_bf16_bits(static_cast<float>(round_to_grid(v, 7, -126)));
    case KILN_DTYPE_F32: return std::bit_cast<std::uint32_t>(static_cast<float>(v));
    default: return std::bit_cast<u64>(v);
  }
}

// The ABI 1.1 math ops as docs/ir.md defines them: computed in double, one
// rounding to the dtype. SIGMOID on f64 is e^x / (1 + e^x) for x < 0.
inline double math_1_1(unsigned op, double x) {
  switch (op) {
    case KILN_UNARY_TANH: return std::tanh(x);
    case KILN_UNARY_ERF: return std::erf(x);
    case KILN_UNARY_SIGMOID: return x < 0 ? std::exp(x) / (1.0 + std::exp(x)) : 1.0 / (1.0 + std::exp(-x));
    case KILN_UNARY_RSQRT: return 1.0 / std::sqrt(x);
    case KILN_UNARY_LOG1P: return std::log1p(x);
    case KILN_UNARY_EXPM1: return std::expm1(x);
    default: return NAN;
  }
}

template <class F>
u64 float_unary(unsigned dt, unsigned op, F a) {
  if (op >= KILN_UNARY_TANH && op <= KILN_UNARY_EXPM1) return double_bits(dt, math_1_1(op, static_cast<double>(a)));
  switch (op) {
    case KILN_UNARY_NEG: return float_bits<F>(dt, -a);
    case KILN_UNARY_EXP: return float_bits<F>(dt, std::exp(a));
    case KILN_UNARY_EXP2: return float_bits<F>(dt, std::exp2(a));
    case KILN_UNARY_LN: return float_bits<F>(dt, std::log(a));
    case KILN_UNARY_LOG2: return float_bits<F>(dt, std::log2(a));
    case KILN_UNARY_RECIP: return float_bits<F>(dt, F(1) / a);
    case KILN_UNARY_SQRT: return float_bits<F>(dt, std::sqrt(a));
    case KILN_UNARY_SIN: return float_bits<F>(dt, std::sin(a));
    case KILN_UNARY_COS: return float_bits<F>(dt, std::cos(a));
    case KILN_UNARY_FLOOR: return float_bits<F>(dt, std::floor(a));
    case KILN_UNARY_TRUNC: return float_bits<F>(dt, std::trunc(a));
    case KILN_UNARY_ABS: return float_bits<F>(dt, std::fabs(a));
    default: return 0;
  }
}

template <class F>
u64 float_binary(unsigned dt, unsigned op, F a, F b) {
  switch (op) {
    case KILN_BINARY_ADD: return float_bits<F>(dt, a + b);
    case KILN_BINARY_SUB: return float_bits<F>(dt, a - b);
    case KILN_BINARY_MUL: return float_bits<F>(dt, a * b);
    case KILN_BINARY_DIV: return float_bits<F>(dt, a / b);
    case KILN_BINARY_POW: return float_bits<F>(dt, std::pow(a, b));
    case KILN_BINARY_MOD: return float_bits<F>(dt, std::fmod(a, b));
    case KILN_BINARY_CMPLT: return a < b;
    case KILN_BINARY_CMPGT: return a > b;
    case KILN_BINARY_MAX: return float_bits<F>(dt, a > b ? a : b);
    case KILN_BINARY_MIN: return float_bits<F>(dt, a < b ? a : b);
    case KILN_BINARY_NOT_EQ: return a != b;
    case KILN_BINARY_EQ: return a == b;
    default: return 0;
  }
}

// ---------------------------------------------------------------- integers --

template <class T>
u64 int_bits(T v) {
  return static_cast<u64>(static_cast<std::make_unsigned_t<T>>(v));
}

template <class T>
u64 int_unary(unsigned op, T x) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case KILN_UNARY_NEG: return int_bits(static_cast<T>(static_cast<U>(0u - static_cast<U>(x))));
    case KILN_UNARY_BIT_NOT: return int_bits(static_cast<T>(~static_cast<U>(x)));
    case KILN_UNARY_ABS: return x < 0 ? int_bits(static_cast<T>(static_cast<U>(0u - static_cast<U>(x)))) : int_bits(x);
    default: return 0;
  }
}

template <class T>
u64 int_binary(unsigned op, T x, T y) {
  using U = std::make_unsigned_t<T>;
  constexpr unsigned width = 8 * sizeof(T);
  const U ux = static_cast<U>(x);
  const U uy = static_cast<U>(y);
  const unsigned amount = static_cast<unsigned>(uy % width);
  switch (op) {
    case KILN_BINARY_ADD: return int_bits(static_cast<T>(static_cast<U>(u64{ux} + u64{uy})));
    case KILN_BINARY_SUB: return int_bits(static_cast<T>(static_cast<U>(u64{ux} - u64{uy})));
    case KILN_BINARY_MUL: return int_bits(static_cast<T>(static_cast<U>(u64{ux} * u64{uy})));
    case KILN_BINARY_DIV:
      if (std::is_signed_v<T> && y == T(-1)) return int_bits(static_cast<T>(static_cast<U>(0u - u64{ux})));
      return int_bits(static_cast<T>(x / y));
    case KILN_BINARY_MOD:
      if (std::is_signed_v<T> && y == T(-1)) return 0;
      return int_bits(static_cast<T>(x % y));
    case KILN_BINARY_CMPLT: return x < y;
    case KILN_BINARY_CMPGT: return x > y;
    case KILN_BINARY_MAX: return int_bits(x > y ? x : y);
    case KILN_BINARY_MIN: return int_bits(x < y ? x : y);
    case KILN_BINARY_OR: case KILN_BINARY_BIT_OR: return int_bits(static_cast<T>(ux | uy));
    case KILN_BINARY_AND: case KILN_BINARY_BIT_AND: return int_bits(static_cast<T>(ux & uy));
    case KILN_BINARY_BIT_XOR: return int_bits(static_cast<T>(ux ^ uy));
    case KILN_BINARY_SHL: return int_bits(static_cast<T>(static_cast<U>(u64{ux} << amount)));
    case KILN_BINARY_SHR: return int_bits(static_cast<T>(x >> amount));  // arithmetic for signed T
    case KILN_BINARY_NOT_EQ: return x != y;
    case KILN_BINARY_EQ: return x == y;
    default: return 0;
  }
}

inline u64 bool_binary(unsigned op, u64 x, u64 y) {
  switch (op) {
    case KILN_BINARY_OR: case KILN_BINARY_BIT_OR: return x | y;
    case KILN_BINARY_AND: case KILN_BINARY_BIT_AND: return x & y;
    case KILN_BINARY_BIT_XOR: return x ^ y;
    case KILN_BINARY_CMPLT: return x < y;
    case KILN_BINARY_CMPGT: return x > y;
    case KILN_BINARY_MAX: return x > y ? x : y;
    case KILN_BINARY_MIN: return x < y ? x : y;
    case KILN_BINARY_NOT_EQ: return x != y;
    case KILN_BINARY_EQ: return x == y;
    default: return 0;
  }
}

// ------------------------------------------------------------- dispatchers --

inline u64 unary(unsigned dt, unsigned op, u64 x) {
  switch (dt) {
    case KILN_DTYPE_F64: return float_unary<double>(dt, op, std::bit_cast<double>(x));
    case KILN_DTYPE_F32: case KILN_DTYPE_F16: case KILN_DTYPE_BF16:
      return float_unary<float>(dt, op, static_cast<float>(value_of(dt, x)));
    case KILN_DTYPE_I8: return int_unary<std::int8_t>(op, static_cast<std::int8_t>(x));
    case KILN_DTYPE_I16: return int_unary<std::int16_t>(op, static_cast<std::int16_t>(x));
    case KILN_DTYPE_I32: return int_unary<std::int32_t>(op, static_cast<std::int32_t>(x));
    case KILN_DTYPE_I64: return int_unary<std::int64_t>(op, static_cast<std::int64_t>(x));
    case KILN_DTYPE_U8: return int_unary<std::uint8_t>(op, static_cast<std::uint8_t>(x));
    case KILN_DTYPE_U16: return int_unary<std::uint16_t>(op, static_cast<std::uint16_t>(x));
    case KILN_DTYPE_U32: return int_unary<std::uint32_t>(op, static_cast<std::uint32_t>(x));
    case KILN_DTYPE_U64: return int_unary<std::uint64_t>(op, x);
    default: return x ^ 1u;  // bool: logical not
  }
}

inline u64 binary(unsigned dt, unsigned op, u64 x, u64 y) {
  switch (dt) {
    case KILN_DTYPE_F64: return float_binary<double>(dt, op, std::bit_cast<double>(x), std::bit_cast<double>(y));
    case KILN_DTYPE_F32: case KILN_DTYPE_F16: case KILN_DTYPE_BF16:
      return float_binary<float>(dt, op, static_cast<float>(value_of(dt, x)), static_cast<float>(value_of(dt, y)));
    case KILN_DTYPE_I8: return int_binary<std::int8_t>(op, static_cast<std::int8_t>(x), static_cast<std::int8_t>(y));
    case KILN_DTYPE_I16: return int_binary<std::int16_t>(op, static_cast<std::int16_t>(x), static_cast<std::int16_t>(y));
    case KILN_DTYPE_I32: return int_binary<std::int32_t>(op, static_cast<std::int32_t>(x), static_cast<std::int32_t>(y));
    case KILN_DTYPE_I64: return int_binary<std::int64_t>(op, static_cast<std::int64_t>(x), static_cast<std::int64_t>(y));
    case KILN_DTYPE_U8: return int_binary<std::uint8_t>(op, static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(y));
    case KILN_DTYPE_U16: return int_binary<std::uint16_t>(op, static_cast<std::uint16_t>(x), static_cast<std::uint16_t>(y));
    case KILN_DTYPE_U32: return int_binary<std::uint32_t>(op, static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y));
    case KILN_DTYPE_U64: return int_binary<std::uint64_t>(op, x, y);
    default: return bool_binary(op, x, y);
  }
}

// x * y + z, unfused.
inline u64 mad(unsigned dt, u64 x, u64 y, u64 z) {
  if (sdk::dtype_is_float(dt)) {
    if (dt == KILN_DTYPE_F64) {
      const double p = std::bit_cast<double>(x) * std::bit_cast<double>(y);
      return float_bits<double>(dt, p + std::bit_cast<double>(z));
    }
    const float p = static_cast<float>(value_of(dt, x)) * static_cast<float>(value_of(dt, y));
    return float_bits<float>(dt, p + static_cast<float>(value_of(dt, z)));
  }
  return wrap_bits(dt, x * y + z);
}

// CAST: float -> int truncates (inputs in range); to floats rounds to
// nearest even (long double holds every source value exactly).
inline u64 cast(unsigned from, unsigned to, u64 x) {
  const long double v = value_of(from, x);
  switch (to) {
    case KILN_DTYPE_BOOL: return v != 0;
    case KILN_DTYPE_F16: return to_f16_bits(v);
    case KILN_DTYPE_BF16: return to_bf16_bits(v);
    case KILN_DTYPE_F32: return std::bit_cast<std::uint32_t>(static_cast<float>(v));
    case KILN_DTYPE_F64: return std::bit_cast<u64>(static_cast<double>(v));
    default: break;
  }
  if (sdk::dtype_is_float(from)) {
    const long double t = std::trunc(v);
    return wrap_bits(to, t < 0 ? static_cast<u64>(static_cast<std::int64_t>(t)) : static_cast<u64>(t));
  }
  // Integer/bool -> integer: sign- or zero-extend the source, then wrap.
  const u64 wide = sdk::dtype_is_signed_int(from) ? static_cast<u64>(static_cast<std::int64_t>(v)) : static_cast<u64>(v);
  return wrap_bits(to, wide);
}

}  // namespace kiln::test::ref
