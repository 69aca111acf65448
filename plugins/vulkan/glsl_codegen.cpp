// The GLSL emitter: walks the ops once, one statement per op.
#include "glsl_codegen.hpp"

#include "glsl_types.hpp"

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/wire.hpp>

#include <array>
#include <vector>

namespace kiln::vulkan {

namespace {

std::string var(std::uint32_t id) { return "v" + std::to_string(id); }
std::string lane_of(const std::string& v, unsigned lane) { return v + "[" + std::to_string(lane) + "]"; }

std::string describe(std::uint32_t id, const kiln_op& op) {
  std::string what(sdk::op_kind_name(op.kind));
  if (op.kind == KILN_OP_UNARY) what += " " + std::string(sdk::unary_name(op.code));
  if (op.kind == KILN_OP_BINARY) what += " " + std::string(sdk::binary_name(op.code));
  if (sdk::dtype_valid(op.dtype)) what += " " + std::string(sdk::dtype_name(op.dtype));
  if (op.lanes > 1) what += "x" + std::to_string(op.lanes);
  return "op " + std::to_string(id) + " (" + what + ")";
}

class GlslEmitter {
 public:
  GlslEmitter(std::span<const kiln_op> ops, const KernelInterface& iface, const DeviceCaps& caps)
      : ops_(ops), iface_(iface), caps_(caps) {}

  std::string run() {
    declare_params();
    for (std::uint32_t id = 0; id < ops_.size(); ++id) emit(id);
    if (!open_blocks_.empty()) reject(open_blocks_.back(), KILN_STATUS_INVALID_ARGUMENT, "block is never closed");
    std::string out = "#version 450\n";
    if (caps_.int64) out += "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";
    if (caps_.int16) out += "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n";
    if (caps_.int8) out += "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n";
    if (caps_.storage16) out += "#extension GL_EXT_shader_16bit_storage : require\n";
    if (caps_.storage8) out += "#extension GL_EXT_shader_8bit_storage : require\n";
    out += "layout(local_size_x = " + std::to_string(iface_.local_size[0]) +
           ", local_size_y = " + std::to_string(iface_.local_size[1]) +
           ", local_size_z = " + std::to_string(iface_.local_size[2]) + ") in;\n";
    out += globals_;
    out += glsl_helpers(uses_half_, uses_pow_, uses_fmod_f32_, uses_fmod_f64_);
    out += "void main() {\n" + body_ + "}\n";
    return out;
  }

 private:
  std::span<const kiln_op> ops_;
  const KernelInterface& iface_;
  const DeviceCaps& caps_;
  std::string globals_, body_;
  int depth_ = 1;
  std::vector<std::uint32_t> open_blocks_;
  std::uint64_t shared_bytes_ = 0;
  bool uses_half_ = false, uses_pow_ = false, uses_fmod_f32_ = false, uses_fmod_f64_ = false;

  [[noreturn]] void reject(std::uint32_t id, kiln_status status, const std::string& why) const {
    sdk::fail(status, describe(id, ops_[id]) + ": " + why, id);
  }

  void line(const std::string& text) {
    body_.append(static_cast<std::size_t>(depth_) * 2, ' ');
    body_ += text;
    body_ += '\n';
  }
  void define(std::uint32_t id, const std::string& type, const std::string& expr) {
    line("const " + type + " " + var(id) + " = " + expr + ";");
  }

  void need_dtype(std::uint32_t id, unsigned dt) const {
    if (!sdk::dtype_valid(dt)) reject(id, KILN_STATUS_UNSUPPORTED, "dtype " + std::to_string(dt) + " is unknown");
    if (!dtype_supported(caps_, dt))
      reject(id, KILN_STATUS_UNSUPPORTED, std::string(sdk::dtype_name(dt)) + " is not supported by this Vulkan device");
  }
  void need_lanes(std::uint32_t id, unsigned lanes) const {
    if (lanes == 0 || lanes > 4) reject(id, KILN_STATUS_UNSUPPORTED, std::to_string(lanes) + "-lane vectors (GLSL has 2..4)");
  }

  const kiln_op& operand(std::uint32_t id, unsigned i) const {
    const std::uint32_t src = ops_[id].src[i];
    if (src >= id || !sdk::has_result(ops_[src].kind))
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand " + std::to_string(i) + " is not an earlier value");
    return ops_[src];
  }
  const kiln_op& value_operand(std::uint32_t id, unsigned i) const {
    const kiln_op& o = operand(id, i);
    if (sdk::is_memory(o)) reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand " + std::to_string(i) + " is memory, not a value");
    return o;
  }

