// Internal to the C-family emitter: shared between the emitter core, the
// shared prelude and the dialect tables.
#pragma once

#include "kiln/sdk/c_emitter.hpp"

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::sdk::detail {

constexpr bool is_half(unsigned dt) { return dt == KILN_DTYPE_F16 || dt == KILN_DTYPE_BF16; }

// Bytes of one lane of a value of dtype dt (f16/bf16 are held as float).
unsigned value_bytes(unsigned dt);

// The text with every `from` replaced by `to`.
std::string replace_all(std::string text, std::string_view from, std::string_view to);

// The index of the ')' matching the '(' at text[open] (npos: none).
std::size_t enclosed_end(std::string_view text, std::size_t open);

// "a, b, c"
std::string joined(const std::vector<std::string>& items);

// Helpers every dialect shares, written once in the C subset all of them
// accept, those named in `helpers`: "half" (f16/bf16 conversions and
// rounding), "odd_f64", "odd_32", "odd_64" (round-to-odd f32 on the way to
// f16/bf16 from f64 and 32/64-bit integers),
// and integer division ("div_i32", "mod_u8", ...); and the dialect's own
// helpers (Dialect::helper), named "kiln_...".
std::string shared_helpers(const Dialect& d, const std::set<std::string>& helpers);
// The math helpers a dialect's unary tables may name: kiln_sigmoid_f32/f64
// (1 / (1 + e^-x) with no overflow: e^x / (1 + e^x) for x < 0) and
// kiln_rsqrt_f32/f64 (1 / sqrt(x)), written with the dialect's exp and sqrt;
// "" for any other name. A dialect's Dialect::helper hands these names here.
std::string math_helper(const Dialect& d, std::string_view name);

}  // namespace kiln::sdk::detail
