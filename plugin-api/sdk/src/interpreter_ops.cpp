// Element-wise semantics of UNARY, BINARY, CAST and MAD for every
// computation class, as row functions over all lanes of a batch (so the
// dispatch cost is paid once per op, not once per thread). Tables are built
// at compile time; an op a class does not allow (op_rules.hpp) has no entry.
#include <cmath>
#include <utility>

#include "interpreter_math.hpp"
#include "interpreter_program.hpp"
#include "kiln/sdk/op_rules.hpp"

namespace kiln::sdk::interp {

namespace {

// ------------------------------------------------------------------ unary --

template <VClass C, unsigned OP>
u64 unary_element(u64 x, unsigned shift) {
  using N = Num<C>;
  if constexpr (is_float_class(C)) {
    using T = typename N::T;
    const T a = N::get(x);
    if constexpr (is_math_1_1(OP)) return put_double<C>(math_1_1(OP, static_cast<double>(a)));
    switch (OP) {
      case KILN_UNARY_NEG: return N::put(-a, shift);
      case KILN_UNARY_EXP: return N::put(std::exp(a), shift);
      case KILN_UNARY_EXP2: return N::put(std::exp2(a), shift);
      case KILN_UNARY_LN: return N::put(std::log(a), shift);
      case KILN_UNARY_LOG2: return N::put(std::log2(a), shift);
      case KILN_UNARY_RECIP: return N::put(T(1) / a, shift);
      case KILN_UNARY_SQRT: return N::put(std::sqrt(a), shift);
      case KILN_UNARY_SIN: return N::put(std::sin(a), shift);
      case KILN_UNARY_COS: return N::put(std::cos(a), shift);
      case KILN_UNARY_FLOOR: return N::put(std::floor(a), shift);
      case KILN_UNARY_TRUNC: return N::put(std::trunc(a), shift);
      case KILN_UNARY_ABS: return N::put(std::fabs(a), shift);
      default: return 0;
    }
  } else if constexpr (C == VClass::Bool) {
    return x ^ 1u;  // BIT_NOT: logical not
  } else {
    switch (OP) {
      case KILN_UNARY_NEG: return N::put(0 - x, shift);
      case KILN_UNARY_BIT_NOT: return N::put(~x, shift);
      case KILN_UNARY_ABS:
        if constexpr (C == VClass::SInt) return static_cast<i64>(x) < 0 ? N::put(0 - x, shift) : x;
        return x;
      default: return 0;
    }
  }
}

template <VClass C, unsigned OP>
std::size_t unary_rows(const Row& r) {
  for (std::size_t l = 0; l < r.n; ++l) r.out[l] = unary_element<C, OP>(r.a[l], r.shift);
  return r.n;
}

// ----------------------------------------------------------------- binary --

template <VClass C, unsigned OP>
u64 binary_element(u64 x, u64 y, unsigned shift) {
  using N = Num<C>;
  if constexpr (is_float_class(C)) {
    using T = typename N::T;
    const T a = N::get(x);
    const T b = N::get(y);
    switch (OP) {
      case KILN_BINARY_ADD: return N::put(a + b, shift);
      case KILN_BINARY_SUB: return N::put(a - b, shift);
      case KILN_BINARY_MUL: return N::put(a * b, shift);
      case KILN_BINARY_DIV: return N::put(a / b, shift);
      case KILN_BINARY_POW: return N::put(std::pow(a, b), shift);
      case KILN_BINARY_MOD: return N::put(std::fmod(a, b), shift);
      case KILN_BINARY_CMPLT: return a < b;
      case KILN_BINARY_CMPGT: return a > b;
      case KILN_BINARY_MAX: return N::put(a > b ? a : b, shift);
      case KILN_BINARY_MIN: return N::put(a < b ? a : b, shift);
      case KILN_BINARY_NOT_EQ: return a != b;
      case KILN_BINARY_EQ: return a == b;
      default: return 0;
    }
  } else {
    // Integers: slots hold normalised values, so bitwise ops and comparisons
    // work on them directly; arithmetic wraps on 64 bits and re-normalises.
    constexpr bool is_signed = C == VClass::SInt;
    const u64 width_mask = 63u - shift;  // bit width - 1: shifts take y mod the width
    switch (OP) {
      case KILN_BINARY_ADD: return N::put(x + y, shift);
      case KILN_BINARY_SUB: return N::put(x - y, shift);
      case KILN_BINARY_MUL: return N::put(x * y, shift);
      case KILN_BINARY_DIV:  // x / 0 and x % 0 are 0 (kernel_ir.h), as every emitter writes them
        if (y == 0) return 0;
        if constexpr (is_signed) {
          if (static_cast<i64>(y) == -1) return N::put(0 - x, shift);  // no INT_MIN / -1 trap
          return static_cast<u64>(static_cast<i64>(x) / static_cast<i64>(y));
        }
        return x / y;
      case KILN_BINARY_MOD:
        if (y == 0) return 0;
        if constexpr (is_signed) {
          if (static_cast<i64>(y) == -1) return 0;
          return static_cast<u64>(static_cast<i64>(x) % static_cast<i64>(y));
        }
        return x % y;
      case KILN_BINARY_CMPLT:
        if constexpr (is_signed) return static_cast<i64>(x) < static_cast<i64>(y);
        return x < y;
      case KILN_BINARY_CMPGT:
        if constexpr (is_signed) return static_cast<i64>(x) > static_cast<i64>(y);
        return x > y;
      case KILN_BINARY_MAX:
        if constexpr (is_signed) return static_cast<i64>(x) > static_cast<i64>(y) ? x : y;
        return x > y ? x : y;
      case KILN_BINARY_MIN:
        if constexpr (is_signed) return static_cast<i64>(x) < static_cast<i64>(y) ? x : y;
        return x < y ? x : y;
      case KILN_BINARY_OR: case KILN_BINARY_BIT_OR: return x | y;
      case KILN_BINARY_AND: case KILN_BINARY_BIT_AND: return x & y;
      case KILN_BINARY_BIT_XOR: return x ^ y;
      case KILN_BINARY_SHL: return N::put(x << (y & width_mask), shift);
      case KILN_BINARY_SHR:
        if constexpr (is_signed) return static_cast<u64>(static_cast<i64>(x) >> (y & width_mask));
        return x >> (y & width_mask);
      case KILN_BINARY_NOT_EQ: return x != y;
      case KILN_BINARY_EQ: return x == y;
      default: return 0;
    }
  }
}

template <VClass C, unsigned OP>
std::size_t binary_rows(const Row& r) {
  for (std::size_t l = 0; l < r.n; ++l) r.out[l] = binary_element<C, OP>(r.a[l], r.b[l], r.shift);
  return r.n;
}

// ------------------------------------------------------------------- cast --

template <VClass From, VClass To>
u64 cast_element(u64 v, unsigned shift) {
  if constexpr (From == To && !is_int_class(To)) {
    return v;
  } else if constexpr (To == VClass::Bool) {
    if constexpr (is_float32_class(From)) return as_f32(v) != 0.0f;
    if constexpr (From == VClass::F64) return as_f64(v) != 0.0;
    return v != 0;
  } else if constexpr (To == VClass::F32) {
    if constexpr (is_float32_class(From)) return v;
    if constexpr (From == VClass::F64) return from_f32(static_cast<float>(as_f64(v)));
    if constexpr (From == VClass::SInt) return from_f32(static_cast<float>(static_cast<i64>(v)));
    return from_f32(static_cast<float>(v));  // UInt, Bool
  } else if constexpr (To == VClass::F16 || To == VClass::BF16) {
    float f;
    if constexpr (is_float32_class(From)) f = as_f32(v);
    else if constexpr (From == VClass::F64) f = f32_round_odd(as_f64(v));
    else if constexpr (From == VClass::SInt) f = f32_round_odd(static_cast<i64>(v) < 0 ? 0 - v : v, static_cast<i64>(v) < 0);
    else f = f32_round_odd(v, false);
    return Num<To>::put(f, 0);
  } else if constexpr (To == VClass::F64) {
    if constexpr (is_float32_class(From)) return from_f64(static_cast<double>(as_f32(v)));
    if constexpr (From == VClass::SInt) return from_f64(static_cast<double>(static_cast<i64>(v)));
    return from_f64(static_cast<double>(v));  // UInt, Bool
  } else {  // integer target
    u64 wide;
    if constexpr (is_float32_class(From) || From == VClass::F64) {
      const double x = is_float32_class(From) ? static_cast<double>(as_f32(v)) : as_f64(v);
      wide = To == VClass::SInt ? float_to_i64_bits(x) : float_to_u64_bits(x);
    } else {
      wide = v;  // integers and bool: two's complement wrap
    }
    return Num<To>::put(wide, shift);
  }
}

template <VClass From, VClass To>
std::size_t cast_rows(const Row& r) {
  for (std::size_t l = 0; l < r.n; ++l) r.out[l] = cast_element<From, To>(r.a[l], r.shift);
  return r.n;
}

// -------------------------------------------------------------------- mad --

template <VClass C>
std::size_t mad_rows(const Row& r) {
  using N = Num<C>;
  for (std::size_t l = 0; l < r.n; ++l) {
    if constexpr (is_float_class(C)) {
      // Two statements: the product is rounded before the sum (no fusion).
      const typename N::T product = N::get(r.a[l]) * N::get(r.b[l]);
      const typename N::T sum = product + N::get(r.c[l]);
      r.out[l] = N::put(sum, r.shift);
    } else {
      r.out[l] = N::put(r.a[l] * r.b[l] + r.c[l], r.shift);
    }
  }
  return r.n;
}

// ----------------------------------------------------------------- tables --

template <std::size_t C, std::size_t OP>
constexpr RowFn unary_entry() {
  if constexpr (unary_allowed(representative_dtype(static_cast<VClass>(C)), OP))
    return &unary_rows<static_cast<VClass>(C), OP>;
  return nullptr;
}
template <std::size_t C, std::size_t OP>
constexpr RowFn binary_entry() {
  if constexpr (binary_allowed(representative_dtype(static_cast<VClass>(C)), OP))
    return &binary_rows<static_cast<VClass>(C), OP>;
  return nullptr;
}
template <std::size_t C>
constexpr RowFn mad_entry() {
  if constexpr (mad_allowed(representative_dtype(static_cast<VClass>(C)))) return &mad_rows<static_cast<VClass>(C)>;
  return nullptr;
}

using UnaryTable = std::array<std::array<RowFn, KILN_UNARY_COUNT>, kVClassCount>;
using BinaryTable = std::array<std::array<RowFn, KILN_BINARY_COUNT>, kVClassCount>;
using CastTable = std::array<std::array<RowFn, kVClassCount>, kVClassCount>;

template <std::size_t C, std::size_t... O>
constexpr void fill_unary(UnaryTable& t, std::index_sequence<O...>) {
  ((t[C][O] = unary_entry<C, O>()), ...);
}
template <std::size_t C, std::size_t... O>
constexpr void fill_binary(BinaryTable& t, std::index_sequence<O...>) {
  ((t[C][O] = binary_entry<C, O>()), ...);
}
template <std::size_t F, std::size_t... T>
constexpr void fill_cast(CastTable& t, std::index_sequence<T...>) {
  ((t[F][T] = &cast_rows<static_cast<VClass>(F), static_cast<VClass>(T)>), ...);
}

template <std::size_t... C>
constexpr UnaryTable make_unary_table(std::index_sequence<C...>) {
  UnaryTable t{};
  (fill_unary<C>(t, std::make_index_sequence<KILN_UNARY_COUNT>{}), ...);
  return t;
}
template <std::size_t... C>
constexpr BinaryTable make_binary_table(std::index_sequence<C...>) {
  BinaryTable t{};
  (fill_binary<C>(t, std::make_index_sequence<KILN_BINARY_COUNT>{}), ...);
  return t;
}
template <std::size_t... C>
constexpr CastTable make_cast_table(std::index_sequence<C...>) {
  CastTable t{};
  (fill_cast<C>(t, std::make_index_sequence<kVClassCount>{}), ...);
  return t;
}
template <std::size_t... C>
constexpr std::array<RowFn, kVClassCount> make_mad_table(std::index_sequence<C...>) {
  return {mad_entry<C>()...};
}

constexpr auto kClasses = std::make_index_sequence<kVClassCount>{};
constexpr UnaryTable kUnary = make_unary_table(kClasses);
constexpr BinaryTable kBinary = make_binary_table(kClasses);
constexpr CastTable kCast = make_cast_table(kClasses);
constexpr std::array<RowFn, kVClassCount> kMad = make_mad_table(kClasses);

}  // namespace

RowFn unary_row(VClass c, unsigned op) {
  return static_cast<std::size_t>(c) < kVClassCount && op < KILN_UNARY_COUNT ? kUnary[static_cast<std::size_t>(c)][op]
                                                                              : nullptr;
}
RowFn binary_row(VClass c, unsigned op) {
  return static_cast<std::size_t>(c) < kVClassCount && op < KILN_BINARY_COUNT
             ? kBinary[static_cast<std::size_t>(c)][op]
             : nullptr;
}
RowFn cast_row(VClass from, VClass to) {
  return static_cast<std::size_t>(from) < kVClassCount && static_cast<std::size_t>(to) < kVClassCount
             ? kCast[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)]
             : nullptr;
}
RowFn mad_row(VClass c) { return static_cast<std::size_t>(c) < kVClassCount ? kMad[static_cast<std::size_t>(c)] : nullptr; }

}  // namespace kiln::sdk::interp
