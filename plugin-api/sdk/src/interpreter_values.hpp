// The interpreter's value representation (private to the SDK).
//
// Every element of every value lives in a 64-bit slot, so that ops work on
// plain uint64 arrays and copies (SELECT, vector shuffles) need no dtype:
//   f32, f16, bf16  the f32 bits of the value in the low half (an f16/bf16
//                   value is always exactly representable as f32: it was
//                   rounded when it was made);
//   f64             its bits;
//   signed ints     the value sign-extended to 64 bits;
//   unsigned ints   the value zero-extended to 64 bits;
//   bool            0 or 1.
// Integer ops compute on 64 bits and re-normalise to the dtype's width with a
// shift (64 - bits), which is how narrow integers wrap.
#pragma once

#include <kiln/kernel_ir.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kiln/sdk/half.hpp"
#include "kiln/sdk/wire.hpp"

namespace kiln::sdk::interp {

using u64 = std::uint64_t;
using i64 = std::int64_t;

// Computation classes: dtypes that share one implementation of every op.
enum class VClass : std::uint8_t { F32, F16, BF16, F64, SInt, UInt, Bool, Count };
inline constexpr std::size_t kVClassCount = static_cast<std::size_t>(VClass::Count);

constexpr VClass vclass_of(unsigned dt) {
  switch (dt) {
    case KILN_DTYPE_F32: return VClass::F32;
    case KILN_DTYPE_F16: return VClass::F16;
    case KILN_DTYPE_BF16: return VClass::BF16;
    case KILN_DTYPE_F64: return VClass::F64;
    case KILN_DTYPE_I8: case KILN_DTYPE_I16: case KILN_DTYPE_I32: case KILN_DTYPE_I64: return VClass::SInt;
    case KILN_DTYPE_U8: case KILN_DTYPE_U16: case KILN_DTYPE_U32: case KILN_DTYPE_U64: return VClass::UInt;
    default: return VClass::Bool;
  }
}

// A dtype of the class, for asking op_rules.hpp what the class allows.
constexpr unsigned representative_dtype(VClass c) {
  switch (c) {
    case VClass::F32: return KILN_DTYPE_F32;
    case VClass::F16: return KILN_DTYPE_F16;
    case VClass::BF16: return KILN_DTYPE_BF16;
    case VClass::F64: return KILN_DTYPE_F64;
    case VClass::SInt: return KILN_DTYPE_I32;
    case VClass::UInt: return KILN_DTYPE_U32;
    default: return KILN_DTYPE_BOOL;
  }
}

constexpr bool is_float32_class(VClass c) { return c == VClass::F32 || c == VClass::F16 || c == VClass::BF16; }
constexpr bool is_float_class(VClass c) { return is_float32_class(c) || c == VClass::F64; }
constexpr bool is_int_class(VClass c) { return c == VClass::SInt || c == VClass::UInt; }

// 64 - bit width for integers (the normalising shift), 0 otherwise.
constexpr unsigned int_shift(unsigned dt) { return dtype_is_int(dt) ? 64u - 8u * dtype_bytes(dt) : 0u; }

constexpr u64 sign_normalize(u64 v, unsigned shift) { return static_cast<u64>(static_cast<i64>(v << shift) >> shift); }
constexpr u64 zero_normalize(u64 v, unsigned shift) { return (v << shift) >> shift; }

inline float as_f32(u64 v) { return std::bit_cast<float>(static_cast<std::uint32_t>(v)); }
inline u64 from_f32(float f) { return std::bit_cast<std::uint32_t>(f); }
inline double as_f64(u64 v) { return std::bit_cast<double>(v); }
inline u64 from_f64(double d) { return std::bit_cast<u64>(d); }

// ------------------------------------------------- per-class arithmetic --

template <VClass C>
struct Num;

template <>
struct Num<VClass::F32> {
  using T = float;
  static T get(u64 v) { return as_f32(v); }
  static u64 put(T x, unsigned) { return from_f32(x); }
};
template <>
struct Num<VClass::F16> {
  using T = float;
  static T get(u64 v) { return as_f32(v); }
  static u64 put(T x, unsigned) { return from_f32(round_to_f16(x)); }
};
template <>
struct Num<VClass::BF16> {
  using T = float;
  static T get(u64 v) { return as_f32(v); }
  static u64 put(T x, unsigned) { return from_f32(round_to_bf16(x)); }
};
template <>
struct Num<VClass::F64> {
  using T = double;
  static T get(u64 v) { return as_f64(v); }
  static u64 put(T x, unsigned) { return from_f64(x); }
};
template <>
struct Num<VClass::SInt> {
  using T = i64;
  static T get(u64 v) { return static_cast<i64>(v); }
  static u64 put(u64 x, unsigned shift) { return sign_normalize(x, shift); }
};
template <>
struct Num<VClass::UInt> {
  using T = u64;
  static T get(u64 v) { return v; }
  static u64 put(u64 x, unsigned shift) { return zero_normalize(x, shift); }
};
template <>
struct Num<VClass::Bool> {
  using T = u64;
  static T get(u64 v) { return v; }
  static u64 put(u64 x, unsigned) { return x != 0; }
};

// ------------------------------------------------ correctly rounded casts --

// Rounds to f32 with "round to odd" (truncate, then set the last bit if
// inexact). Rounding that to f16/bf16 to nearest even gives the correctly
// rounded result, which rounding twice to nearest would not (f64 -> f16).
inline float f32_round_odd(double d) {
  const float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) bits -= 1;  // step toward zero
  return std::bit_cast<float>(bits | 1u);
}