  // --------------------------------------------------------- params, memory

  void declare_params() {
    std::string scalars;
    for (std::uint32_t slot = 0; slot < iface_.params.size(); ++slot) {
      const ParamBinding& p = iface_.params[slot];
      need_dtype(p.op, p.dtype);
      if (p.kind == KILN_PARAM_VARIABLE) {
        scalars += "  layout(offset = " + std::to_string(p.push_offset) + ") " + push_type(p.dtype) + " p" +
                   std::to_string(slot) + ";\n";
      } else {
        const std::string b = std::to_string(p.binding);
        globals_ += "layout(std430, set = 0, binding = " + b + ") " +
                    (p.kind == KILN_PARAM_GLOBAL ? "readonly " : "") + "buffer KilnBuffer" + b + " { " +
                    memory_type(p.dtype) + " data[]; } b" + b + ";\n";
      }
    }
    if (!scalars.empty()) globals_ += "layout(push_constant) uniform KilnScalars {\n" + scalars + "} kiln_scalars;\n";
  }

  static std::string push_type(unsigned dt) {
    switch (dt) {
      case KILN_DTYPE_F32: return "float";
      case KILN_DTYPE_F64: return "double";
      case KILN_DTYPE_I32: return "int";
      case KILN_DTYPE_I64: return "int64_t";
      case KILN_DTYPE_U64: return "uint64_t";
      default: return "uint";  // narrow types, bool and halves: their bits in a word
    }
  }

  std::string from_push(unsigned dt, const std::string& word) {
    switch (dt) {
      case KILN_DTYPE_F32: case KILN_DTYPE_F64: case KILN_DTYPE_I32: case KILN_DTYPE_I64: case KILN_DTYPE_U64:
      case KILN_DTYPE_U32:
        return word;
      case KILN_DTYPE_BOOL: return "(" + word + " != 0u)";
      case KILN_DTYPE_F16: case KILN_DTYPE_BF16: return from_memory(dt, "uint16_t(" + word + ")");
      default: return value_type(dt) + "(" + word + ")";  // narrow integers: the low bits
    }
  }

  std::string from_memory(unsigned dt, const std::string& element) {
    if (dt == KILN_DTYPE_BOOL) return "(" + element + " != uint8_t(0))";
    if (!is_half(dt)) return element;
    uses_half_ = true;
    return (dt == KILN_DTYPE_F16 ? "kiln_f16_to_f32(" : "kiln_bf16_to_f32(") + element + ")";
  }
  std::string to_memory(unsigned dt, const std::string& value) {
    if (dt == KILN_DTYPE_BOOL) return "(" + value + " ? uint8_t(1) : uint8_t(0))";
    if (!is_half(dt)) return value;
    uses_half_ = true;
    return (dt == KILN_DTYPE_F16 ? "kiln_f32_to_f16(" : "kiln_f32_to_bf16(") + value + ")";
  }

  // The array expression of a memory operand: an SSBO's data or a STORAGE array.
  std::string memory(std::uint32_t id, bool store) const {
    const kiln_op& mem = operand(id, 0);
    if (!sdk::is_memory(mem)) reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand 0 is not a buffer or storage");
    if (store && mem.kind == KILN_OP_PARAM && mem.code != KILN_PARAM_GLOBAL_MUT)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "stores into a read-only (GLOBAL) param");
    if (mem.dtype != ops_[id].dtype) reject(id, KILN_STATUS_INVALID_ARGUMENT, "dtype differs from the memory's");
    const kiln_op& index = value_operand(id, 1);
    if (index.lanes != 1 || !sdk::dtype_is_int(index.dtype))
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "the index must be an integer scalar");
    if (mem.kind == KILN_OP_PARAM) return "b" + std::to_string(iface_.params[mem.attr].binding) + ".data";
    return var(ops_[id].src[0]);
  }
  // SSBO and array indices are 32-bit in GLSL; bound buffers are < 4 GiB.
  std::string element(const std::string& array, std::uint32_t index_op, unsigned lane) const {
    return array + "[uint(" + var(index_op) + ")" + (lane == 0 ? "" : " + " + std::to_string(lane) + "u") + "]";
  }

