// kiln/conformance/wire_builder.hpp - builds wire-format kernels (kiln_op arrays)
// by hand for plugin and SDK tests that must not depend on the core's IR
// builder. Each call appends one op and returns its index. No validation:
// tests use it to build invalid kernels too.
#pragma once

#include <kiln/kernel_ir.h>

#include <bit>
#include <cstdint>
#include <vector>

namespace kiln::conformance {

class WireBuilder {
 public:
  using Id = std::uint32_t;

  Id op(std::uint8_t kind, std::uint8_t dtype, std::uint8_t code = 0, Id a = KILN_NO_OPERAND,
        Id b = KILN_NO_OPERAND, Id c = KILN_NO_OPERAND, std::uint32_t attr = 0, std::uint64_t imm = 0,
        std::uint8_t lanes = 1) {
    kiln_op o{};
    o.kind = kind;
    o.dtype = dtype;
    o.lanes = lanes;
    o.code = code;
    o.attr = attr;
    o.src[0] = a;
    o.src[1] = b;
    o.src[2] = c;
    o.imm = imm;
    ops.push_back(o);
    return static_cast<Id>(ops.size() - 1);
  }

  Id param(std::uint8_t param_kind, std::uint8_t dtype, std::uint32_t slot, std::uint64_t elements = 0) {
    return op(KILN_OP_PARAM, dtype, param_kind, KILN_NO_OPERAND, KILN_NO_OPERAND, KILN_NO_OPERAND, slot, elements);
  }
  Id const_i64(std::int64_t v) { return op(KILN_OP_CONST, KILN_DTYPE_I64, 0, KILN_NO_OPERAND, KILN_NO_OPERAND, KILN_NO_OPERAND, 0, static_cast<std::uint64_t>(v)); }
  Id const_f32(float v) { return op(KILN_OP_CONST, KILN_DTYPE_F32, 0, KILN_NO_OPERAND, KILN_NO_OPERAND, KILN_NO_OPERAND, 0, std::bit_cast<std::uint32_t>(v)); }
  Id const_f64(double v) { return op(KILN_OP_CONST, KILN_DTYPE_F64, 0, KILN_NO_OPERAND, KILN_NO_OPERAND, KILN_NO_OPERAND, 0, std::bit_cast<std::uint64_t>(v)); }
  Id const_bits(std::uint8_t dtype, std::uint64_t bits) { return op(KILN_OP_CONST, dtype, 0, KILN_NO_OPERAND, KILN_NO_OPERAND, KILN_NO_OPERAND, 0, bits); }
  Id storage(std::uint8_t scope, std::uint8_t dtype, std::uint64_t elements) {
    return op(KILN_OP_STORAGE, dtype, scope, KILN_NO_OPERAND, KILN_NO_OPERAND, KILN_NO_OPERAND, 0, elements);
  }
  Id group_index(std::uint32_t axis, Id length) { return op(KILN_OP_INDEX, KILN_DTYPE_I64, KILN_SCOPE_GROUP, length, KILN_NO_OPERAND, KILN_NO_OPERAND, axis); }
  Id local_index(std::uint32_t axis, Id length) { return op(KILN_OP_INDEX, KILN_DTYPE_I64, KILN_SCOPE_LOCAL, length, KILN_NO_OPERAND, KILN_NO_OPERAND, axis); }
  Id load(std::uint8_t dtype, Id mem, Id index, std::uint8_t lanes = 1) { return op(KILN_OP_LOAD, dtype, 0, mem, index, KILN_NO_OPERAND, 0, 0, lanes); }
  Id store(std::uint8_t dtype, Id mem, Id index, Id value, std::uint8_t lanes = 1) { return op(KILN_OP_STORE, dtype, 0, mem, index, value, 0, 0, lanes); }
  Id prefetch(std::uint8_t dtype, Id mem, Id index) { return op(KILN_OP_PREFETCH, dtype, 0, mem, index, KILN_NO_OPERAND, 0, 0, 1); }
  Id loop(Id count) { return op(KILN_OP_LOOP, KILN_DTYPE_I64, 0, count); }
  Id end_loop(Id loop_id) { return op(KILN_OP_END_LOOP, KILN_DTYPE_INVALID, 0, loop_id); }
  Id if_(Id cond) { return op(KILN_OP_IF, KILN_DTYPE_INVALID, 0, cond); }
  Id end_if(Id if_id) { return op(KILN_OP_END_IF, KILN_DTYPE_INVALID, 0, if_id); }
  Id barrier() { return op(KILN_OP_BARRIER, KILN_DTYPE_INVALID, KILN_SCOPE_LOCAL); }
  Id unary(std::uint8_t u, std::uint8_t dtype, Id x, std::uint8_t lanes = 1) { return op(KILN_OP_UNARY, dtype, u, x, KILN_NO_OPERAND, KILN_NO_OPERAND, 0, 0, lanes); }
  Id binary(std::uint8_t b, std::uint8_t dtype, Id x, Id y, std::uint8_t lanes = 1) { return op(KILN_OP_BINARY, dtype, b, x, y, KILN_NO_OPERAND, 0, 0, lanes); }
  Id cast(std::uint8_t dtype, Id x, std::uint8_t lanes = 1) { return op(KILN_OP_CAST, dtype, 0, x, KILN_NO_OPERAND, KILN_NO_OPERAND, 0, 0, lanes); }
  Id mad(std::uint8_t dtype, Id a, Id b, Id c, std::uint8_t lanes = 1) { return op(KILN_OP_MAD, dtype, 0, a, b, c, 0, 0, lanes); }
  Id select(std::uint8_t dtype, Id cond, Id a, Id b, std::uint8_t lanes = 1) { return op(KILN_OP_SELECT, dtype, 0, cond, a, b, 0, 0, lanes); }
  Id broadcast(std::uint8_t dtype, Id x, std::uint8_t lanes) { return op(KILN_OP_VEC_BROADCAST, dtype, 0, x, KILN_NO_OPERAND, KILN_NO_OPERAND, 0, 0, lanes); }
  Id insert(std::uint8_t dtype, Id v, Id s, std::uint32_t lane, std::uint8_t lanes) { return op(KILN_OP_VEC_INSERT, dtype, 0, v, s, KILN_NO_OPERAND, lane, 0, lanes); }
  Id extract(std::uint8_t dtype, Id v, std::uint32_t lane) { return op(KILN_OP_VEC_EXTRACT, dtype, 0, v, KILN_NO_OPERAND, KILN_NO_OPERAND, lane); }

  std::vector<kiln_op> ops;
};

// c[i] = a[i] + b[i] over n f32 elements, one thread per element: the
// smallest useful kernel, for plugin smoke tests.
inline std::vector<kiln_op> wire_add_f32(std::int64_t n) {
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, static_cast<std::uint64_t>(n));
  auto b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, static_cast<std::uint64_t>(n));
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, static_cast<std::uint64_t>(n));
  auto len = w.const_i64(n);
  auto i = w.group_index(0, len);
  auto x = w.load(KILN_DTYPE_F32, a, i);
  auto y = w.load(KILN_DTYPE_F32, b, i);
  auto s = w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, x, y);
  w.store(KILN_DTYPE_F32, c, i, s);
  return w.ops;
}

}  // namespace kiln::conformance
