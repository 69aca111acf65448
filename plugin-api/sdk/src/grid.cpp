#include "kiln/sdk/grid.hpp"

#include "kiln/sdk/plugin_support.hpp"
#include "kiln/sdk/wire.hpp"

#include <string>
#include <unordered_map>

namespace kiln::sdk {

namespace {

[[noreturn]] void not_evaluable(std::uint32_t id, const std::string& why) {
  fail(KILN_STATUS_INVALID_ARGUMENT, "op " + std::to_string(id) + ": grid length is not host-evaluable: " + why,
       id);
}

std::int64_t wrap_to(unsigned dt, std::int64_t v) {
  switch (dt) {
    case KILN_DTYPE_I8: return static_cast<std::int8_t>(v);
    case KILN_DTYPE_I16: return static_cast<std::int16_t>(v);
    case KILN_DTYPE_I32: return static_cast<std::int32_t>(v);
    case KILN_DTYPE_U8: return static_cast<std::uint8_t>(v);
    case KILN_DTYPE_U16: return static_cast<std::uint16_t>(v);
    case KILN_DTYPE_U32: return static_cast<std::uint32_t>(v);
    case KILN_DTYPE_BOOL: return v != 0;
    default: return v;
  }
}

using Memo = std::unordered_map<std::uint32_t, std::int64_t>;

std::int64_t eval_uncached(std::span<const kiln_op> ops, std::uint32_t id, std::span<const kiln_arg> args, int depth,
                           Memo& memo);

// Shared subexpressions are evaluated once: without the memo a chain of ops
// that each use the previous one twice takes 2^depth steps.
std::int64_t eval(std::span<const kiln_op> ops, std::uint32_t id, std::span<const kiln_arg> args, int depth,
                  Memo& memo) {
  if (auto it = memo.find(id); it != memo.end()) return it->second;
  const std::int64_t value = eval_uncached(ops, id, args, depth, memo);
  memo.emplace(id, value);
  return value;
}

// Two's complement negation without signed overflow.
std::int64_t negate(std::int64_t x) { return static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(x)); }

std::int64_t eval_uncached(std::span<const kiln_op> ops, std::uint32_t id, std::span<const kiln_arg> args, int depth,
                           Memo& memo) {
  if (id >= ops.size()) not_evaluable(id, "operand out of range");
  if (depth > 64) not_evaluable(id, "expression too deep");
  const kiln_op& op = ops[id];
  if (op.lanes != 1) not_evaluable(id, "vector value");
  if (!dtype_is_int(op.dtype) && op.dtype != KILN_DTYPE_BOOL)
    not_evaluable(id, "dtype " + std::string(dtype_name(op.dtype)) + " is not an integer");
  auto sub = [&](int i) {
    if (op.src[i] >= id) not_evaluable(id, "operand does not precede its use");
    return eval(ops, op.src[i], args, depth + 1, memo);
  };
  switch (op.kind) {
    case KILN_OP_CONST:
      return int_from_bits(op.imm, op.dtype);
    case KILN_OP_PARAM: {
      if (op.code != KILN_PARAM_VARIABLE) not_evaluable(id, "a buffer is not a value");
      if (op.attr >= args.size()) not_evaluable(id, "no argument for slot " + std::to_string(op.attr));
      const kiln_arg& arg = args[op.attr];
      if (arg.kind != KILN_ARG_SCALAR) not_evaluable(id, "argument " + std::to_string(op.attr) + " is not a scalar");
      return int_from_bits(arg.scalar_bits, op.dtype);
    }
    case KILN_OP_CAST:
      return wrap_to(op.dtype, sub(0));
    case KILN_OP_UNARY: {
      const std::int64_t x = sub(0);
      switch (op.code) {
        case KILN_UNARY_NEG: return wrap_to(op.dtype, negate(x));
        case KILN_UNARY_ABS: return wrap_to(op.dtype, x < 0 ? negate(x) : x);
        case KILN_UNARY_BIT_NOT: return wrap_to(op.dtype, op.dtype == KILN_DTYPE_BOOL ? !x : ~x);
        default: not_evaluable(id, "unary " + std::string(unary_name(op.code)));
      }
    }
    case KILN_OP_BINARY: {
      const std::int64_t x = sub(0);
      const std::int64_t y = sub(1);
      const bool is_unsigned = !dtype_is_signed_int(op.dtype);
      const std::int64_t width_mask = 8 * dtype_bytes(op.dtype) - 1;  // shifts take y mod the bit width
      switch (op.code) {
        case KILN_BINARY_ADD: return wrap_to(op.dtype, static_cast<std::int64_t>(static_cast<std::uint64_t>(x) + static_cast<std::uint64_t>(y)));
        case KILN_BINARY_SUB: return wrap_to(op.dtype, static_cast<std::int64_t>(static_cast<std::uint64_t>(x) - static_cast<std::uint64_t>(y)));
        case KILN_BINARY_MUL: return wrap_to(op.dtype, static_cast<std::int64_t>(static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y)));
        case KILN_BINARY_DIV:
          if (y == 0) not_evaluable(id, "division by zero");
          if (is_unsigned) return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) / static_cast<std::uint64_t>(y));
          return y == -1 ? wrap_to(op.dtype, negate(x)) : x / y;  // INT64_MIN / -1 traps
        case KILN_BINARY_MOD:
          if (y == 0) not_evaluable(id, "modulo by zero");
          if (is_unsigned) return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) % static_cast<std::uint64_t>(y));
          return y == -1 ? 0 : x % y;
        case KILN_BINARY_MAX: return x > y ? x : y;
        case KILN_BINARY_MIN: return x < y ? x : y;
        case KILN_BINARY_BIT_AND: case KILN_BINARY_AND: return x & y;
        case KILN_BINARY_BIT_OR: case KILN_BINARY_OR: return x | y;
        case KILN_BINARY_BIT_XOR: return x ^ y;
        case KILN_BINARY_SHL: return wrap_to(op.dtype, static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << (y & width_mask)));
        case KILN_BINARY_SHR: return is_unsigned ? static_cast<std::int64_t>(static_cast<std::uint64_t>(x) >> (y & width_mask)) : x >> (y & width_mask);
        default: not_evaluable(id, "binary " + std::string(binary_name(op.code)));
      }
    }
    default:
      not_evaluable(id, "op kind " + std::string(op_kind_name(op.kind)));
  }
}

}  // namespace

