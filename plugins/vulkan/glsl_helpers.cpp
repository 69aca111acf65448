// GLSL helper functions: f16/bf16 <-> f32 in software (the same rounding as
// kiln/sdk/half.hpp, independent of the device's conversion and denormal
// modes), C-like pow and fmod.
#include "glsl_codegen.hpp"

namespace kiln::vulkan {

namespace {

constexpr const char* kHalfHelpers = R"(float kiln_f16_to_f32(uint16_t bits) {
  uint h = uint(bits);
  uint sign = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu;
  uint m = h & 0x3ffu;
  if (e == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
  if (e != 0u) return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0u) return uintBitsToFloat(sign);
  uint shift = uint(10 - findMSB(m));  // subnormal: normalise
  return uintBitsToFloat(sign | ((113u - shift) << 23) | (((m << shift) & 0x3ffu) << 13));
}
uint16_t kiln_f32_to_f16(float value) {
  uint x = floatBitsToUint(value);
  uint sign = (x >> 16) & 0x8000u;
  uint a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);
  if (a >= 0x38800000u) return uint16_t(sign | ((a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13));
  if (a < 0x33000000u) return uint16_t(sign);
  uint m = (a & 0x7fffffu) | 0x800000u;
  uint shift = 126u - (a >> 23);
  uint halfway = 1u << (shift - 1u);
  uint result = m >> shift;
  uint rest = m & ((1u << shift) - 1u);
  if (rest > halfway || (rest == halfway && (result & 1u) != 0u)) ++result;
  return uint16_t(sign | result);
}
float kiln_bf16_to_f32(uint16_t bits) { return uintBitsToFloat(uint(bits) << 16); }
uint16_t kiln_f32_to_bf16(float value) {
  uint x = floatBitsToUint(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
float kiln_round_f16(float x) { return kiln_f16_to_f32(kiln_f32_to_f16(x)); }
float kiln_round_bf16(float x) { return kiln_bf16_to_f32(kiln_f32_to_bf16(x)); }
)";

// GLSL's pow is undefined for x < 0 and x == 0; C's is not.
constexpr const char* kPow = R"(float kiln_pow(float x, float y) {
  if (y == 0.0) return 1.0;
  if (x == 0.0) return y < 0.0 ? uintBitsToFloat(0x7f800000u) : 0.0;
  float r = pow(abs(x), y);
  if (x < 0.0) {
    if (trunc(y) != y) return uintBitsToFloat(0x7fc00000u);
    if (mod(y, 2.0) == 1.0) r = -r;
  }
  return r;
}
)";

// GLSL's mod takes the sign of y; fmod (kiln's MOD) that of x.
constexpr const char* kFmodF32 = "float kiln_fmod(float x, float y) { return x - y * trunc(x / y); }\n";
constexpr const char* kFmodF64 = "double kiln_fmod(double x, double y) { return x - y * trunc(x / y); }\n";

}  // namespace

std::string glsl_helpers(bool halves, bool pow, bool fmod_f32, bool fmod_f64) {
  std::string text;
  if (halves) text += kHalfHelpers;
  if (pow) text += kPow;
  if (fmod_f32) text += kFmodF32;
  if (fmod_f64) text += kFmodF64;
  return text;
}

}  // namespace kiln::vulkan
