// glsl_types.hpp - how kiln dtypes are spelled in GLSL: variable types
// (f16/bf16 compute as float), memory element types (halves as uint16_t,
// BOOL as uint8_t), vector types, and exact literals (GLSL has no hex
// floats: finite floats as round-tripping decimals, others by their bits).
#pragma once

#include <kiln/kernel_ir.h>

#include <cstdint>
#include <string>

namespace kiln::vulkan {

constexpr bool is_half(unsigned dt) { return dt == KILN_DTYPE_F16 || dt == KILN_DTYPE_BF16; }
constexpr bool is_real(unsigned dt) { return dt == KILN_DTYPE_F32 || dt == KILN_DTYPE_F64 || is_half(dt); }

std::string value_type(unsigned dt);
std::string memory_type(unsigned dt);
std::string vector_type(unsigned dt, unsigned lanes);
// A CONST's value: imm bits of dtype dt.
std::string literal(unsigned dt, std::uint64_t bits);

}  // namespace kiln::vulkan
