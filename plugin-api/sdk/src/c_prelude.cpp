// The prelude helpers shared by every C-family dialect. They are written in
// the C subset that C, OpenCL C, CUDA and GLSL all accept, with placeholders
// for the few words that differ ($fn: function qualifiers; $f32, $u16, $u32,
// $u64...: type names; $abs64: fabs) and casts written @TYPE(x). The f16/bf16
// conversions mirror kiln/sdk/half.hpp bit for bit (round to nearest even, NaN
// kept quiet with its payload); a dialect may replace them with its own
// (Dialect::half_conversion: CUDA's cvt instructions).
#include "c_emitter_detail.hpp"

#include "kiln/sdk/wire.hpp"

namespace kiln::sdk::detail {

namespace {

// The f16/bf16 conversions, each on its own (a dialect may write any of them
// its own way: Dialect::half_conversion), then the rounding built on them.
struct HalfConversion {
  std::string_view name, text;
};
constexpr HalfConversion kHalfConversions[] = {
    {"kiln_bf16_to_f32", R"(
$fn $f32 kiln_bf16_to_f32($u16 h) { return kiln_bits_f32(@$u32(h) << 16); }
)"},
    {"kiln_f32_to_bf16", R"($fn $u16 kiln_f32_to_bf16($f32 v) {
  const $u32 x = kiln_f32_bits(v);
  if ((x & 0x7fffffffu) > 0x7f800000u) return @$u16((x >> 16) | 0x40u);
  return @$u16((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
)"},
    {"kiln_f16_to_f32", R"($fn $f32 kiln_f16_to_f32($u16 h) {
  const $u32 sign = @$u32(h & 0x8000u) << 16;
  const $u32 e = @$u32(h >> 10) & 0x1fu;
  const $u32 m = @$u32(h) & 0x3ffu;
  if (e == 0x1fu) return kiln_bits_f32(sign | 0x7f800000u | (m << 13));
  if (e != 0u) return kiln_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
  /* zero or subnormal: m * 2^-24 is exact in f32 */
  const $f32 r = @$f32(m) * 5.9604644775390625e-8f;
  return sign != 0u ? -r : r;
}
)"},
    {"kiln_f32_to_f16", R"($fn $u16 kiln_f32_to_f16($f32 v) {
  const $u32 x = kiln_f32_bits(v);
  const $u32 sign = (x >> 16) & 0x8000u;
  const $u32 a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return @$u16(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return @$u16(sign | 0x7c00u);
  if (a >= 0x38800000u) return @$u16(sign | ((a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13));
  if (a < 0x33000000u) return @$u16(sign);
  const $u32 shift = 126u - (a >> 23);
  const $u32 m = (a & 0x7fffffu) | 0x800000u;
  const $u32 halfway = 1u << (shift - 1u);
  const $u32 rest = m & ((1u << shift) - 1u);
  $u32 r = m >> shift;
  if (rest > halfway || (rest == halfway && (r & 1u) != 0u)) r += 1u;
  return @$u16(sign | r);
}
)"},
};
constexpr std::string_view kHalfRounding = R"($fn $f32 kiln_round_f16($f32 v) { return kiln_f16_to_f32(kiln_f32_to_f16(v)); }
$fn $f32 kiln_round_bf16($f32 v) { return kiln_bf16_to_f32(kiln_f32_to_bf16(v)); }
)";

// f64 and 32/64-bit integers reach f16/bf16 through an f32 rounded to odd
// (truncated, last bit set when inexact): the final rounding to nearest even
// is then the only one, as if converted directly.
constexpr std::string_view kOddFromF64 = R"(
$fn $f32 kiln_f64_to_f32_odd($f64 x) {
  $f32 f = @$f32(x);
  if (@$f64(f) != x && x == x) {
    $u32 b = kiln_f32_bits(f);
    if ($abs64(@$f64(f)) > $abs64(x)) b -= 1u;
    f = kiln_bits_f32(b | 1u);
  }
  return f;
}
)";
// $N-bit integers (32 or 64; narrower ones convert to f32 exactly).
constexpr std::string_view kOddFromInt = R"(
$fn $f32 kiln_u$N_to_f32_odd($U m) {
  $u32 drop = 0u;
  while ((m >> drop) >= 0x1000000u) drop += 1u;
  $U kept = m >> drop;
  if (drop != 0u && (m & ((@$U(1) << drop) - 1u)) != 0u) kept |= 1u;
  return @$f32(kept) * kiln_bits_f32((127u + drop) << 23);
}
$fn $f32 kiln_i$N_to_f32_odd($S x) {
  const $f32 r = kiln_u$N_to_f32_odd(x < 0 ? @$U(0) - @$U(x) : @$U(x));
  return x < 0 ? -r : r;
}
)";

// Division by zero gives 0 and MIN / -1 wraps: a buggy kernel must not raise
// SIGFPE in the host process (the reference interpreter reports it instead).
// The remainder is spelled a - (a / b) * b: C's %, which GLSL's % is not on
// negative operands ($W: the unsigned type $T's arithmetic wraps in).
constexpr std::string_view kSignedDiv =
    "$fn $T kiln_div_$N($T a, $T b) { return b == 0 ? @$T(0) : b == @$T(-1) ? @$T(@$W(0) - @$W(a)) : @$T(a / b); }\n";
constexpr std::string_view kSignedMod =
    "$fn $T kiln_mod_$N($T a, $T b) { return (b == 0 || b == @$T(-1)) ? @$T(0) : @$T(a - (a / b) * b); }\n";
constexpr std::string_view kUnsignedDiv = "$fn $T kiln_div_$N($T a, $T b) { return b == 0u ? @$T(0) : @$T(a / b); }\n";
constexpr std::string_view kUnsignedMod = "$fn $T kiln_mod_$N($T a, $T b) { return b == 0u ? @$T(0) : @$T(a % b); }\n";

// A primary expression: a name, a number or a parenthesized expression.
bool is_primary(std::string_view x) {
  if (x.size() > 1 && x.front() == '-') x.remove_prefix(1);
  return !x.empty() && x.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") == std::string_view::npos;
}

// Every cast marker `@TYPE(x)` of the helper texts in the dialect's spelling.
std::string with_casts(const Dialect& d, std::string_view text) {
  std::string out;
  for (std::size_t at = 0;;) {
    const std::size_t marker = text.find('@', at);
    if (marker == std::string_view::npos) return out + std::string(text.substr(at));
    const std::size_t open = text.find('(', marker), close = enclosed_end(text, open);
    const std::string x = with_casts(d, text.substr(open + 1, close - open - 1));
    out += std::string(text.substr(at, marker - at)) + d.cast(text.substr(marker + 1, open - marker - 1), is_primary(x) ? x : "(" + x + ")");
    at = close + 1;
  }
}

std::string with_types(const Dialect& d, std::string text) {
  text = replace_all(std::move(text), "$fn ", d.function_prefix.empty() ? "" : std::string(d.function_prefix) + " ");
  text = replace_all(std::move(text), "$abs64", d.unary_f64[KILN_UNARY_ABS]);
  text = replace_all(std::move(text), "$f32", d.value_types[KILN_DTYPE_F32]);
  text = replace_all(std::move(text), "$f64", d.value_types[KILN_DTYPE_F64]);
  text = replace_all(std::move(text), "$i64", d.value_types[KILN_DTYPE_I64]);
  text = replace_all(std::move(text), "$u16", d.value_types[KILN_DTYPE_U16]);
  text = replace_all(std::move(text), "$u32", d.value_types[KILN_DTYPE_U32]);
  text = replace_all(std::move(text), "$u64", d.value_types[KILN_DTYPE_U64]);
  return with_casts(d, text);
}

}  // namespace

