// Text of scalar constants, shared by the printer and the parser: floats in
// the shortest decimal that reads back to the same bits in their own dtype,
// inf/-inf, nan (the canonical quiet NaN) or nan(0xBITS) for any other NaN;
// integers in decimal; bools as true/false.
#pragma once

#include "kiln/ir/dtype.hpp"
#include "kiln/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::ir::text_detail {

std::uint64_t canonical_nan_bits(DType dtype);
bool is_nan_bits(DType dtype, std::uint64_t bits);

// The text of a CONST value (bits canonical for dtype).
std::string format_scalar(DType dtype, std::uint64_t bits);

// Parses one numeric token ("1.5", "-3", "0x1F", "inf", "-inf", "nan") as a
// value of `dtype`. The error message says what was wrong, without position.
Result<std::uint64_t> parse_scalar(DType dtype, std::string_view token);

// Parses an unsigned decimal or 0x-hex token no greater than `max`.
Result<std::uint64_t> parse_unsigned(std::string_view token, std::uint64_t max);

}  // namespace kiln::ir::text_detail
