// tests/support/scalar_reference.hpp - the scalar meaning of UNARY, BINARY and
// CAST (kernel_ir.h) computed on the host, and typed host arrays, for plugin
// tests that check device results element by element.
//
// Values travel as Scalar: floats (bf16/f16/f32/f64) as a double holding the
// dtype's exact value, integers and bool as their bits sign- or zero-extended
// to 64 bits. f16/bf16/f32 arithmetic is done in float and rounded to the
// dtype after each op, as the IR says.
#pragma once

#include <kiln/kernel_ir.h>
#include <kiln/sdk/half.hpp>
#include <kiln/sdk/wire.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace kiln::test {

struct Scalar {
  double f = 0;        // floats
  std::int64_t i = 0;  // integers and bool (u64: the bit pattern)
};

inline bool is_float(unsigned dt) { return sdk::dtype_is_float(dt); }
inline unsigned bits_of(unsigned dt) { return sdk::dtype_bytes(dt) * 8; }

// Wraps an integer to dtype `dt` (two's complement), extended back to 64 bits.
inline std::int64_t wrap(unsigned dt, std::uint64_t v) {
  switch (dt) {
    case KILN_DTYPE_I8: return static_cast<std::int8_t>(v);
    case KILN_DTYPE_I16: return static_cast<std::int16_t>(v);
    case KILN_DTYPE_I32: return static_cast<std::int32_t>(v);
    case KILN_DTYPE_U8: return static_cast<std::uint8_t>(v);
    case KILN_DTYPE_U16: return static_cast<std::uint16_t>(v);
    case KILN_DTYPE_U32: return static_cast<std::uint32_t>(v);
    case KILN_DTYPE_BOOL: return v != 0;
    default: return static_cast<std::int64_t>(v);
  }
}

// Rounds a float result to dtype `dt` (f16/bf16/f32), or keeps a double.
inline double round_to(unsigned dt, double v) {
  switch (dt) {
    case KILN_DTYPE_F16: return sdk::round_to_f16(static_cast<float>(v));
    case KILN_DTYPE_BF16: return sdk::round_to_bf16(static_cast<float>(v));
    case KILN_DTYPE_F32: return static_cast<float>(v);
    default: return v;
  }
}

// ------------------------------------------------------------ host arrays --

struct HostArray {
  std::uint8_t dtype = KILN_DTYPE_INVALID;
  std::vector<std::uint8_t> bytes;

  HostArray() = default;
  HostArray(std::uint8_t dt, std::size_t n) : dtype(dt), bytes(n * sdk::dtype_bytes(dt), 0) {}
  std::size_t size() const { return bytes.size() / sdk::dtype_bytes(dtype); }

  Scalar get(std::size_t k) const {
    const std::uint8_t* p = bytes.data() + k * sdk::dtype_bytes(dtype);
    Scalar s;
    std::uint64_t raw = 0;
    std::memcpy(&raw, p, sdk::dtype_bytes(dtype));
    switch (dtype) {
      case KILN_DTYPE_F16: s.f = sdk::f16_bits_to_f32(static_cast<std::uint16_t>(raw)); break;
      case KILN_DTYPE_BF16: s.f = sdk::bf16_bits_to_f32(static_cast<std::uint16_t>(raw)); break;
      case KILN_DTYPE_F32: { float f; std::memcpy(&f, p, 4); s.f = f; break; }
      case KILN_DTYPE_F64: std::memcpy(&s.f, p, 8); break;
      default: s.i = wrap(dtype, raw); break;
    }
    return s;
  }

  void set(std::size_t k, Scalar s) {
    std::uint8_t* p = bytes.data() + k * sdk::dtype_bytes(dtype);
    std::uint64_t raw = 0;
    switch (dtype) {
      case KILN_DTYPE_F16: raw = sdk::f32_to_f16_bits(static_cast<float>(s.f)); break;
      case KILN_DTYPE_BF16: raw = sdk::f32_to_bf16_bits(static_cast<float>(s.f)); break;
      case KILN_DTYPE_F32: { const float f = static_cast<float>(s.f); std::memcpy(&raw, &f, 4); break; }
      case KILN_DTYPE_F64: std::memcpy(&raw, &s.f, 8); break;
      default: raw = static_cast<std::uint64_t>(wrap(dtype, static_cast<std::uint64_t>(s.i))); break;
    }
    std::memcpy(p, &raw, sdk::dtype_bytes(dtype));
  }
};

