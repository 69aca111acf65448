// reference.hpp - host reference for elementwise ops on raw element bits,
// with kernel_ir.h's semantics (until the SDK interpreter is the oracle):
// f32/f16/bf16 compute in float and round to the dtype, f64 in double,
// integers wrap at their width, BOOL is 0/1.
#pragma once

#include <kiln/kernel_ir.h>
#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/half.hpp>
#include <kiln/sdk/wire.hpp>

#include <bit>
#include <cmath>
#include <cstdint>

namespace kiln::test::ref {

inline bool is_real(unsigned dt) {
  return dt == KILN_DTYPE_F32 || dt == KILN_DTYPE_F64 || dt == KILN_DTYPE_F16 || dt == KILN_DTYPE_BF16;
}
inline unsigned bits_of(unsigned dt) { return sdk::dtype_bytes(dt) * 8; }
inline std::uint64_t mask(unsigned dt) { return bits_of(dt) >= 64 ? ~0ull : (1ull << bits_of(dt)) - 1; }

inline double to_double(unsigned dt, std::uint64_t b) {
  switch (dt) {
    case KILN_DTYPE_F32: return std::bit_cast<float>(static_cast<std::uint32_t>(b));
    case KILN_DTYPE_F16: return sdk::f16_bits_to_f32(static_cast<std::uint16_t>(b));
    case KILN_DTYPE_BF16: return sdk::bf16_bits_to_f32(static_cast<std::uint16_t>(b));
    case KILN_DTYPE_F64: return std::bit_cast<double>(b);
    default: return 0;
  }
}
// Rounds to the dtype (floats computed in float first, as the IR says).
inline std::uint64_t from_double(unsigned dt, double v) {
  const float f = static_cast<float>(v);
  switch (dt) {
    case KILN_DTYPE_F32: return std::bit_cast<std::uint32_t>(f);
    case KILN_DTYPE_F16: return sdk::f32_to_f16_bits(f);
    case KILN_DTYPE_BF16: return sdk::f32_to_bf16_bits(f);
    default: return std::bit_cast<std::uint64_t>(v);
  }
}
inline std::int64_t to_signed(unsigned dt, std::uint64_t b) { return sdk::int_from_bits(b & mask(dt), dt); }

// Float ops in the dtype's compute precision.
template <class F>
std::uint64_t real_op(unsigned dt, F f) {
  return dt == KILN_DTYPE_F64 ? from_double(dt, f(0.0)) : from_double(dt, static_cast<double>(f(0.0f)));
}

inline std::uint64_t unary(unsigned code, unsigned dt, std::uint64_t x) {
  if (is_real(dt)) {
    const double xd = to_double(dt, x);
    return real_op(dt, [&](auto zero) {
      using T = decltype(zero);
      const T v = static_cast<T>(xd);
      switch (code) {
        case KILN_UNARY_NEG: return -v;
        case KILN_UNARY_EXP: return std::exp(v);
        case KILN_UNARY_EXP2: return std::exp2(v);
        case KILN_UNARY_LN: return std::log(v);
        case KILN_UNARY_LOG2: return std::log2(v);
        case KILN_UNARY_RECIP: return T(1) / v;
        case KILN_UNARY_SQRT: return std::sqrt(v);
        case KILN_UNARY_SIN: return std::sin(v);
        case KILN_UNARY_COS: return std::cos(v);
        case KILN_UNARY_FLOOR: return std::floor(v);
        case KILN_UNARY_TRUNC: return std::trunc(v);
        default: return std::fabs(v);
      }
    });
  }
  if (dt == KILN_DTYPE_BOOL) return x ? 0 : 1;
  switch (code) {
    case KILN_UNARY_NEG: return (0 - x) & mask(dt);
    case KILN_UNARY_BIT_NOT: return ~x & mask(dt);
    default: return sdk::dtype_is_signed_int(dt) && to_signed(dt, x) < 0 ? (0 - x) & mask(dt) : x;
  }
}

inline std::uint64_t binary(unsigned code, unsigned dt, std::uint64_t x, std::uint64_t y) {
  if (is_real(dt)) {
    const double a = to_double(dt, x), b = to_double(dt, y);
    switch (code) {
      case KILN_BINARY_CMPLT: return a < b;
      case KILN_BINARY_CMPGT: return a > b;
      case KILN_BINARY_EQ: return a == b;
      case KILN_BINARY_NOT_EQ: return a != b;
      case KILN_BINARY_MAX: return a > b ? x : y;
      case KILN_BINARY_MIN: return a < b ? x : y;
      default: break;
    }
    return real_op(dt, [&](auto zero) {
      using T = decltype(zero);
      const T u = static_cast<T>(a), v = static_cast<T>(b);
      switch (code) {
        case KILN_BINARY_ADD: return u + v;
        case KILN_BINARY_SUB: return u - v;
        case KILN_BINARY_MUL: return u * v;
        case KILN_BINARY_DIV: return u / v;
        case KILN_BINARY_POW: return std::pow(u, v);
        default: return std::fmod(u, v);
      }
    });
  }
  const bool s = sdk::dtype_is_signed_int(dt);
  const std::int64_t sa = to_signed(dt, x), sb = to_signed(dt, y);
  const std::uint64_t m = mask(dt);
  switch (code) {
    case KILN_BINARY_CMPLT: return s ? sa < sb : x < y;
    case KILN_BINARY_CMPGT: return s ? sa > sb : x > y;
    case KILN_BINARY_EQ: return x == y;
    case KILN_BINARY_NOT_EQ: return x != y;
    case KILN_BINARY_MAX: return (s ? sa > sb : x > y) ? x : y;
    case KILN_BINARY_MIN: return (s ? sa < sb : x < y) ? x : y;
    case KILN_BINARY_ADD: return (x + y) & m;
    case KILN_BINARY_SUB: return (x - y) & m;
    case KILN_BINARY_MUL: return (x * y) & m;
    case KILN_BINARY_DIV: return (s ? static_cast<std::uint64_t>(sa / sb) : x / y) & m;
    case KILN_BINARY_MOD: return (s ? static_cast<std::uint64_t>(sa % sb) : x % y) & m;
    case KILN_BINARY_AND: case KILN_BINARY_BIT_AND: return x & y;
    case KILN_BINARY_OR: case KILN_BINARY_BIT_OR: return x | y;
    case KILN_BINARY_BIT_XOR: return x ^ y;
    case KILN_BINARY_SHL: return (x << (y & (bits_of(dt) - 1))) & m;
    default:  // SHR
      return (s ? static_cast<std::uint64_t>(sa >> (y & (bits_of(dt) - 1))) : x >> (y & (bits_of(dt) - 1))) & m;
  }
}

inline std::uint64_t cast(unsigned from, unsigned to, std::uint64_t x) {
  if (from == to) return x;
  const bool nonzero = is_real(from) ? to_double(from, x) != 0.0 : (x & mask(from)) != 0;
  if (to == KILN_DTYPE_BOOL) return nonzero;
  if (from == KILN_DTYPE_BOOL) return is_real(to) ? from_double(to, x ? 1.0 : 0.0) : x;
  if (is_real(from)) {
    const double v = to_double(from, x);
    if (is_real(to)) return from_double(to, to == KILN_DTYPE_F64 ? v : static_cast<float>(v));
    return (sdk::dtype_is_signed_int(to) ? static_cast<std::uint64_t>(static_cast<std::int64_t>(v))
                                         : static_cast<std::uint64_t>(v)) & mask(to);
  }
  if (is_real(to)) {  // int -> float: through float for f32/f16/bf16, as the shader does
    if (to == KILN_DTYPE_F64)
      return from_double(to, sdk::dtype_is_signed_int(from) ? static_cast<double>(to_signed(from, x)) : static_cast<double>(x));
    const float f = sdk::dtype_is_signed_int(from) ? static_cast<float>(to_signed(from, x)) : static_cast<float>(x);
    return from_double(to, f);
  }
  const std::uint64_t wide = sdk::dtype_is_signed_int(from) ? static_cast<std::uint64_t>(to_signed(from, x)) : x;
  return wide & mask(to);
}

// Tolerance for comparing device and reference floats: `ulps` units of the
// dtype's epsilon relative, plus an absolute floor.
inline bool close(unsigned dt, std::uint64_t got, std::uint64_t want, double ulps, double abs_tol) {
  if (!is_real(dt)) return got == want;
  const double g = to_double(dt, got), w = to_double(dt, want);
  if (std::isnan(g) || std::isnan(w)) return std::isnan(g) && std::isnan(w);
  if (std::isinf(g) || std::isinf(w)) return g == w;
  const double eps = dt == KILN_DTYPE_F64 ? 0x1p-52 : dt == KILN_DTYPE_F32 ? 0x1p-23 : dt == KILN_DTYPE_F16 ? 0x1p-10 : 0x1p-7;
  return std::fabs(g - w) <= ulps * eps * std::fabs(w) + abs_tol;
}

}  // namespace kiln::test::ref