std::int64_t int_from_bits(std::uint64_t bits, unsigned dt) {
  switch (dt) {
    case KILN_DTYPE_I8: return static_cast<std::int8_t>(bits);
    case KILN_DTYPE_I16: return static_cast<std::int16_t>(bits);
    case KILN_DTYPE_I32: return static_cast<std::int32_t>(bits);
    case KILN_DTYPE_I64: return static_cast<std::int64_t>(bits);
    case KILN_DTYPE_U8: return static_cast<std::uint8_t>(bits);
    case KILN_DTYPE_U16: return static_cast<std::uint16_t>(bits);
    case KILN_DTYPE_U32: return static_cast<std::uint32_t>(bits);
    case KILN_DTYPE_U64: return static_cast<std::int64_t>(bits);
    case KILN_DTYPE_BOOL: return bits != 0;
    default: return static_cast<std::int64_t>(bits);
  }
}

std::int64_t eval_host_expr(std::span<const kiln_op> ops, std::uint32_t id, std::span<const kiln_arg> args) {
  Memo memo;
  return eval(ops, id, args, 0, memo);
}

LaunchGrid compute_grid(std::span<const kiln_op> ops, std::span<const kiln_arg> args) {
  LaunchGrid grid;
  for (std::uint32_t id = 0; id < ops.size(); ++id) {
    const kiln_op& op = ops[id];
    if (op.kind != KILN_OP_INDEX) continue;
    if (op.attr >= KILN_MAX_AXES)
      fail(KILN_STATUS_INVALID_ARGUMENT, "op " + std::to_string(id) + ": index axis " + std::to_string(op.attr) + " > 2", id);
    if (op.src[0] >= id) not_evaluable(id, "length does not precede the index");
    Memo memo;
    const std::int64_t len = eval(ops, op.src[0], args, 0, memo);
    if (len <= 0)
      fail(KILN_STATUS_INVALID_ARGUMENT,
           "op " + std::to_string(id) + ": index length evaluates to " + std::to_string(len) + " (must be >= 1)", id);
    if (op.code == KILN_SCOPE_GROUP) {
      grid.groups[op.attr] = static_cast<std::uint64_t>(len);
    } else if (op.code == KILN_SCOPE_LOCAL) {
      if (ops[op.src[0]].kind != KILN_OP_CONST) not_evaluable(id, "a LOCAL length must be a CONST");
      if (len > UINT32_MAX) not_evaluable(id, "LOCAL length too large");
      grid.local[op.attr] = static_cast<std::uint32_t>(len);
    } else {
      fail(KILN_STATUS_INVALID_ARGUMENT, "op " + std::to_string(id) + ": index scope must be group or local", id);
    }
  }
  return grid;
}

}  // namespace kiln::sdk
