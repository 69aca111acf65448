// How every element op is spelled on scalars in a C-family dialect (and, for
// the ops a dialect applies to whole vectors, on vectors: the spelling is the
// same). Internal to the emitter; also the source of c_family_dtype_ops, so
// what a device claims is exactly what the emitter can write.
#pragma once

#include "c_emitter_detail.hpp"

#include "kiln/sdk/grid.hpp"
#include "kiln/sdk/wire.hpp"

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
        default:
          if (code >= KILN_UNARY_COUNT) return "";
          e = call(f64 ? d_.unary_f64[code] : d_.unary_f32[code], x);
          if (e.empty()) return "";
      }
      return rounded(dt, e);
    }
    if (dt == KILN_DTYPE_BOOL) {
      if (code != KILN_UNARY_BIT_NOT) return "";
      return d_.native_bool ? "(!" + x + ")" : "(" + x + " ^ 1)";
    }
    if (!dtype_is_int(dt)) return "";
    const std::string zero = wide(dt, "0"), ux = wide(dt, x);
    switch (code) {
      case KILN_UNARY_NEG: return narrowed(dt, "(" + zero + " - " + ux + ")");
      case KILN_UNARY_BIT_NOT: return "(~" + x + ")";
      case KILN_UNARY_ABS:
        if (!dtype_is_signed_int(dt)) return x;
        return narrowed(dt, "(" + x + " < 0 ? " + zero + " - " + ux + " : " + ux + ")");
      default: return "";
    }
  }

  std::string binary(unsigned code, unsigned dt, const std::string& x, const std::string& y) {
    const auto infix = [&](std::string_view o) { return "(" + x + " " + std::string(o) + " " + y + ")"; };
    if (dt == KILN_DTYPE_BOOL && d_.native_bool) {  // logic, with false < true
      switch (code) {
        case KILN_BINARY_AND: case KILN_BINARY_BIT_AND: case KILN_BINARY_MIN: return infix("&&");
        case KILN_BINARY_OR: case KILN_BINARY_BIT_OR: case KILN_BINARY_MAX: return infix("||");
        case KILN_BINARY_BIT_XOR: case KILN_BINARY_NOT_EQ: return infix("!=");
        case KILN_BINARY_EQ: return infix("==");
        case KILN_BINARY_CMPLT: return "(!" + x + " && " + y + ")";
        case KILN_BINARY_CMPGT: return "(" + x + " && !" + y + ")";
        default: return "";
      }
    }
    switch (code) {  // the same on every other dtype
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
        case KILN_BINARY_POW: e = call(f64 ? d_.pow_f64 : d_.pow_f32, x + ", " + y); break;
        case KILN_BINARY_MOD: e = call(f64 ? d_.fmod_f64 : d_.fmod_f32, x + ", " + y); break;
        default: return "";
      }
      return e.empty() ? e : rounded(dt, e);
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
    const std::string ux = wide(dt, x), uy = wide(dt, y);
    const std::string mask = std::to_string(dtype_bytes(dt) * 8 - 1);
    switch (code) {
      case KILN_BINARY_ADD: return narrowed(dt, "(" + ux + " + " + uy + ")");
      case KILN_BINARY_SUB: return narrowed(dt, "(" + ux + " - " + uy + ")");
      case KILN_BINARY_MUL: return narrowed(dt, "(" + ux + " * " + uy + ")");
      case KILN_BINARY_DIV: return helper("div", dt) + "(" + x + ", " + y + ")";
      case KILN_BINARY_MOD: return helper("mod", dt) + "(" + x + ", " + y + ")";
      case KILN_BINARY_SHL: return narrowed(dt, "(" + ux + " << (" + y + " & " + mask + "))");
      case KILN_BINARY_SHR: return "(" + x + " >> (" + y + " & " + mask + "))";
      default: return "";
    }
  }

  std::string mad(unsigned dt, const std::string& a, const std::string& b, const std::string& c) {
    if (is_real(dt)) return rounded(dt, "(" + a + " * " + b + " + " + c + ")");
    if (!dtype_is_int(dt)) return "";
    return narrowed(dt, "(" + wide(dt, a) + " * " + wide(dt, b) + " + " + wide(dt, c) + ")");
  }

  std::string cast(unsigned from, unsigned to, const std::string& x) {
    if (from == to) return x;
    if (to == KILN_DTYPE_BOOL) return "(" + x + " != 0)";
    if (is_half(to)) {
      if (is_half(from) || from == KILN_DTYPE_F32) return rounded(to, x);
      // Exact in f32: one rounding, as the reference.
      if (from == KILN_DTYPE_BOOL) return to_type(KILN_DTYPE_F32, x);
      if (dtype_bytes(from) <= 2) return rounded(to, to_type(KILN_DTYPE_F32, x));
      // Otherwise through an f32 rounded to odd, still one rounding.
      if (from == KILN_DTYPE_F64) {
        helpers.insert("odd_f64");
        return rounded(to, "kiln_f64_to_f32_odd(" + x + ")");
      }
      const std::string bits = std::to_string(dtype_bytes(from) * 8);
      helpers.insert("odd_" + bits);
      return rounded(to, std::string(dtype_is_signed_int(from) ? "kiln_i" : "kiln_u") + bits + "_to_f32_odd(" + x + ")");
    }
    return to_type(to, x);
  }

  // The variable's value read from / written to memory of dtype dt.
  std::string from_storage(unsigned dt, const std::string& element) {
    if (is_half(dt)) {
      helpers.insert("half");
      return std::string(dt == KILN_DTYPE_F16 ? "kiln_f16_to_f32(" : "kiln_bf16_to_f32(") + element + ")";
    }
    return d_.value_types[dt] == d_.storage_types[dt] ? element : d_.cast(d_.value_types[dt], element);
  }
  std::string to_storage(unsigned dt, const std::string& value) {
    if (is_half(dt)) {
      helpers.insert("half");
      return std::string(dt == KILN_DTYPE_F16 ? "kiln_f32_to_f16(" : "kiln_f32_to_bf16(") + value + ")";
    }
    return d_.value_types[dt] == d_.storage_types[dt] ? value : d_.cast(d_.storage_types[dt], value);
  }

  // An array element: memory[index + offset].
  std::string element(const std::string& memory, const std::string& index, unsigned offset) const {
    const std::string i = d_.subscript_type.empty() ? index : d_.cast(d_.subscript_type, index);
    return memory + "[" + (offset == 0 ? i : i + " + " + std::to_string(offset)) + "]";
  }

 private:
  const Dialect& d_;

  std::string_view wide_unsigned(unsigned dt) const {
    return d_.value_types[dtype_bytes(dt) == 8 ? KILN_DTYPE_U64 : KILN_DTYPE_U32];
  }
  // x in the unsigned type integer arithmetic of dtype dt wraps in, and an
  // expression of that type back in dt where the dialect wants it explicit.
  std::string wide(unsigned dt, const std::string& x) const { return d_.cast(wide_unsigned(dt), x); }
  std::string narrowed(unsigned dt, const std::string& e) const {
    if (!d_.explicit_conversions || wide_unsigned(dt) == d_.value_types[dt]) return e;
    return d_.cast(d_.value_types[dt], e);
  }
  std::string to_type(unsigned dt, const std::string& x) const { return d_.cast(d_.value_types[dt], x); }

  std::string helper(std::string_view what, unsigned dt) {
    const std::string name = std::string(what) + "_" + std::string(dtype_name(dt));
    helpers.insert(name);
    return "kiln_" + name;
  }

  // A call of a function from the dialect's tables ("" when it has none);
  // the dialect's own helpers ("kiln_...") are defined in the prelude.
  std::string call(std::string_view fn, const std::string& args) {
    if (fn.empty()) return "";
    if (fn.starts_with("kiln_")) helpers.insert(std::string(fn));
    return std::string(fn) + "(" + args + ")";
  }

  std::string rounded(unsigned dt, const std::string& e) {
    if (!is_half(dt)) return e;
    helpers.insert("half");
    return std::string(dt == KILN_DTYPE_F16 ? "kiln_round_f16(" : "kiln_round_bf16(") + e + ")";
  }
};

}  // namespace kiln::sdk::detail
