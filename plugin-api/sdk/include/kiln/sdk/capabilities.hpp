// kiln/sdk/capabilities.hpp - the UNARY/BINARY ops the IR defines for each
// dtype (kernel_ir.h), as kiln_device_info.dtype_ops bits. A plugin that
// emits every defined op for a dtype reports defined_ops(dtype) for it, and
// 0 for a dtype it cannot handle at all.
#pragma once

#include <kiln/kernel_ir.h>

#include <cstdint>

namespace kiln::sdk {

constexpr std::uint32_t defined_ops(unsigned dtype) {
  std::uint32_t bits = 0;
  auto unary = [&](unsigned u) { bits |= KILN_CAP_UNARY(u); };
  auto binary = [&](unsigned b) { bits |= KILN_CAP_BINARY(b); };
  switch (dtype) {
    case KILN_DTYPE_BF16: case KILN_DTYPE_F16: case KILN_DTYPE_F32: case KILN_DTYPE_F64:
      for (unsigned u = KILN_UNARY_NEG; u < KILN_UNARY_COUNT; ++u)
        if (u != KILN_UNARY_BIT_NOT) unary(u);
      for (unsigned b : {KILN_BINARY_ADD, KILN_BINARY_SUB, KILN_BINARY_MUL, KILN_BINARY_DIV, KILN_BINARY_POW,
                         KILN_BINARY_MOD, KILN_BINARY_CMPLT, KILN_BINARY_CMPGT, KILN_BINARY_MAX, KILN_BINARY_MIN,
                         KILN_BINARY_NOT_EQ, KILN_BINARY_EQ})
        binary(b);
      return bits;
    case KILN_DTYPE_U8: case KILN_DTYPE_U16: case KILN_DTYPE_U32: case KILN_DTYPE_U64:
    case KILN_DTYPE_I8: case KILN_DTYPE_I16: case KILN_DTYPE_I32: case KILN_DTYPE_I64:
      for (unsigned u : {KILN_UNARY_NEG, KILN_UNARY_BIT_NOT, KILN_UNARY_ABS}) unary(u);
      for (unsigned b = KILN_BINARY_ADD; b < KILN_BINARY_COUNT; ++b)
        if (b != KILN_BINARY_POW) binary(b);
      return bits;
    case KILN_DTYPE_BOOL:
      unary(KILN_UNARY_BIT_NOT);
      for (unsigned b : {KILN_BINARY_OR, KILN_BINARY_AND, KILN_BINARY_BIT_XOR, KILN_BINARY_BIT_OR,
                         KILN_BINARY_BIT_AND, KILN_BINARY_NOT_EQ, KILN_BINARY_EQ})
        binary(b);
      return bits;
    default:
      return 0;
  }
}

}  // namespace kiln::sdk