unsigned value_bytes(unsigned dt) { return is_half(dt) ? 4u : dtype_bytes(dt); }

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::size_t enclosed_end(std::string_view text, std::size_t open) {
  int depth = 0;
  for (std::size_t at = open; at < text.size(); ++at) {
    if (text[at] == '(') ++depth;
    if (text[at] == ')' && --depth == 0) return at;
  }
  return std::string_view::npos;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string math_helper(const Dialect& d, std::string_view name) {
  static constexpr std::string_view kSigmoid = R"($fn $T kiln_sigmoid_$N($T x) {
  if (x >= @$T(0)) return @$T(1) / (@$T(1) + $exp(-x));
  const $T e = $exp(x);
  return e / (@$T(1) + e);
}
)";
  static constexpr std::string_view kRsqrt = "$fn $T kiln_rsqrt_$N($T x) { return @$T(1) / $sqrt(x); }\n";
  const bool f64 = name.ends_with("_f64");
  if (!f64 && !name.ends_with("_f32")) return "";
  const auto& functions = f64 ? d.unary_f64 : d.unary_f32;
  std::string text;
  if (name.starts_with("kiln_sigmoid_") && !functions[KILN_UNARY_EXP].empty()) {
    text = replace_all(std::string(kSigmoid), "$exp", functions[KILN_UNARY_EXP]);
  } else if (name.starts_with("kiln_rsqrt_") && !functions[KILN_UNARY_SQRT].empty()) {
    text = replace_all(std::string(kRsqrt), "$sqrt", functions[KILN_UNARY_SQRT]);
  } else {
    return "";
  }
  text = replace_all(std::move(text), "$T", d.value_types[f64 ? KILN_DTYPE_F64 : KILN_DTYPE_F32]);
  return with_types(d, replace_all(std::move(text), "$N", f64 ? "f64" : "f32"));
}

