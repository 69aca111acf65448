// How every element op is spelled on scalars in a C-family dialect (and, for
// the ops a dialect applies to whole vectors, on vectors: the spelling is the
// same). Internal to the emitter; also the source of c_family_dtype_ops, so
// what a device claims is exactly what the emitter can write.
#pragma once

#include "c_emitter_detail.hpp"

#include "kiln/sdk/grid.hpp"
#include "kiln/sdk/half.hpp"
#include "kiln/sdk/wire.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string>

namespace kiln::sdk::detail {

inline bool is_real(unsigned dt) { return dt == KILN_DTYPE_F32 || dt == KILN_DTYPE_F64 || is_half(dt); }

class Spelling {
 public:
  explicit Spelling(const Dialect& d) : d_(d) {}

  // Prelude helpers the spelled expressions call (see shared_helpers).
  std::set<std::string> helpers;

  // An expression of the op's result, or "" when unsupported.
  std::string unary(unsigned code, unsigned dt, const std::string& x) {
    if (is_real(dt)) {
      std::string e;
      const bool f64 = dt == KILN_DTYPE_F64;
      switch (code) {
        case KILN_UNARY_NEG: e = "(-" + x + ")"; break;
        case KILN_UNARY_RECIP: e = "(1.0" + std::string(f64 ? "" : d_.f32_suffix) + " / " + x + ")"; break;
        case KILN_UNARY_BIT_NOT: return "";
        default: {
          if (code >= KILN_UNARY_COUNT) return "";
          const std::string_view fn = f64 ? d_.unary_f64[code] : d_.unary_f32[code];
          if (fn.empty()) return "";
          e = std::string(fn) + "(" + x + ")";
        }
      }
      return rounded(dt, e);
    }
    if (dt == KILN_DTYPE_BOOL) return code == KILN_UNARY_BIT_NOT ? "(" + x + " ^ 1)" : "";
    if (!dtype_is_int(dt)) return "";
    const std::string u(wide_unsigned(dt));
    switch (code) {
      case KILN_UNARY_NEG: return "((" + u + ")0 - (" + u + ")" + x + ")";
      case KILN_UNARY_BIT_NOT: return "(~" + x + ")";
      case KILN_UNARY_ABS:
        if (!dtype_is_signed_int(dt)) return x;
        return "(" + x + " < 0 ? (" + u + ")0 - (" + u + ")" + x + " : (" + u + ")" + x + ")";
      default: return "";
    }
  }

  std::string binary(unsigned code, unsigned dt, const std::string& x, const std::string& y) {
    const auto infix = [&](std::string_view o) { return "(" + x + " " + std::string(o) + " " + y + ")"; };
    switch (code) {  // the same on every dtype
      case KILN_BINARY_CMPLT: return infix("<");
      case KILN_BINARY_CMPGT: return infix(">");
      case KILN_BINARY_EQ: return infix("==");
      case KILN_BINARY_NOT_EQ: return infix("!=");
      case KILN_BINARY_MAX: return "(" + x + " > " + y + " ? " + x + " : " + y + ")";
      case KILN_BINARY_MIN: return "(" + x + " < " + y + " ? " + x + " : " + y + ")";
      default: break;
    }
    if (is_real(dt)) {
      const bool f64 = dt == KILN_DTYPE_F64;
      std::string e;
      switch (code) {
        case KILN_BINARY_ADD: e = infix("+"); break;
        case KILN_BINARY_SUB: e = infix("-"); break;
        case KILN_BINARY_MUL: e = infix("*"); break;
        case KILN_BINARY_DIV: e = infix("/"); break;
        case KILN_BINARY_POW: e = std::string(f64 ? d_.pow_f64 : d_.pow_f32) + "(" + x + ", " + y + ")"; break;
        case KILN_BINARY_MOD: e = std::string(f64 ? d_.fmod_f64 : d_.fmod_f32) + "(" + x + ", " + y + ")"; break;
        default: return "";
      }
      return rounded(dt, e);
    }
    const bool is_bool = dt == KILN_DTYPE_BOOL;
    if (!is_bool && !dtype_is_int(dt)) return "";
    switch (code) {  // integers and bool
      case KILN_BINARY_AND: case KILN_BINARY_BIT_AND: return infix("&");
      case KILN_BINARY_OR: case KILN_BINARY_BIT_OR: return infix("|");
      case KILN_BINARY_BIT_XOR: return infix("^");
      default: break;
    }
    if (is_bool) return "";
    const std::string u(wide_unsigned(dt));
    const std::string ux = "(" + u + ")" + x, uy = "(" + u + ")" + y;
    const std::string mask = std::to_string(dtype_bytes(dt) * 8 - 1);
    switch (code) {
      case KILN_BINARY_ADD: return "(" + ux + " + " + uy + ")";
      case KILN_BINARY_SUB: return "(" + ux + " - " + uy + ")";
      case KILN_BINARY_MUL: return "(" + ux + " * " + uy + ")";
      case KILN_BINARY_DIV: return helper("div", dt) + "(" + x + ", " + y + ")";
      case KILN_BINARY_MOD: return helper("mod", dt) + "(" + x + ", " + y + ")";
      case KILN_BINARY_SHL: return "(" + ux + " << (" + y + " & " + mask + "))";
      case KILN_BINARY_SHR: return "(" + x + " >> (" + y + " & " + mask + "))";
      default: return "";
    }
  }

