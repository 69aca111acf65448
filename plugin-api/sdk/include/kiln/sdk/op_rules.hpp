// kiln/sdk/op_rules.hpp - which UNARY / BINARY / MAD ops each dtype allows,
// exactly as kernel_ir.h writes them, in one place: the interpreter's
// validation, plugins' default capability bits (kiln_device_info.dtype_ops)
// and the core's verifier all ask these functions.
//
//   floats (bf16 f16 f32 f64): every op except the bitwise ones and shifts;
//   integers: arithmetic, comparisons, MAX/MIN, AND/OR (bitwise), BIT_*,
//             shifts, NEG/BIT_NOT/ABS; no POW and no float-only unary ops;
//   bool: logic (AND OR BIT_* and BIT_NOT as logical not), comparisons
//         (false < true) and MAX/MIN; no arithmetic.
#pragma once

#include <kiln/kernel_ir.h>

#include <cstdint>

#include "kiln/sdk/wire.hpp"

namespace kiln::sdk {

enum class DTypeCategory : std::uint8_t { Invalid, Float, Int, Bool };

constexpr DTypeCategory dtype_category(unsigned dt) {
  if (!dtype_valid(dt)) return DTypeCategory::Invalid;
  if (dt == KILN_DTYPE_BOOL) return DTypeCategory::Bool;
  return dtype_is_float(dt) ? DTypeCategory::Float : DTypeCategory::Int;
}

constexpr bool unary_allowed(unsigned dt, unsigned op) {
  if (op == KILN_UNARY_INVALID || op >= KILN_UNARY_COUNT) return false;
  switch (dtype_category(dt)) {
    case DTypeCategory::Float: return op != KILN_UNARY_BIT_NOT;
    case DTypeCategory::Int: return op == KILN_UNARY_NEG || op == KILN_UNARY_BIT_NOT || op == KILN_UNARY_ABS;
    case DTypeCategory::Bool: return op == KILN_UNARY_BIT_NOT;
    default: return false;
  }
}

constexpr bool binary_allowed(unsigned dt, unsigned op) {
  if (op == KILN_BINARY_INVALID || op >= KILN_BINARY_COUNT) return false;
  switch (dtype_category(dt)) {
    case DTypeCategory::Float:
      switch (op) {
        case KILN_BINARY_OR: case KILN_BINARY_AND: case KILN_BINARY_BIT_XOR: case KILN_BINARY_BIT_OR:
        case KILN_BINARY_BIT_AND: case KILN_BINARY_SHL: case KILN_BINARY_SHR:
          return false;
        default:
          return true;
      }
    case DTypeCategory::Int:
      return op != KILN_BINARY_POW;
    case DTypeCategory::Bool:
      switch (op) {
        case KILN_BINARY_ADD: case KILN_BINARY_SUB: case KILN_BINARY_MUL: case KILN_BINARY_DIV:
        case KILN_BINARY_POW: case KILN_BINARY_MOD: case KILN_BINARY_SHL: case KILN_BINARY_SHR:
          return false;
        default:
          return true;
      }
    default:
      return false;
  }
}

// MAD (x * y + z) is arithmetic: floats and integers.
constexpr bool mad_allowed(unsigned dt) {
  const DTypeCategory c = dtype_category(dt);
  return c == DTypeCategory::Float || c == DTypeCategory::Int;
}

// The unary and binary ops that have a bit in ABI 1.0's dtype_ops word
// (KILN_CAP_UNARY / KILN_CAP_BINARY); later ops are stated only in the 1.1
// per-op arrays (capabilities.hpp). A loop over KILN_CAP_UNARY bits must stop
// here: KILN_CAP_UNARY(14) would be KILN_CAP_BINARY(ADD)'s bit.
inline constexpr unsigned kUnaryOps1_0 = 14;   // KILN_UNARY_COUNT of ABI 1.0
inline constexpr unsigned kBinaryOps1_0 = 20;  // KILN_BINARY_COUNT of ABI 1.0

// The capability bits (KILN_CAP_UNARY / KILN_CAP_BINARY) of every 1.0 op `dt`
// allows: what a device that supports the dtype fully reports in dtype_ops.
// The ops after 1.0 that `dt` allows are claimed with set_unary
// (capabilities.hpp: set_all_ops).
constexpr std::uint32_t all_op_caps(unsigned dt) {
  std::uint32_t caps = 0;
  for (unsigned u = 1; u < kUnaryOps1_0; ++u)
    if (unary_allowed(dt, u)) caps |= KILN_CAP_UNARY(u);
  for (unsigned b = 1; b < kBinaryOps1_0; ++b)
    if (binary_allowed(dt, b)) caps |= KILN_CAP_BINARY(b);
  return caps;
}

}  // namespace kiln::sdk