// Random values: floats uniform in [lo, hi] (rounded to the dtype), integers
// uniform over the whole dtype (bool: 0/1). `nonzero` avoids 0 (divisors).
inline HostArray random_array(std::uint8_t dt, std::size_t n, std::mt19937_64& rng, double lo = -4, double hi = 4,
                              bool nonzero = false) {
  HostArray a(dt, n);
  std::uniform_real_distribution<double> real(lo, hi);
  for (std::size_t k = 0; k < n; ++k) {
    Scalar s;
    do {
      if (is_float(dt)) s.f = round_to(dt, real(rng));
      else s.i = wrap(dt, rng());
    } while (nonzero && (is_float(dt) ? std::fabs(s.f) < 0.25 : s.i == 0));
    a.set(k, s);
  }
  return a;
}

// ---------------------------------------------------------------- the ops --

inline Scalar unary_ref(unsigned code, unsigned dt, Scalar x) {
  Scalar r;
  if (is_float(dt)) {
    const bool f64 = dt == KILN_DTYPE_F64;
    const double v = x.f;
    const float f = static_cast<float>(v);
    double out = 0;
    switch (code) {
      case KILN_UNARY_NEG: out = -v; break;
      case KILN_UNARY_EXP: out = f64 ? std::exp(v) : std::exp(f); break;
      case KILN_UNARY_EXP2: out = f64 ? std::exp2(v) : std::exp2(f); break;
      case KILN_UNARY_LN: out = f64 ? std::log(v) : std::log(f); break;
      case KILN_UNARY_LOG2: out = f64 ? std::log2(v) : std::log2(f); break;
      case KILN_UNARY_RECIP: out = f64 ? 1.0 / v : 1.0f / f; break;
      case KILN_UNARY_SQRT: out = f64 ? std::sqrt(v) : std::sqrt(f); break;
      case KILN_UNARY_SIN: out = f64 ? std::sin(v) : std::sin(f); break;
      case KILN_UNARY_COS: out = f64 ? std::cos(v) : std::cos(f); break;
      case KILN_UNARY_FLOOR: out = std::floor(v); break;
      case KILN_UNARY_TRUNC: out = std::trunc(v); break;
      case KILN_UNARY_ABS: out = std::fabs(v); break;
      default: break;
    }
    r.f = round_to(dt, out);
    return r;
  }
  const std::uint64_t u = static_cast<std::uint64_t>(x.i);
  switch (code) {
    case KILN_UNARY_NEG: r.i = wrap(dt, 0 - u); break;
    case KILN_UNARY_BIT_NOT: r.i = dt == KILN_DTYPE_BOOL ? !x.i : wrap(dt, ~u); break;
    case KILN_UNARY_ABS: r.i = sdk::dtype_is_signed_int(dt) && x.i < 0 ? wrap(dt, 0 - u) : x.i; break;
    default: break;
  }
  return r;
}

// Integer comparison in the dtype's signedness.
inline int compare_int(unsigned dt, std::int64_t a, std::int64_t b) {
  if (sdk::dtype_is_signed_int(dt)) return a < b ? -1 : a > b ? 1 : 0;
  const auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
  return ua < ub ? -1 : ua > ub ? 1 : 0;
}

// The result dtype of a binary op on dtype `dt`.
inline unsigned binary_result_dtype(unsigned code, unsigned dt) {
  return sdk::binary_is_comparison(code) ? static_cast<unsigned>(KILN_DTYPE_BOOL) : dt;
}

