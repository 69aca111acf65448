// kiln/sdk/half.hpp - f16 (IEEE binary16) and bf16 conversions in software,
// round to nearest even, NaN-preserving. Used by the interpreter, references
// and emitters' preludes, so every place rounds the same way.
#pragma once

#include <bit>
#include <cstdint>

namespace kiln::sdk {

constexpr float bf16_bits_to_f32(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

constexpr std::uint16_t f32_to_bf16_bits(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

constexpr float f16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf/NaN
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);  // +-0
  // Subnormal: normalise.
  std::uint32_t e = 113;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mantissa & 0x3ffu) << 13));
}

constexpr std::uint16_t f32_to_f16_bits(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf (>= 65520)
  if (abs >= 0x38800000u) {  // normal f16 range (>= 2^-14)
    const std::uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }
  if (abs < 0x33000000u) return sign;  // < 2^-25: rounds to zero
  // Subnormal f16: shift the implicit-1 mantissa right, round to nearest even.
  const std::uint32_t exponent = abs >> 23;
  const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126 - exponent;  // 14..24 (subnormal step is 2^-24)
  const std::uint32_t halfway = 1u << (shift - 1);
  std::uint32_t result = mantissa >> shift;
  const std::uint32_t remainder = mantissa & ((1u << shift) - 1);
  if (remainder > halfway || (remainder == halfway && (result & 1u))) ++result;
  return static_cast<std::uint16_t>(sign | result);
}

// Rounds a float to the nearest f16 / bf16 value, as a float.
constexpr float round_to_f16(float v) { return f16_bits_to_f32(f32_to_f16_bits(v)); }
constexpr float round_to_bf16(float v) { return bf16_bits_to_f32(f32_to_bf16_bits(v)); }

}  // namespace kiln::sdk