  // ----------------------------------------------------------------- ops

  void emit(std::uint32_t id) {
    const kiln_op& op = ops_[id];
    switch (op.kind) {
      case KILN_OP_CONST:
        need_dtype(id, op.dtype);
        if (op.lanes != 1) reject(id, KILN_STATUS_INVALID_ARGUMENT, "a CONST is a scalar");
        return define(id, value_type(op.dtype), literal(op.dtype, op.imm));
      case KILN_OP_PARAM:
        if (op.code == KILN_PARAM_VARIABLE)
          define(id, value_type(op.dtype), from_push(op.dtype, "kiln_scalars.p" + std::to_string(op.attr)));
        return;
      case KILN_OP_STORAGE: {
        need_dtype(id, op.dtype);
        if (op.imm == 0 || op.imm > (1u << 30)) reject(id, KILN_STATUS_INVALID_ARGUMENT, "storage length must be in 1..2^30");
        const std::string decl = memory_type(op.dtype) + " " + var(id) + "[" + std::to_string(op.imm) + "];";
        if (op.code == KILN_SCOPE_LOCAL) {
          shared_bytes_ += op.imm * sdk::dtype_bytes(op.dtype);
          if (shared_bytes_ > caps_.limits.maxComputeSharedMemorySize)
            reject(id, KILN_STATUS_UNSUPPORTED, "LOCAL storage totals " + std::to_string(shared_bytes_) +
                                                    " bytes; the device has " +
                                                    std::to_string(caps_.limits.maxComputeSharedMemorySize));
          globals_ += "shared " + decl + "\n";
        }
        else if (op.code == KILN_SCOPE_REGISTER) line(decl);
        else reject(id, KILN_STATUS_INVALID_ARGUMENT, "storage scope must be LOCAL or REGISTER");
        return;
      }
      case KILN_OP_LOAD: return emit_load(id, op);
      case KILN_OP_STORE: return emit_store(id, op);
      case KILN_OP_INDEX: {
        if (op.attr >= 3) reject(id, KILN_STATUS_INVALID_ARGUMENT, "axis must be 0, 1 or 2");
        const char axis = "xyz"[op.attr];
        if (op.code == KILN_SCOPE_GROUP) return define(id, "int64_t", std::string("int64_t(gl_WorkGroupID.") + axis + ")");
        if (op.code == KILN_SCOPE_LOCAL)
          return define(id, "int64_t", std::string("int64_t(gl_LocalInvocationID.") + axis + ")");
        reject(id, KILN_STATUS_INVALID_ARGUMENT, "index scope must be GROUP or LOCAL");
      }
      case KILN_OP_LOOP: {
        const kiln_op& count = value_operand(id, 0);
        if (count.lanes != 1 || !sdk::dtype_is_int(count.dtype))
          reject(id, KILN_STATUS_INVALID_ARGUMENT, "the trip count must be an integer scalar");
        line("for (int64_t " + var(id) + " = int64_t(0); " + var(id) + " < int64_t(" + var(op.src[0]) + "); ++" +
             var(id) + ") {");
        return open(id);
      }
      case KILN_OP_IF: {
        const kiln_op& cond = value_operand(id, 0);
        if (cond.lanes != 1 || cond.dtype != KILN_DTYPE_BOOL)
          reject(id, KILN_STATUS_INVALID_ARGUMENT, "the condition must be a bool scalar");
        line("if (" + var(op.src[0]) + ") {");
        return open(id);
      }
      case KILN_OP_END_LOOP: return close(id, KILN_OP_LOOP);
      case KILN_OP_END_IF: return close(id, KILN_OP_IF);
      case KILN_OP_BARRIER:
        return line("memoryBarrierShared();\n" + std::string(static_cast<std::size_t>(depth_) * 2, ' ') + "barrier();");
      case KILN_OP_UNARY: case KILN_OP_BINARY: case KILN_OP_CAST: case KILN_OP_MAD: case KILN_OP_SELECT:
        return emit_elementwise(id, op);
      case KILN_OP_VEC_BROADCAST: {
        need_dtype(id, op.dtype);
        need_lanes(id, op.lanes);
        if (value_operand(id, 0).lanes != 1) reject(id, KILN_STATUS_INVALID_ARGUMENT, "broadcast source must be a scalar");
        const std::string type = vector_type(op.dtype, op.lanes);
        return define(id, type, type + "(" + var(op.src[0]) + ")");
      }
      case KILN_OP_VEC_INSERT: {
        need_lanes(id, op.lanes);
        const kiln_op& v = value_operand(id, 0);
        value_operand(id, 1);
        if (op.lanes < 2 || v.lanes != op.lanes || op.attr >= op.lanes)
          reject(id, KILN_STATUS_INVALID_ARGUMENT, "lane out of range or vector widths differ");
        line(vector_type(op.dtype, op.lanes) + " " + var(id) + " = " + var(op.src[0]) + ";");
        return line(lane_of(var(id), op.attr) + " = " + var(op.src[1]) + ";");
      }
      case KILN_OP_VEC_EXTRACT: {
        const kiln_op& v = value_operand(id, 0);
        if (v.lanes < 2 || op.attr >= v.lanes) reject(id, KILN_STATUS_INVALID_ARGUMENT, "lane out of range");
        return define(id, value_type(op.dtype), lane_of(var(op.src[0]), op.attr));
      }
      default:
        reject(id, KILN_STATUS_UNSUPPORTED, "op kind " + std::to_string(op.kind) + " is unknown");
    }
  }

