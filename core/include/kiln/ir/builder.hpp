// kiln/ir/builder.hpp - builds kernels op by op with typed helpers.
//
//   Builder b;
//   Value a = b.param(ParamKind::Global, DType::F32, n);      // slot 0
//   Value c = b.param(ParamKind::GlobalMut, DType::F32, n);   // slot 1
//   Value i = b.group_index(0, n);
//   b.store(c, i, b.exp(b.load(a, i)));
//   Kernel k = b.finish();
//
// Result dtypes and lanes are inferred from the operands as kernel_ir.h
// defines them. The builder never fails: it writes what it is asked to, and
// a kernel built from mismatched operands is reported by verify().
#pragma once

#include "kiln/ir/dtype.hpp"
#include "kiln/ir/kernel.hpp"

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace kiln::ir {

// A value of a kernel: the id of the op that defines it. A type of its own so
// that a plain integer is never taken for an operand.
struct Value {
  ValueId id = kNoValue;

  bool valid() const { return id != kNoValue; }
  bool operator==(const Value&) const = default;
};

// The result type kernel_ir.h gives `op` from its operands in `kernel`: x's
// dtype and lanes for UNARY/BINARY/MAD/SELECT (BOOL for comparisons), the
// memory's element type for LOAD (op.lanes wide), i64 for INDEX/LOOP, the
// value's type for STORE, ... nullopt when the kind carries its own type
// (CONST, PARAM, STORAGE, CAST, VEC_BROADCAST), has none (markers), or an
// operand it needs is out of range.
std::optional<ValueType> inferred_type(const Kernel& kernel, const Op& op);

class Builder {
 public:
  Builder() = default;
  // Continues `start` (open LOOPs/IFs stay open).
  explicit Builder(Kernel start);
  // Room for `ops` ops in all, so that appending them allocates once.
  void reserve(std::size_t ops) { kernel_.ops.reserve(ops); }

  // --- launch arguments and memory ---------------------------------------
  // Slots are assigned in call order (the lowest slot not yet taken) unless
  // given. `elements` = 0 means unknown (always 0 for VARIABLE).
  Value param(ParamKind kind, DType dtype, std::uint64_t elements = 0,
              std::optional<std::uint32_t> slot = std::nullopt);
  Value storage(Scope scope, DType dtype, std::uint64_t elements);
  // Reads `lanes` consecutive elements at `index`.
  Value load(Value memory, Value index, std::uint8_t lanes = 1);
  // Writes `value` (its lanes consecutive elements) at `index`.
  void store(Value memory, Value index, Value value);

  // --- constants -----------------------------------------------------------
  // `value` converted to `dtype` exactly as CAST converts (see dtype.hpp).
  template <std::integral T>
  Value constant(DType dtype, T value) {
    if constexpr (std::unsigned_integral<T>) {
      if (value > static_cast<T>(std::numeric_limits<std::int64_t>::max()) && !is_float(dtype))
        return constant_bits(dtype, encode_int(dtype, static_cast<std::int64_t>(value)));
      if (value > static_cast<T>(std::numeric_limits<std::int64_t>::max()))
        return constant_bits(dtype, encode_float(dtype, static_cast<double>(value)));
    }
    return constant_bits(dtype, encode_int(dtype, static_cast<std::int64_t>(value)));
  }
  template <std::floating_point T>
  Value constant(DType dtype, T value) {
    return constant_bits(dtype, encode_float(dtype, static_cast<double>(value)));
  }
  Value constant_bits(DType dtype, std::uint64_t bits);
  Value constant_i64(std::int64_t value) { return constant(DType::I64, value); }

  // --- thread coordinates --------------------------------------------------
  Value group_index(std::uint32_t axis, Value length);
  Value group_index(std::uint32_t axis, std::int64_t length) { return group_index(axis, constant_i64(length)); }
  Value local_index(std::uint32_t axis, std::uint32_t length);

  // --- control flow --------------------------------------------------------
  // LOOP returns its counter (0 .. count-1), which is also the loop's id.
  Value loop(Value count);
  Value loop(std::int64_t count) { return loop(constant_i64(count)); }
  void end_loop(Value loop);
  // IF returns the id of the IF op (it has no value).
  ValueId if_(Value condition);
  void end_if(ValueId if_op);
  // Closes the innermost open LOOP or IF, whichever it is.
  void end_block();

  template <class Body>
  void for_loop(Value count, Body&& body) {
    const Value i = loop(count);
    body(i);
    end_loop(i);
  }
  template <class Body>
  void for_loop(std::int64_t count, Body&& body) {
    for_loop(constant_i64(count), std::forward<Body>(body));
  }
  template <class Body>
  void if_then(Value condition, Body&& body) {
    const ValueId id = if_(condition);
    body();
    end_if(id);
  }

  void barrier();
  // kernel_ir.h, COPY_ASYNC / COPY_COMMIT / COPY_WAIT: `value` (16 bytes)
  // into LOCAL storage `local` at `index`, written by the time a copy_wait
  // covers its group.
  void copy_async(Value local, Value index, Value value);
  void copy_commit();
  // kernel_ir.h, PREFETCH: a hint that element `index` of the buffer param
  // `buffer` will be read soon (the index may lie outside the buffer).
  void prefetch(Value buffer, Value index);
  // kernel_ir.h, LOAD_MATRIX: `matrices` 8 x 8 matrices of 16-bit elements
  // from LOCAL storage, rows at the warp's `row_index` values.
  Value load_matrix(Value local, Value row_index, std::uint32_t matrices, bool transposed);
  void copy_wait(std::uint32_t pending_groups);
  // kernel_ir.h, WGMMA: the warp group's 64 x n tile of A (at element
  // tiles[0] of the swizzled LOCAL storage `local`) times B (at tiles[1]),
  // added into the REGISTER storage `accumulator` by the time a wgmma_wait
  // covers its group; `tiles` is an i64 x 2 vector. With `a_registers`
  // (tf32 only), A is the threads' fragments at elements tiles[0] .. + 3 of
  // `accumulator` instead.
  void wgmma(Value local, Value tiles, Value accumulator, std::uint32_t n, bool a_registers = false);
  void wgmma_fence();
  void wgmma_commit();
  void wgmma_wait(std::uint32_t pending_groups);

  // --- arithmetic ----------------------------------------------------------
  Value unary(UnaryOp op, Value x);
  Value binary(BinaryOp op, Value x, Value y);
  Value cast(DType dtype, Value x);
  Value mad(Value a, Value b, Value c);  // a * b + c
  Value select(Value condition, Value if_true, Value if_false);
  Value broadcast(Value scalar, std::uint8_t lanes);
  Value insert(Value vector, Value scalar, std::uint32_t lane);
  Value extract(Value vector, std::uint32_t lane);
  // D = A * B + C of one tile per warp (kernel_ir.h, KILN_OP_MMA); the input
  // dtype (attr) is A's.
  Value mma(MmaShape shape, Value a, Value b, Value c);
  // The reduction of scalar x over each subgroup of `width` consecutive
  // threads, received by all of them (kernel_ir.h, KILN_OP_SUBGROUP_REDUCE).
  Value subgroup_reduce(BinaryOp reduction, Value x, std::uint32_t width);
  // Two bf16 values (vectors) side by side in u32 words, and the pairwise
  // bf16 dot-accumulate of VDPBF16PS on such words (kernel_ir.h,
  // KILN_OP_BF16_PAIR / KILN_OP_DOT_BF16).
  Value bf16_pair(Value lo, Value hi);
  Value dot_bf16(Value acc, Value a, Value b);

  Value neg(Value x) { return unary(UnaryOp::Neg, x); }
  Value bit_not(Value x) { return unary(UnaryOp::BitNot, x); }
  Value exp(Value x) { return unary(UnaryOp::Exp, x); }
  Value exp2(Value x) { return unary(UnaryOp::Exp2, x); }
  Value ln(Value x) { return unary(UnaryOp::Ln, x); }
  Value log2(Value x) { return unary(UnaryOp::Log2, x); }
  Value recip(Value x) { return unary(UnaryOp::Recip, x); }
  Value sqrt(Value x) { return unary(UnaryOp::Sqrt, x); }
  Value sin(Value x) { return unary(UnaryOp::Sin, x); }
  Value cos(Value x) { return unary(UnaryOp::Cos, x); }
  Value floor(Value x) { return unary(UnaryOp::Floor, x); }
  Value trunc(Value x) { return unary(UnaryOp::Trunc, x); }
  Value abs(Value x) { return unary(UnaryOp::Abs, x); }
  Value tanh(Value x) { return unary(UnaryOp::Tanh, x); }
  Value erf(Value x) { return unary(UnaryOp::Erf, x); }
  Value sigmoid(Value x) { return unary(UnaryOp::Sigmoid, x); }  // 1 / (1 + e^-x)
  Value rsqrt(Value x) { return unary(UnaryOp::Rsqrt, x); }
  Value log1p(Value x) { return unary(UnaryOp::Log1p, x); }
  Value expm1(Value x) { return unary(UnaryOp::Expm1, x); }

  Value add(Value x, Value y) { return binary(BinaryOp::Add, x, y); }
  Value sub(Value x, Value y) { return binary(BinaryOp::Sub, x, y); }
  Value mul(Value x, Value y) { return binary(BinaryOp::Mul, x, y); }
  Value div(Value x, Value y) { return binary(BinaryOp::Div, x, y); }
  Value mod(Value x, Value y) { return binary(BinaryOp::Mod, x, y); }
  Value pow(Value x, Value y) { return binary(BinaryOp::Pow, x, y); }
  Value max(Value x, Value y) { return binary(BinaryOp::Max, x, y); }
  Value min(Value x, Value y) { return binary(BinaryOp::Min, x, y); }
  Value cmplt(Value x, Value y) { return binary(BinaryOp::CmpLt, x, y); }
  Value cmpgt(Value x, Value y) { return binary(BinaryOp::CmpGt, x, y); }
  Value eq(Value x, Value y) { return binary(BinaryOp::Eq, x, y); }
  Value not_eq_(Value x, Value y) { return binary(BinaryOp::NotEq, x, y); }
  Value and_(Value x, Value y) { return binary(BinaryOp::And, x, y); }
  Value or_(Value x, Value y) { return binary(BinaryOp::Or, x, y); }
  Value bit_and(Value x, Value y) { return binary(BinaryOp::BitAnd, x, y); }
  Value bit_or(Value x, Value y) { return binary(BinaryOp::BitOr, x, y); }
  Value bit_xor(Value x, Value y) { return binary(BinaryOp::BitXor, x, y); }
  Value shl(Value x, Value y) { return binary(BinaryOp::Shl, x, y); }
  Value shr(Value x, Value y) { return binary(BinaryOp::Shr, x, y); }

  // --- raw access ------------------------------------------------------------
  // Appends `op` exactly as given (rewriters copy ops this way).
  Value append(const Op& op);
  // Appends `op` with its dtype and lanes inferred from its operands.
  Value append_inferred(Op op);
  // The type of an existing value (Invalid dtype for an unknown id).
  ValueType type_of(Value value) const;
  // The LOOP/IF ops open at the end of the kernel so far, innermost last.
  const std::vector<ValueId>& open_blocks() const { return open_; }

  const Kernel& kernel() const { return kernel_; }
  // Hands over the kernel; the builder starts over empty.
  Kernel finish() {
    open_.clear();
    slot_taken_.clear();
    return std::exchange(kernel_, Kernel{});
  }

 private:
  Kernel kernel_;
  std::vector<ValueId> open_;
  std::vector<bool> slot_taken_;
};

}  // namespace kiln::ir