inline Scalar binary_ref(unsigned code, unsigned dt, Scalar x, Scalar y) {
  Scalar r;
  if (is_float(dt)) {
    const bool f64 = dt == KILN_DTYPE_F64;
    const double a = x.f, b = y.f;
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    double out = 0;
    switch (code) {
      case KILN_BINARY_ADD: out = f64 ? a + b : fa + fb; break;
      case KILN_BINARY_SUB: out = f64 ? a - b : fa - fb; break;
      case KILN_BINARY_MUL: out = f64 ? a * b : fa * fb; break;
      case KILN_BINARY_DIV: out = f64 ? a / b : fa / fb; break;
      case KILN_BINARY_POW: out = f64 ? std::pow(a, b) : std::pow(fa, fb); break;
      case KILN_BINARY_MOD: out = f64 ? std::fmod(a, b) : std::fmod(fa, fb); break;
      case KILN_BINARY_MAX: out = a > b ? a : b; break;
      case KILN_BINARY_MIN: out = a < b ? a : b; break;
      case KILN_BINARY_CMPLT: r.i = a < b; return r;
      case KILN_BINARY_CMPGT: r.i = a > b; return r;
      case KILN_BINARY_EQ: r.i = a == b; return r;
      case KILN_BINARY_NOT_EQ: r.i = a != b; return r;
      default: break;
    }
    r.f = round_to(dt, out);
    return r;
  }
  const std::uint64_t ua = static_cast<std::uint64_t>(x.i), ub = static_cast<std::uint64_t>(y.i);
  const unsigned width = bits_of(dt);
  const unsigned shift = static_cast<unsigned>(ub & (width - 1));
  const bool is_signed = sdk::dtype_is_signed_int(dt);
  switch (code) {
    case KILN_BINARY_ADD: r.i = wrap(dt, ua + ub); break;
    case KILN_BINARY_SUB: r.i = wrap(dt, ua - ub); break;
    case KILN_BINARY_MUL: r.i = wrap(dt, ua * ub); break;
    case KILN_BINARY_DIV:
      if (y.i == 0) r.i = 0;
      else if (is_signed && y.i == -1) r.i = wrap(dt, 0 - ua);
      else r.i = is_signed ? x.i / y.i : static_cast<std::int64_t>(ua / ub);
      break;
    case KILN_BINARY_MOD:
      if (y.i == 0 || (is_signed && y.i == -1)) r.i = 0;
      else r.i = is_signed ? x.i % y.i : static_cast<std::int64_t>(ua % ub);
      break;
    case KILN_BINARY_CMPLT: r.i = compare_int(dt, x.i, y.i) < 0; break;
    case KILN_BINARY_CMPGT: r.i = compare_int(dt, x.i, y.i) > 0; break;
    case KILN_BINARY_EQ: r.i = x.i == y.i; break;
    case KILN_BINARY_NOT_EQ: r.i = x.i != y.i; break;
    case KILN_BINARY_MAX: r.i = compare_int(dt, x.i, y.i) > 0 ? x.i : y.i; break;
    case KILN_BINARY_MIN: r.i = compare_int(dt, x.i, y.i) < 0 ? x.i : y.i; break;
    case KILN_BINARY_AND: case KILN_BINARY_BIT_AND: r.i = wrap(dt, ua & ub); break;
    case KILN_BINARY_OR: case KILN_BINARY_BIT_OR: r.i = wrap(dt, ua | ub); break;
    case KILN_BINARY_BIT_XOR: r.i = wrap(dt, ua ^ ub); break;
    case KILN_BINARY_SHL: r.i = wrap(dt, ua << shift); break;
    case KILN_BINARY_SHR:
      r.i = is_signed ? wrap(dt, static_cast<std::uint64_t>(x.i >> shift))
                      : wrap(dt, (ua & (width == 64 ? ~0ull : (1ull << width) - 1)) >> shift);
      break;
    default: break;
  }
  return r;
}

inline Scalar cast_ref(unsigned from, unsigned to, Scalar x) {
  Scalar r;
  if (to == KILN_DTYPE_BOOL) {
    r.i = is_float(from) ? x.f != 0 : x.i != 0;
    return r;
  }
  if (is_float(to)) {
    double v = 0;
    if (is_float(from)) v = x.f;
    else if (sdk::dtype_is_signed_int(from) || from == KILN_DTYPE_BOOL) v = static_cast<double>(x.i);
    else v = static_cast<double>(static_cast<std::uint64_t>(x.i));
    r.f = to == KILN_DTYPE_F64 ? v : round_to(to, static_cast<float>(v));
    return r;
  }
  if (is_float(from)) {  // truncates toward zero; tests keep values in range
    const double t = std::trunc(x.f);
    r.i = wrap(to, t < 0 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(t)) : static_cast<std::uint64_t>(t));
    return r;
  }
  r.i = wrap(to, static_cast<std::uint64_t>(x.i));
  return r;
}

// Whether a device value matches the reference: exact for integers and
// bool; within `rtol` relative (plus `atol`) for floats, NaN matching NaN.
inline bool close_enough(unsigned dt, Scalar got, Scalar want, double rtol, double atol) {
  if (!is_float(dt)) return got.i == want.i;
  if (std::isnan(want.f)) return std::isnan(got.f);
  if (std::isinf(want.f)) return got.f == want.f;
  return std::fabs(got.f - want.f) <= atol + rtol * std::fabs(want.f);
}

inline std::string show(unsigned dt, Scalar s) {
  return is_float(dt) ? std::to_string(s.f) : std::to_string(s.i);
}

}  // namespace kiln::test
