#include "kiln/ir/dtype.hpp"

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/half.hpp>
#include <kiln/sdk/wire.hpp>

#include <bit>
#include <cmath>
#include <limits>

namespace kiln::ir {

namespace {
unsigned raw(DType dtype) { return static_cast<unsigned>(dtype); }

std::int64_t saturate_to_int64(double value) {
  if (std::isnan(value)) return 0;
  constexpr double kLimit = 9223372036854775808.0;  // 2^63
  if (value >= kLimit) return std::numeric_limits<std::int64_t>::max();
  if (value < -kLimit) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(value);
}

std::uint64_t low_bits_mask(unsigned bits) { return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1; }
}  // namespace

bool dtype_valid(DType dtype) { return sdk::dtype_valid(raw(dtype)); }
std::string_view dtype_name(DType dtype) { return sdk::dtype_name(raw(dtype)); }
unsigned dtype_bytes(DType dtype) { return sdk::dtype_bytes(raw(dtype)); }
unsigned dtype_bits(DType dtype) { return dtype == DType::Bool ? 1 : 8 * dtype_bytes(dtype); }
bool is_float(DType dtype) { return sdk::dtype_is_float(raw(dtype)); }
bool is_int(DType dtype) { return sdk::dtype_is_int(raw(dtype)); }
bool is_signed_int(DType dtype) { return sdk::dtype_is_signed_int(raw(dtype)); }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (unsigned d = 1; d < KILN_DTYPE_COUNT; ++d)
    if (sdk::dtype_name(d) == name) return static_cast<DType>(d);
  return std::nullopt;
}

std::string type_name(ValueType type) {
  std::string name(dtype_name(type.dtype));
  if (type.lanes != 1) name += "x" + std::to_string(type.lanes);
  return name;
}

std::uint64_t encode_int(DType dtype, std::int64_t value) {
  switch (dtype) {
    case DType::BF16: return sdk::f32_to_bf16_bits(static_cast<float>(value));
    case DType::F16: return sdk::f32_to_f16_bits(static_cast<float>(value));
    case DType::F32: return std::bit_cast<std::uint32_t>(static_cast<float>(value));
    case DType::F64: return std::bit_cast<std::uint64_t>(static_cast<double>(value));
    case DType::Bool: return value != 0 ? 1 : 0;
    default: return static_cast<std::uint64_t>(value) & low_bits_mask(dtype_bits(dtype));
  }
}

std::uint64_t encode_float(DType dtype, double value) {
  switch (dtype) {
    case DType::BF16: return sdk::f32_to_bf16_bits(static_cast<float>(value));
    case DType::F16: return sdk::f32_to_f16_bits(static_cast<float>(value));
    case DType::F32: return std::bit_cast<std::uint32_t>(static_cast<float>(value));
    case DType::F64: return std::bit_cast<std::uint64_t>(value);
    case DType::Bool: return value != 0 ? 1 : 0;  // NaN != 0 is true, as CAST
    default: return encode_int(dtype, saturate_to_int64(value));
  }
}

double decode_double(DType dtype, std::uint64_t bits) {
  switch (dtype) {
    case DType::BF16: return sdk::bf16_bits_to_f32(static_cast<std::uint16_t>(bits));
    case DType::F16: return sdk::f16_bits_to_f32(static_cast<std::uint16_t>(bits));
    case DType::F32: return std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    case DType::F64: return std::bit_cast<double>(bits);
    case DType::U64: return static_cast<double>(bits);
    default: return static_cast<double>(decode_int(dtype, bits));
  }
}

std::int64_t decode_int(DType dtype, std::uint64_t bits) {
  switch (dtype) {
    case DType::BF16: case DType::F16: case DType::F32: case DType::F64:
      return saturate_to_int64(decode_double(dtype, bits));
    default: return sdk::int_from_bits(bits, raw(dtype));
  }
}

bool bits_canonical(DType dtype, std::uint64_t bits) {
  if (!dtype_valid(dtype)) return false;
  return (bits & ~low_bits_mask(dtype_bits(dtype))) == 0;
}

}  // namespace kiln::ir