  std::string mad(unsigned dt, const std::string& a, const std::string& b, const std::string& c) {
    if (is_real(dt)) return rounded(dt, "(" + a + " * " + b + " + " + c + ")");
    if (!dtype_is_int(dt)) return "";
    const std::string u = "(" + std::string(wide_unsigned(dt)) + ")";
    return "(" + u + a + " * " + u + b + " + " + u + c + ")";
  }

  std::string cast(unsigned from, unsigned to, const std::string& x) {
    if (from == to) return x;
    if (to == KILN_DTYPE_BOOL) return "(" + x + " != 0)";
    if (is_half(to)) {
      if (is_half(from) || from == KILN_DTYPE_F32) return rounded(to, x);
      // One rounding, as the reference: through an f32 rounded to odd.
      if (from == KILN_DTYPE_F64) {
        helpers.insert("odd_f64");
        return rounded(to, "kiln_f64_to_f32_odd(" + x + ")");
      }
      helpers.insert("odd_int");
      if (dtype_is_signed_int(from)) return rounded(to, "kiln_i64_to_f32_odd((" + std::string(d_.value_types[KILN_DTYPE_I64]) + ")" + x + ")");
      return rounded(to, "kiln_u64_to_f32_odd((" + std::string(d_.value_types[KILN_DTYPE_U64]) + ")" + x + ")");
    }
    return "(" + std::string(d_.value_types[to]) + ")" + x;
  }

  // The variable's value read from / written to memory of dtype dt.
  std::string from_storage(unsigned dt, const std::string& element) {
    if (!is_half(dt)) return element;
    helpers.insert("half");
    return std::string(dt == KILN_DTYPE_F16 ? "kiln_f16_to_f32(" : "kiln_bf16_to_f32(") + element + ")";
  }
  std::string to_storage(unsigned dt, const std::string& value) {
    if (!is_half(dt)) return value;
    helpers.insert("half");
    return std::string(dt == KILN_DTYPE_F16 ? "kiln_f32_to_f16(" : "kiln_f32_to_bf16(") + value + ")";
  }

  std::string literal(unsigned dt, std::uint64_t bits) const {
    const std::string type(d_.value_types[dt]);
    switch (dt) {
      case KILN_DTYPE_F32: return float_literal(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
      case KILN_DTYPE_F16: return float_literal(f16_bits_to_f32(static_cast<std::uint16_t>(bits)));
      case KILN_DTYPE_BF16: return float_literal(bf16_bits_to_f32(static_cast<std::uint16_t>(bits)));
      case KILN_DTYPE_F64: {
        const double v = std::bit_cast<double>(bits);
        if (!std::isfinite(v)) return "kiln_bits_f64(" + std::to_string(bits) + std::string(d_.u64_suffix) + ")";
        return "(" + hex_float(v) + ")";
      }
      case KILN_DTYPE_BOOL: return "((" + type + ")" + (bits != 0 ? "1" : "0") + ")";
      case KILN_DTYPE_U64: return "((" + type + ")" + std::to_string(bits) + std::string(d_.u64_suffix) + ")";
      case KILN_DTYPE_I64: {
        const std::int64_t v = static_cast<std::int64_t>(bits);
        const std::string sfx(d_.i64_suffix);
        if (v == std::numeric_limits<std::int64_t>::min())
          return "((" + type + ")(-9223372036854775807" + sfx + " - 1" + sfx + "))";
        return "((" + type + ")" + std::to_string(v) + sfx + ")";
      }
      case KILN_DTYPE_U32: return "((" + type + ")" + std::to_string(static_cast<std::uint32_t>(bits)) + "u)";
      default: {  // narrow integers: always within int
        return "((" + type + ")" + std::to_string(int_from_bits(bits, dt)) + ")";
      }
    }
  }

 private:
  const Dialect& d_;

  std::string_view wide_unsigned(unsigned dt) const {
    return d_.value_types[dtype_bytes(dt) == 8 ? KILN_DTYPE_U64 : KILN_DTYPE_U32];
  }

  std::string helper(std::string_view what, unsigned dt) {
    const std::string name = std::string(what) + "_" + std::string(dtype_name(dt));
    helpers.insert(name);
    return "kiln_" + name;
  }

  std::string rounded(unsigned dt, const std::string& e) {
    if (!is_half(dt)) return e;
    helpers.insert("half");
    return std::string(dt == KILN_DTYPE_F16 ? "kiln_round_f16(" : "kiln_round_bf16(") + e + ")";
  }

  static std::string hex_float(double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%a", v);
    return buffer;
  }

  std::string float_literal(float v) const {
    if (!std::isfinite(v))
      return "kiln_bits_f32(" + std::to_string(std::bit_cast<std::uint32_t>(v)) + "u)";
    return "(" + hex_float(static_cast<double>(v)) + std::string(d_.f32_suffix) + ")";
  }
};

}  // namespace kiln::sdk::detail
