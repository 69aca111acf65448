#include "kiln/sdk/listing.hpp"

#include <bit>
#include <charconv>
#include <cstdio>

#include "kiln/sdk/half.hpp"
#include "kiln/sdk/wire.hpp"

namespace kiln::sdk {

namespace {

std::string name(std::uint32_t id) { return id == KILN_NO_OPERAND ? std::string("%none") : "%" + std::to_string(id); }

std::string type(const kiln_op& op) {
  std::string s(dtype_name(op.dtype));
  if (op.lanes != 1) s += "x" + std::to_string(op.lanes);
  return s;
}

template <class F>
std::string shortest(F value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

std::string hex16(std::uint64_t bits) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "0x%04x", static_cast<unsigned>(bits & 0xffffu));
  return buffer;
}

std::string line(const kiln_op& op) {
  const std::string a = name(op.src[0]), b = name(op.src[1]), c = name(op.src[2]);
  switch (op.kind) {
    case KILN_OP_CONST: return "const " + type(op) + " " + const_value_text(op.dtype, op.imm);
    case KILN_OP_PARAM:
      return "param " + std::string(param_kind_name(op.code)) + " " + type(op) + " slot " + std::to_string(op.attr) +
             (op.imm != 0 ? " [" + std::to_string(op.imm) + "]" : "");
    case KILN_OP_STORAGE:
      return "storage " + std::string(scope_name(op.code)) + " " + type(op) + " [" + std::to_string(op.imm) + "]";
    case KILN_OP_LOAD: return "load " + type(op) + " " + a + "[" + b + "]";
    case KILN_OP_STORE: return "store " + type(op) + " " + a + "[" + b + "] = " + c;
    case KILN_OP_INDEX:
      return "index " + std::string(scope_name(op.code)) + " " + std::to_string(op.attr) + " len " + a;
    case KILN_OP_LOOP: return "loop " + a;
    case KILN_OP_END_LOOP: return "endloop " + a;
    case KILN_OP_IF: return "if " + a;
    case KILN_OP_END_IF: return "endif " + a;
    case KILN_OP_BARRIER: return "barrier " + std::string(scope_name(op.code));
    case KILN_OP_UNARY: return std::string(unary_name(op.code)) + " " + type(op) + " " + a;
    case KILN_OP_BINARY: return std::string(binary_name(op.code)) + " " + type(op) + " " + a + ", " + b;
    case KILN_OP_CAST: return "cast " + type(op) + " " + a;
    case KILN_OP_MAD: return "mad " + type(op) + " " + a + ", " + b + ", " + c;
    case KILN_OP_SELECT: return "select " + type(op) + " " + a + ", " + b + ", " + c;
    case KILN_OP_VEC_BROADCAST: return "broadcast " + type(op) + " " + a;
    case KILN_OP_VEC_INSERT: return "insert " + type(op) + " " + a + ", " + b + ", lane " + std::to_string(op.attr);
    case KILN_OP_VEC_EXTRACT: return "extract " + type(op) + " " + a + ", lane " + std::to_string(op.attr);
    case KILN_OP_BF16_PAIR: return "bf16_pair " + type(op) + " " + a + ", " + b;
    case KILN_OP_DOT_BF16: return "dot_bf16 " + type(op) + " " + a + ", " + b + ", " + c;
    case KILN_OP_COPY_ASYNC: return "copy_async " + type(op) + " " + a + "[" + b + "] = " + c;
    case KILN_OP_COPY_COMMIT: return "copy_commit";
    case KILN_OP_PREFETCH: return "prefetch " + type(op) + " " + a + "[" + b + "]";
    case KILN_OP_LOAD_MATRIX:
      return "load_matrix x" + std::to_string(op.attr) + (op.code == 1 ? " trans " : " ") + type(op) + " " + a + "[" + b + "]";
    case KILN_OP_COPY_WAIT: return "copy_wait " + std::to_string(op.attr);
    case KILN_OP_WGMMA: return "wgmma n" + std::to_string(op.attr) + " " + type(op) + " " + a + "[" + b + "], " + c;
    case KILN_OP_WGMMA_FENCE: return "wgmma_fence";
    case KILN_OP_WGMMA_COMMIT: return "wgmma_commit";
    case KILN_OP_WGMMA_WAIT: return "wgmma_wait " + std::to_string(op.attr);
    case KILN_OP_SUBGROUP_REDUCE:
      return "subgroup_reduce " + std::string(binary_name(op.code)) + " " + std::to_string(op.attr) + " " + type(op) +
             " " + a;
    default:
      return "op kind=" + std::to_string(op.kind) + " dtype=" + std::to_string(op.dtype) + " lanes=" +
             std::to_string(op.lanes) + " code=" + std::to_string(op.code) + " attr=" + std::to_string(op.attr) +
             " src=" + a + "," + b + "," + c + " imm=" + std::to_string(op.imm);
  }
}

}  // namespace

std::string const_value_text(unsigned dtype, std::uint64_t bits) {
  switch (dtype) {
    case KILN_DTYPE_F32: return shortest(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
    case KILN_DTYPE_F64: return shortest(std::bit_cast<double>(bits));
    case KILN_DTYPE_F16: return shortest(f16_bits_to_f32(static_cast<std::uint16_t>(bits))) + " (" + hex16(bits) + ")";
    case KILN_DTYPE_BF16: return shortest(bf16_bits_to_f32(static_cast<std::uint16_t>(bits))) + " (" + hex16(bits) + ")";
    case KILN_DTYPE_BOOL: return bits == 0 ? "false" : bits == 1 ? "true" : "bool(" + std::to_string(bits) + ")";
    case KILN_DTYPE_I8: return std::to_string(static_cast<std::int8_t>(bits));
    case KILN_DTYPE_I16: return std::to_string(static_cast<std::int16_t>(bits));
    case KILN_DTYPE_I32: return std::to_string(static_cast<std::int32_t>(bits));
    case KILN_DTYPE_I64: return std::to_string(static_cast<std::int64_t>(bits));
    default: return std::to_string(bits);
  }
}

std::string wire_listing(std::span<const kiln_op> ops) {
  std::string out;
  std::size_t depth = 0;
  for (std::size_t id = 0; id < ops.size(); ++id) {
    const kiln_op& op = ops[id];
    if ((op.kind == KILN_OP_END_LOOP || op.kind == KILN_OP_END_IF) && depth > 0) --depth;
    out.append(2 * depth, ' ');
    if (has_result(op.kind)) out += "%" + std::to_string(id) + " = ";
    out += line(op);
    out += '\n';
    if (op.kind == KILN_OP_LOOP || op.kind == KILN_OP_IF) ++depth;
  }
  return out;
}

}  // namespace kiln::sdk