inline float f32_round_odd(u64 magnitude, bool negative) {
  float f;
  if (magnitude < (u64{1} << 24)) {
    f = static_cast<float>(magnitude);
  } else {
    const int shift = 64 - std::countl_zero(magnitude) - 24;
    u64 top = magnitude >> shift;
    if ((magnitude & ((u64{1} << shift) - 1)) != 0) top |= 1;
    f = std::ldexp(static_cast<float>(top), shift);
  }
  return negative ? -f : f;
}

// Float -> integer: truncation toward zero. Out of range is undefined in the
// ABI; here NaN gives 0 and the rest saturates to i64/u64 (then wraps to the
// target width), never C++ undefined behaviour.
inline u64 float_to_i64_bits(double x) {
  if (std::isnan(x)) return 0;
  if (x >= 9223372036854775808.0) return static_cast<u64>(std::numeric_limits<i64>::max());
  if (x < -9223372036854775808.0) return static_cast<u64>(std::numeric_limits<i64>::min());
  return static_cast<u64>(static_cast<i64>(x));
}
inline u64 float_to_u64_bits(double x) {
  if (std::isnan(x)) return 0;
  if (x < 0) return float_to_i64_bits(x);
  if (x >= 18446744073709551616.0) return std::numeric_limits<u64>::max();
  return static_cast<u64>(x);
}

// ------------------------------------------------- wire bits <-> slots --

// Whether CONST imm / scalar argument bits are a valid value of `dt`
// (zero-extended to 64 bits; bool 0 or 1).
constexpr bool wire_bits_fit(unsigned dt, u64 bits) {
  if (dt == KILN_DTYPE_BOOL) return bits <= 1;
  const unsigned bytes = dtype_bytes(dt);
  return bytes >= 8 || (bits >> (8 * bytes)) == 0;
}

inline u64 slot_from_wire_bits(unsigned dt, u64 bits) {
  switch (dt) {
    case KILN_DTYPE_F16: return from_f32(f16_bits_to_f32(static_cast<std::uint16_t>(bits)));
    case KILN_DTYPE_BF16: return from_f32(bf16_bits_to_f32(static_cast<std::uint16_t>(bits)));
    case KILN_DTYPE_I8: case KILN_DTYPE_I16: case KILN_DTYPE_I32: return sign_normalize(bits, int_shift(dt));
    case KILN_DTYPE_BOOL: return bits != 0;
    default: return bits;
  }
}

// --------------------------------------------------------- memory access --

template <unsigned DT>
inline u64 read_element(const unsigned char* p) {
  if constexpr (DT == KILN_DTYPE_F16 || DT == KILN_DTYPE_BF16) {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return from_f32(DT == KILN_DTYPE_F16 ? f16_bits_to_f32(h) : bf16_bits_to_f32(h));
  } else if constexpr (DT == KILN_DTYPE_BOOL) {
    return *p != 0;
  } else {
    constexpr unsigned bytes = dtype_bytes(DT);
    if constexpr (bytes == 8) {
      u64 v;
      std::memcpy(&v, p, 8);
      return v;
    } else {
      using Raw = std::conditional_t<bytes == 4, std::uint32_t, std::conditional_t<bytes == 2, std::uint16_t, std::uint8_t>>;
      Raw raw;
      std::memcpy(&raw, p, bytes);
      if constexpr (dtype_is_signed_int(DT)) return sign_normalize(raw, int_shift(DT));
      return raw;
    }
  }
}

template <unsigned DT>
inline void write_element(unsigned char* p, u64 v) {
  if constexpr (DT == KILN_DTYPE_F16 || DT == KILN_DTYPE_BF16) {
    const std::uint16_t h = DT == KILN_DTYPE_F16 ? f32_to_f16_bits(as_f32(v)) : f32_to_bf16_bits(as_f32(v));
    std::memcpy(p, &h, 2);
  } else if constexpr (DT == KILN_DTYPE_BOOL) {
    *p = v != 0;
  } else {
    constexpr unsigned bytes = dtype_bytes(DT);
    if constexpr (bytes == 8) {
      std::memcpy(p, &v, 8);
    } else {
      using Raw = std::conditional_t<bytes == 4, std::uint32_t, std::conditional_t<bytes == 2, std::uint16_t, std::uint8_t>>;
      const Raw raw = static_cast<Raw>(v);
      std::memcpy(p, &raw, bytes);
    }
  }
}

}  // namespace kiln::sdk::interp
