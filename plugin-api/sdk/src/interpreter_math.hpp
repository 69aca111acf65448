// The math ops of ABI 1.1 (TANH ERF SIGMOID RSQRT LOG1P EXPM1) in the
// interpreter: computed in double with libm and rounded once to the dtype,
// so f32/f16/bf16 results are the correctly rounded value in all but
// vanishingly rare double-rounding cases, and f64 results are libm's (within
// a few ulp; RSQRT and SIGMOID round twice). docs/ir.md states these as the
// ops' accuracy contracts; the lowering (core/passes/lower_math.cpp) and the
// plugins are checked against them.
#pragma once

#include <kiln/kernel_ir.h>

#include <cmath>

#include "interpreter_values.hpp"

namespace kiln::sdk::interp {

constexpr bool is_math_1_1(unsigned op) { return op >= KILN_UNARY_TANH && op <= KILN_UNARY_EXPM1; }

// 1 / (1 + e^-x) without overflow: for x < 0 the form e^x / (1 + e^x), whose
// e^x underflows to 0 instead of e^-x overflowing to inf.
inline double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);  // NaN falls through the first test and stays NaN
}

inline double math_1_1(unsigned op, double x) {
  switch (op) {
    case KILN_UNARY_TANH: return std::tanh(x);
    case KILN_UNARY_ERF: return std::erf(x);
    case KILN_UNARY_SIGMOID: return sigmoid(x);
    case KILN_UNARY_RSQRT: return 1.0 / std::sqrt(x);
    case KILN_UNARY_LOG1P: return std::log1p(x);
    case KILN_UNARY_EXPM1: return std::expm1(x);
    default: return std::nan("");
  }
}

// The double result rounded once to class C: round-to-odd to f32 first for
// f16/bf16, so the second rounding to nearest even is the correct one.
template <VClass C>
u64 put_double(double d) {
  if constexpr (C == VClass::F64) return from_f64(d);
  else if constexpr (C == VClass::F32) return from_f32(static_cast<float>(d));
  else if constexpr (C == VClass::F16) return from_f32(round_to_f16(f32_round_odd(d)));
  else return from_f32(round_to_bf16(f32_round_odd(d)));
}

}  // namespace kiln::sdk::interp