  void open(std::uint32_t id) {
    open_blocks_.push_back(id);
    ++depth_;
  }
  void close(std::uint32_t id, unsigned begin_kind) {
    if (open_blocks_.empty() || open_blocks_.back() != ops_[id].src[0] || ops_[open_blocks_.back()].kind != begin_kind)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "does not close the innermost open block");
    open_blocks_.pop_back();
    --depth_;
    line("}");
  }

  void emit_load(std::uint32_t id, const kiln_op& op) {
    need_dtype(id, op.dtype);
    need_lanes(id, op.lanes);
    const std::string array = memory(id, false);
    if (op.lanes == 1) return define(id, value_type(op.dtype), from_memory(op.dtype, element(array, op.src[1], 0)));
    std::string lanes;
    for (unsigned k = 0; k < op.lanes; ++k)
      lanes += (k ? ", " : "") + from_memory(op.dtype, element(array, op.src[1], k));
    const std::string type = vector_type(op.dtype, op.lanes);
    define(id, type, type + "(" + lanes + ")");
  }

  void emit_store(std::uint32_t id, const kiln_op& op) {
    need_dtype(id, op.dtype);
    need_lanes(id, op.lanes);
    const std::string array = memory(id, true);
    const kiln_op& value = value_operand(id, 2);
    if (value.lanes != op.lanes || value.dtype != op.dtype)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "the value's dtype or lanes differ from the store's");
    const std::string v = var(op.src[2]);
    for (unsigned k = 0; k < op.lanes; ++k)
      line(element(array, op.src[1], k) + " = " + to_memory(op.dtype, op.lanes == 1 ? v : lane_of(v, k)) + ";");
  }

  // ------------------------------------------------------- elementwise ops

  std::string rounded(unsigned dt, const std::string& e) {
    if (!is_half(dt)) return e;
    uses_half_ = true;
    return (dt == KILN_DTYPE_F16 ? "kiln_round_f16(" : "kiln_round_bf16(") + e + ")";
  }

  std::string unary(unsigned code, unsigned dt, const std::string& x) {
    if (is_real(dt)) {
      const bool f64 = dt == KILN_DTYPE_F64;
      switch (code) {
        case KILN_UNARY_NEG: return rounded(dt, "(-" + x + ")");
        case KILN_UNARY_RECIP: return rounded(dt, std::string(f64 ? "(1.0lf / " : "(1.0 / ") + x + ")");
        case KILN_UNARY_EXP: return rounded(dt, "exp(" + x + ")");
        case KILN_UNARY_EXP2: return rounded(dt, "exp2(" + x + ")");
        case KILN_UNARY_LN: return rounded(dt, "log(" + x + ")");
        case KILN_UNARY_LOG2: return rounded(dt, "log2(" + x + ")");
        case KILN_UNARY_SQRT: return rounded(dt, "sqrt(" + x + ")");
        case KILN_UNARY_SIN: return rounded(dt, "sin(" + x + ")");
        case KILN_UNARY_COS: return rounded(dt, "cos(" + x + ")");
        case KILN_UNARY_FLOOR: return "floor(" + x + ")";
        case KILN_UNARY_TRUNC: return "trunc(" + x + ")";
        case KILN_UNARY_ABS: return "abs(" + x + ")";
        default: return "";
      }
    }
    if (dt == KILN_DTYPE_BOOL) return "(!" + x + ")";  // BIT_NOT, the only one supported_ops allows
    const std::string t = value_type(dt);
    switch (code) {
      case KILN_UNARY_NEG: return "(" + t + "(0) - " + x + ")";
      case KILN_UNARY_BIT_NOT: return "(~" + x + ")";
      case KILN_UNARY_ABS:
        return sdk::dtype_is_signed_int(dt) ? "(" + x + " < " + t + "(0) ? " + t + "(0) - " + x + " : " + x + ")" : x;
      default: return "";
    }
  }

  std::string binary(unsigned code, unsigned dt, const std::string& x, const std::string& y) {
    const auto infix = [&](const char* o) { return "(" + x + " " + o + " " + y + ")"; };
    switch (code) {
      case KILN_BINARY_CMPLT: return infix("<");
      case KILN_BINARY_CMPGT: return infix(">");
      case KILN_BINARY_EQ: return infix("==");
      case KILN_BINARY_NOT_EQ: return infix("!=");
      case KILN_BINARY_MAX: return "(" + x + " > " + y + " ? " + x + " : " + y + ")";
      case KILN_BINARY_MIN: return "(" + x + " < " + y + " ? " + x + " : " + y + ")";
      default: break;
    }
    if (is_real(dt)) {
      switch (code) {
        case KILN_BINARY_ADD: return rounded(dt, infix("+"));
        case KILN_BINARY_SUB: return rounded(dt, infix("-"));
        case KILN_BINARY_MUL: return rounded(dt, infix("*"));
        case KILN_BINARY_DIV: return rounded(dt, infix("/"));
        case KILN_BINARY_POW: uses_pow_ = true; return rounded(dt, "kiln_pow(" + x + ", " + y + ")");
        case KILN_BINARY_MOD:
          (dt == KILN_DTYPE_F64 ? uses_fmod_f64_ : uses_fmod_f32_) = true;
          return rounded(dt, "kiln_fmod(" + x + ", " + y + ")");
        default: return "";
      }
    }
    if (dt == KILN_DTYPE_BOOL) {
      switch (code) {
        case KILN_BINARY_AND: case KILN_BINARY_BIT_AND: return infix("&&");
        case KILN_BINARY_OR: case KILN_BINARY_BIT_OR: return infix("||");
        case KILN_BINARY_BIT_XOR: return infix("!=");
        default: return "";
      }
    }
    const std::string mask = std::to_string(sdk::dtype_bytes(dt) * 8 - 1);
    switch (code) {
      case KILN_BINARY_ADD: return infix("+");
      case KILN_BINARY_SUB: return infix("-");
      case KILN_BINARY_MUL: return infix("*");
      case KILN_BINARY_DIV: return infix("/");
      case KILN_BINARY_MOD:  // GLSL's % on signed types is undefined for negatives
        return sdk::dtype_is_signed_int(dt) ? "(" + x + " - (" + x + " / " + y + ") * " + y + ")" : infix("%");
      case KILN_BINARY_AND: case KILN_BINARY_BIT_AND: return infix("&");
      case KILN_BINARY_OR: case KILN_BINARY_BIT_OR: return infix("|");
      case KILN_BINARY_BIT_XOR: return infix("^");
      case KILN_BINARY_SHL: return "(" + x + " << (int(" + y + ") & " + mask + "))";
      case KILN_BINARY_SHR: return "(" + x + " >> (int(" + y + ") & " + mask + "))";
      default: return "";
    }
  }

  std::string cast(unsigned from, unsigned to, const std::string& x) {
    if (from == to) return x;
    if (to == KILN_DTYPE_BOOL) return "(" + x + " != " + value_type(from) + "(0))";
    if (from == KILN_DTYPE_BOOL) return "(" + x + " ? " + value_type(to) + "(1) : " + value_type(to) + "(0))";
    if (is_half(to)) return rounded(to, "float(" + x + ")");
    return value_type(to) + "(" + x + ")";
  }

  // Ops GLSL applies to whole vectors with the scalar spelling.
  static bool whole_vector(const kiln_op& op, unsigned dt, unsigned condition_lanes) {
    const bool real = dt == KILN_DTYPE_F32 || dt == KILN_DTYPE_F64;
    const bool integer = sdk::dtype_is_int(dt);
    switch (op.kind) {
      case KILN_OP_MAD: return real || integer;
      case KILN_OP_UNARY: return (real && op.code == KILN_UNARY_NEG) || (integer && op.code == KILN_UNARY_BIT_NOT);
      case KILN_OP_BINARY:
        switch (op.code) {
          case KILN_BINARY_ADD: case KILN_BINARY_SUB: case KILN_BINARY_MUL: return real || integer;
          case KILN_BINARY_DIV: return real;
          case KILN_BINARY_BIT_AND: case KILN_BINARY_BIT_OR: case KILN_BINARY_BIT_XOR:
          case KILN_BINARY_AND: case KILN_BINARY_OR: return integer;
          default: return false;
        }
      case KILN_OP_SELECT: return condition_lanes == 1;
      default: return false;
    }
  }

  void emit_elementwise(std::uint32_t id, const kiln_op& op) {
    need_lanes(id, op.lanes);
    const unsigned n = sdk::operand_count(op.kind);
    std::array<const kiln_op*, 3> in{};
    for (unsigned i = 0; i < n; ++i) {
      in[i] = &value_operand(id, i);
      const bool scalar_condition = op.kind == KILN_OP_SELECT && i == 0 && in[i]->lanes == 1;
      if (in[i]->lanes != op.lanes && !scalar_condition)
        reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand " + std::to_string(i) + " has " + std::to_string(in[i]->lanes) + " lanes");
    }
    const unsigned dt = op.kind == KILN_OP_SELECT ? in[1]->dtype : in[0]->dtype;  // the dtype computed in
    need_dtype(id, dt);
    need_dtype(id, op.dtype);
    const std::uint32_t allowed = supported_ops(caps_, dt);
    if ((op.kind == KILN_OP_UNARY && !(op.code >= 1 && op.code < KILN_UNARY_COUNT && (allowed & KILN_CAP_UNARY(op.code)))) ||
        (op.kind == KILN_OP_BINARY && !(op.code >= 1 && op.code < KILN_BINARY_COUNT && (allowed & KILN_CAP_BINARY(op.code)))))
      reject(id, KILN_STATUS_UNSUPPORTED, "not available on " + std::string(sdk::dtype_name(dt)) + " in GLSL on this device");
    if (op.kind == KILN_OP_MAD && !is_real(dt) && !sdk::dtype_is_int(dt))
      reject(id, KILN_STATUS_UNSUPPORTED, "mad on " + std::string(sdk::dtype_name(dt)));

    const auto spell = [&](const std::array<std::string, 3>& a) -> std::string {
      switch (op.kind) {
        case KILN_OP_UNARY: return unary(op.code, dt, a[0]);
        case KILN_OP_BINARY: return binary(op.code, dt, a[0], a[1]);
        case KILN_OP_CAST: return cast(dt, op.dtype, a[0]);
        case KILN_OP_MAD: return rounded(dt, "(" + a[0] + " * " + a[1] + " + " + a[2] + ")");
        default: return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
      }
    };
    const std::string type = vector_type(op.dtype, op.lanes);
    if (op.lanes == 1 || whole_vector(op, dt, in[0]->lanes)) {
      const std::string e = spell({var(op.src[0]), n > 1 ? var(op.src[1]) : "", n > 2 ? var(op.src[2]) : ""});
      if (e.empty()) reject(id, KILN_STATUS_UNSUPPORTED, "not available in GLSL");
      return define(id, type, e);
    }
    std::string lanes;
    for (unsigned k = 0; k < op.lanes; ++k) {
      std::array<std::string, 3> a;
      for (unsigned i = 0; i < n; ++i) a[i] = in[i]->lanes == 1 ? var(op.src[i]) : lane_of(var(op.src[i]), k);
      const std::string e = spell(a);
      if (e.empty()) reject(id, KILN_STATUS_UNSUPPORTED, "not available in GLSL");
      lanes += (k ? ", " : "") + e;
    }
    define(id, type, type + "(" + lanes + ")");
  }
};

}  // namespace

std::string emit_glsl(std::span<const kiln_op> ops, const KernelInterface& iface, const DeviceCaps& caps) {
  return GlslEmitter(ops, iface, caps).run();
}

}  // namespace kiln::vulkan
