#include "glsl_types.hpp"

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/half.hpp>

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kiln::vulkan {

namespace {

std::string float_literal(float v) {
  if (!std::isfinite(v)) return "uintBitsToFloat(" + std::to_string(std::bit_cast<std::uint32_t>(v)) + "u)";
  char text[48];
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v));  // round-trips exactly
  std::string s = text;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return "float(" + s + ")";
}

std::string double_literal(double v) {
  if (!std::isfinite(v)) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(v);
    return "packDouble2x32(uvec2(" + std::to_string(static_cast<std::uint32_t>(bits)) + "u, " +
           std::to_string(static_cast<std::uint32_t>(bits >> 32)) + "u))";
  }
  char text[48];
  std::snprintf(text, sizeof text, "%.17g", v);
  std::string s = text;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return "double(" + s + "lf)";
}

}  // namespace

// How a dtype is held in a variable (halves compute as float).
std::string value_type(unsigned dt) {
  switch (dt) {
    case KILN_DTYPE_BF16: case KILN_DTYPE_F16: case KILN_DTYPE_F32: return "float";
    case KILN_DTYPE_F64: return "double";
    case KILN_DTYPE_U8: return "uint8_t";
    case KILN_DTYPE_U16: return "uint16_t";
    case KILN_DTYPE_U32: return "uint";
    case KILN_DTYPE_U64: return "uint64_t";
    case KILN_DTYPE_I8: return "int8_t";
    case KILN_DTYPE_I16: return "int16_t";
    case KILN_DTYPE_I32: return "int";
    case KILN_DTYPE_I64: return "int64_t";
    default: return "bool";
  }
}

// How its elements lie in memory (buffers, shared and register arrays).
std::string memory_type(unsigned dt) {
  if (is_half(dt)) return "uint16_t";
  if (dt == KILN_DTYPE_BOOL) return "uint8_t";
  return value_type(dt);
}

std::string vector_type(unsigned dt, unsigned lanes) {
  if (lanes == 1) return value_type(dt);
  const std::string n = std::to_string(lanes);
  switch (dt) {
    case KILN_DTYPE_BF16: case KILN_DTYPE_F16: case KILN_DTYPE_F32: return "vec" + n;
    case KILN_DTYPE_F64: return "dvec" + n;
    case KILN_DTYPE_U8: return "u8vec" + n;
    case KILN_DTYPE_U16: return "u16vec" + n;
    case KILN_DTYPE_U32: return "uvec" + n;
    case KILN_DTYPE_U64: return "u64vec" + n;
    case KILN_DTYPE_I8: return "i8vec" + n;
    case KILN_DTYPE_I16: return "i16vec" + n;
    case KILN_DTYPE_I32: return "ivec" + n;
    case KILN_DTYPE_I64: return "i64vec" + n;
    default: return "bvec" + n;
  }
}



std::string literal(unsigned dt, std::uint64_t bits) {
  switch (dt) {
    case KILN_DTYPE_F32: return float_literal(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
    case KILN_DTYPE_F16: return float_literal(sdk::f16_bits_to_f32(static_cast<std::uint16_t>(bits)));
    case KILN_DTYPE_BF16: return float_literal(sdk::bf16_bits_to_f32(static_cast<std::uint16_t>(bits)));
    case KILN_DTYPE_F64: return double_literal(std::bit_cast<double>(bits));
    case KILN_DTYPE_BOOL: return bits != 0 ? "true" : "false";
    case KILN_DTYPE_U32: return std::to_string(static_cast<std::uint32_t>(bits)) + "u";
    case KILN_DTYPE_I32: {
      const auto v = static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
      return v == std::numeric_limits<std::int32_t>::min() ? "int(0x80000000u)" : "int(" + std::to_string(v) + ")";
    }
    case KILN_DTYPE_U64: return "uint64_t(" + std::to_string(bits) + "ul)";
    case KILN_DTYPE_I64: {
      const auto v = static_cast<std::int64_t>(bits);
      if (v == std::numeric_limits<std::int64_t>::min()) return "int64_t(0x8000000000000000ul)";
      return "int64_t(" + std::to_string(v) + "l)";
    }
    default:  // narrow integers: always within int
      return value_type(dt) + "(" + std::to_string(sdk::int_from_bits(bits, dt)) + ")";
  }
}

}  // namespace kiln::vulkan
