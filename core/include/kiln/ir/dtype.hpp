// kiln/ir/dtype.hpp - element types, value types (dtype x lanes) and the bit
// encoding of scalar constants (CONST imm, VARIABLE argument bits).
//
// Names and sizes come from the SDK's wire tables (kiln/sdk/wire.hpp), so the
// core, the text form and every plugin spell a dtype the same way.
#pragma once

#include "kiln/ir/kernel.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::ir {

bool dtype_valid(DType dtype);
std::string_view dtype_name(DType dtype);  // "f32", "bf16", "bool"; "invalid" otherwise
std::optional<DType> dtype_from_name(std::string_view name);
unsigned dtype_bytes(DType dtype);         // in memory; bool is one byte
unsigned dtype_bits(DType dtype);          // bits of the CONST encoding (bool: 1)
bool is_float(DType dtype);
bool is_int(DType dtype);                  // signed or unsigned integer (not bool)
bool is_signed_int(DType dtype);

// The type of a value: element type and vector width (1 = scalar).
struct ValueType {
  DType dtype = DType::Invalid;
  std::uint8_t lanes = 1;

  bool is_scalar() const { return lanes == 1; }
  bool operator==(const ValueType&) const = default;
};

// "f32", "f32x4", "bool"; invalid dtypes print as "invalid".
std::string type_name(ValueType type);

// --- scalar bit encodings ---------------------------------------------------
// A scalar's bits: its value in its own dtype, zero-extended to 64 bits
// (f32 -> IEEE bits in the low 32 bits; i8 -1 -> 0xFF; bool -> 0 or 1).

// Bits of `value` converted to `dtype` as CAST converts: integers wrap (two's
// complement), floats round to nearest even (f16/bf16 via f32), bool is
// (value != 0).
std::uint64_t encode_int(DType dtype, std::int64_t value);
// As encode_int for floats; integer targets truncate toward zero, saturating
// at the int64 range (NaN -> 0), then wrap to the dtype.
std::uint64_t encode_float(DType dtype, double value);

// The value of `bits` as a double (integers exactly up to 2^53, then rounded).
double decode_double(DType dtype, std::uint64_t bits);
// The value of `bits` of an integer or bool dtype, sign-extended for signed
// types; floats are truncated toward zero (saturating).
std::int64_t decode_int(DType dtype, std::uint64_t bits);

// Whether `bits` is a canonical encoding: no bits above dtype_bits(dtype)
// (and 0 or 1 for bool).
bool bits_canonical(DType dtype, std::uint64_t bits);

}  // namespace kiln::ir
