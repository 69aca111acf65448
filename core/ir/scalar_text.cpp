#include "scalar_text.hpp"

#include <kiln/sdk/half.hpp>

#include <bit>
#include <charconv>
#include <cmath>
#include <limits>

namespace kiln::ir::text_detail {

namespace {

Error bad(std::string message) { return make_error(ErrorCode::Parse, std::move(message)); }

std::string hex(std::uint64_t v) {
  char buf[24];
  auto end = std::to_chars(buf, buf + sizeof buf, v, 16).ptr;
  return "0x" + std::string(buf, end);
}

// f16/bf16 values are printed with the fewest significant digits that read
// back (as f32, then rounded to the dtype) to the same bits.
std::string shortest_half(DType dtype, std::uint64_t bits) {
  const float value = static_cast<float>(decode_double(dtype, bits));
  char buf[64];
  for (int precision = 1; precision <= 9; ++precision) {
    const auto end = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::general, precision).ptr;
    float back = 0;
    std::from_chars(buf, end, back);
    if (encode_float(dtype, back) == bits) return std::string(buf, end);
  }
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  return std::string(buf, end);
}

template <class F>
Result<F> read_float(std::string_view token, const std::string& type) {
  F value{};
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) return bad("'" + std::string(token) + "' is out of range for " + type);
  if (ec != std::errc() || ptr != token.data() + token.size()) return bad("'" + std::string(token) + "' is not a number");
  return value;
}

bool is_hex(std::string_view token) { return token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X'); }

}  // namespace

std::uint64_t canonical_nan_bits(DType dtype) {
  switch (dtype) {
    case DType::BF16: return 0x7fc0;
    case DType::F16: return 0x7e00;
    case DType::F32: return 0x7fc00000;
    default: return 0x7ff8000000000000;
  }
}

bool is_nan_bits(DType dtype, std::uint64_t bits) {
  return is_float(dtype) && bits_canonical(dtype, bits) && std::isnan(decode_double(dtype, bits));
}

std::string format_scalar(DType dtype, std::uint64_t bits) {
  if (dtype == DType::Bool) return bits != 0 ? "true" : "false";
  if (dtype == DType::U64) return std::to_string(bits);
  if (!is_float(dtype)) return std::to_string(decode_int(dtype, bits));
  if (is_nan_bits(dtype, bits)) return bits == canonical_nan_bits(dtype) ? "nan" : "nan(" + hex(bits) + ")";
  const double value = decode_double(dtype, bits);
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  if (dtype == DType::F64) return std::string(buf, std::to_chars(buf, buf + sizeof buf, value).ptr);
  if (dtype == DType::F32)
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, static_cast<float>(value)).ptr);
  return shortest_half(dtype, bits);
}

Result<std::uint64_t> parse_unsigned(std::string_view token, std::uint64_t max) {
  const bool hexadecimal = is_hex(token);
  const std::string_view digits = hexadecimal ? token.substr(2) : token;
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, hexadecimal ? 16 : 10);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && value > max))
    return bad("'" + std::string(token) + "' is out of range (at most " + std::to_string(max) + ")");
  if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty())
    return bad("'" + std::string(token) + "' is not an unsigned integer");
  return value;
}

Result<std::uint64_t> parse_scalar(DType dtype, std::string_view token) {
  std::string_view body = token;
  if (!body.empty() && body[0] == '+') body.remove_prefix(1);
  const std::string type(dtype_name(dtype));

  if (is_float(dtype)) {
    if (body == "inf") return encode_float(dtype, std::numeric_limits<double>::infinity());
    if (body == "-inf") return encode_float(dtype, -std::numeric_limits<double>::infinity());
    if (body == "nan") return canonical_nan_bits(dtype);
    if (is_hex(body) || body.find_first_of("nN") != std::string_view::npos)
      return bad("expected a decimal number, inf, -inf or nan for " + type + ", got '" + std::string(token) + "'");
    double value = 0;
    if (dtype == DType::F64) {
      KILN_TRY_ASSIGN(value, read_float<double>(body, type));
    } else {
      KILN_TRY_ASSIGN(const float f, read_float<float>(body, type));
      value = f;
    }
    const std::uint64_t bits = encode_float(dtype, value);
    if (std::isinf(decode_double(dtype, bits)))
      return bad("'" + std::string(token) + "' is out of range for " + type);
    return bits;
  }

  if (dtype == DType::Bool) {
    if (body == "true" || body == "1") return std::uint64_t{1};
    if (body == "false" || body == "0") return std::uint64_t{0};
    return bad("expected true or false for bool, got '" + std::string(token) + "'");
  }

  // Integers: decimal or 0x-hex, with a sign; range-checked for the dtype.
  const bool negative = !body.empty() && body[0] == '-';
  if (negative) body.remove_prefix(1);
  auto magnitude = parse_unsigned(body, std::numeric_limits<std::uint64_t>::max());
  if (!magnitude.ok()) return bad("expected an integer for " + type + ", got '" + std::string(token) + "'");
  const unsigned bits = dtype_bits(dtype);
  const std::uint64_t max_positive =
      is_signed_int(dtype) ? (std::uint64_t{1} << (bits - 1)) - 1
                           : (bits == 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t{1} << bits) - 1);
  const std::uint64_t max_negative = is_signed_int(dtype) ? std::uint64_t{1} << (bits - 1) : 0;
  if ((negative && *magnitude > max_negative) || (!negative && *magnitude > max_positive))
    return bad("'" + std::string(token) + "' is out of range for " + type);
  const std::uint64_t twos = negative ? ~*magnitude + 1 : *magnitude;
  return bits == 64 ? twos : twos & ((std::uint64_t{1} << bits) - 1);
}

}  // namespace kiln::ir::text_detail