std::string shared_helpers(const Dialect& d, const std::set<std::string>& helpers) {
  std::string out;
  for (const std::string& name : helpers)
    if (name.starts_with("kiln_") && d.helper != nullptr) out += d.helper(d, name);
  if (helpers.contains("half")) {
    for (const auto& [name, text] : kHalfConversions) {
      const std::string software = with_types(d, std::string(text));
      out += d.half_conversion != nullptr ? d.half_conversion(d, name, software) : software;
    }
    out += with_types(d, std::string(kHalfRounding));
  }
  if (helpers.contains("odd_f64")) out += with_types(d, std::string(kOddFromF64));
  for (const unsigned bits : {32u, 64u}) {
    if (!helpers.contains("odd_" + std::to_string(bits))) continue;
    const bool wide = bits == 64;
    std::string text = replace_all(std::string(kOddFromInt), "$N", std::to_string(bits));
    text = replace_all(std::move(text), "$U", d.value_types[wide ? KILN_DTYPE_U64 : KILN_DTYPE_U32]);
    out += with_types(d, replace_all(std::move(text), "$S", d.value_types[wide ? KILN_DTYPE_I64 : KILN_DTYPE_I32]));
  }
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt) {
    if (!dtype_is_int(dt)) continue;
    const std::string name(dtype_name(dt));
    const bool is_signed = dtype_is_signed_int(dt);
    for (const auto& [what, text] : {std::pair{"div_", is_signed ? kSignedDiv : kUnsignedDiv},
                                     std::pair{"mod_", is_signed ? kSignedMod : kUnsignedMod}}) {
      if (!helpers.contains(what + name)) continue;
      std::string helper = replace_all(std::string(text), "$T", d.value_types[dt]);
      helper = replace_all(std::move(helper), "$W", d.value_types[dtype_bytes(dt) == 8 ? KILN_DTYPE_U64 : KILN_DTYPE_U32]);
      out += with_types(d, replace_all(std::move(helper), "$N", name));
    }
  }
  return out;
}

}  // namespace kiln::sdk::detail
