// The dialect-independent part of the C-family emitter: one statement per op.
#include "kiln/sdk/c_emitter.hpp"

#include "c_emitter_detail.hpp"
#include "kiln/sdk/grid.hpp"
#include "kiln/sdk/half.hpp"
#include "kiln/sdk/plugin_support.hpp"
#include "kiln/sdk/wire.hpp"

#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <utility>

namespace kiln::sdk {

namespace {

using detail::is_half;

bool is_real(unsigned dt) { return dt == KILN_DTYPE_F32 || dt == KILN_DTYPE_F64 || is_half(dt); }

std::string describe(std::uint32_t id, const kiln_op& op) {
  std::string what(op_kind_name(op.kind));
  if (op.kind == KILN_OP_UNARY) what += " " + std::string(unary_name(op.code));
  if (op.kind == KILN_OP_BINARY) what += " " + std::string(binary_name(op.code));
  what += " " + std::string(dtype_name(op.dtype));
  if (op.lanes > 1) what += "x" + std::to_string(op.lanes);
  return "op " + std::to_string(id) + " (" + what + ")";
}

// ------------------------------------------------------- scalar expressions --
//
// One place decides how every op is spelled on scalars (and, for the ops a
// dialect applies to whole vectors, on vectors: the spelling is the same).

class Spelling {
 public:
  explicit Spelling(const Dialect& d) : d_(d) {}

  // Prelude helpers the spelled expressions call.
  std::set<std::string> divmod_helpers;  // "div_i32", "mod_u8", ...
  bool uses_half = false;

  // An expression of the op's result, or "" when unsupported.
  std::string unary(unsigned code, unsigned dt, const std::string& x) {
    if (is_real(dt)) {
      std::string e;
      const bool f64 = dt == KILN_DTYPE_F64;
      switch (code) {
        case KILN_UNARY_NEG: e = "(-" + x + ")"; break;
        case KILN_UNARY_RECIP: e = "(1.0" + std::string(f64 ? "" : d_.f32_suffix) + " / " + x + ")"; break;
        case KILN_UNARY_BIT_NOT: return "";
        default: {
          if (code >= KILN_UNARY_COUNT) return "";
          const std::string_view fn = f64 ? d_.unary_f64[code] : d_.unary_f32[code];
          if (fn.empty()) return "";
          e = std::string(fn) + "(" + x + ")";
        }
      }
      return rounded(dt, e);
    }
    if (dt == KILN_DTYPE_BOOL) return code == KILN_UNARY_BIT_NOT ? "(" + x + " ^ 1)" : "";
    if (!dtype_is_int(dt)) return "";
    const std::string u(wide_unsigned(dt));
    switch (code) {
      case KILN_UNARY_NEG: return "((" + u + ")0 - (" + u + ")" + x + ")";
      case KILN_UNARY_BIT_NOT: return "(~" + x + ")";
      case KILN_UNARY_ABS:
        if (!dtype_is_signed_int(dt)) return x;
        return "(" + x + " < 0 ? (" + u + ")0 - (" + u + ")" + x + " : (" + u + ")" + x + ")";
      default: return "";
    }
  }

  std::string binary(unsigned code, unsigned dt, const std::string& x, const std::string& y) {
    const auto infix = [&](std::string_view o) { return "(" + x + " " + std::string(o) + " " + y + ")"; };
    switch (code) {  // the same on every dtype
      case KILN_BINARY_CMPLT: return infix("<");
      case KILN_BINARY_CMPGT: return infix(">");
      case KILN_BINARY_EQ: return infix("==");
      case KILN_BINARY_NOT_EQ: return infix("!=");
      case KILN_BINARY_MAX: return "(" + x + " > " + y + " ? " + x + " : " + y + ")";
      case KILN_BINARY_MIN: return "(" + x + " < " + y + " ? " + x + " : " + y + ")";
      default: break;
    }
    if (is_real(dt)) {
      const bool f64 = dt == KILN_DTYPE_F64;
      std::string e;
      switch (code) {
        case KILN_BINARY_ADD: e = infix("+"); break;
        case KILN_BINARY_SUB: e = infix("-"); break;
        case KILN_BINARY_MUL: e = infix("*"); break;
        case KILN_BINARY_DIV: e = infix("/"); break;
        case KILN_BINARY_POW: e = std::string(f64 ? d_.pow_f64 : d_.pow_f32) + "(" + x + ", " + y + ")"; break;
        case KILN_BINARY_MOD: e = std::string(f64 ? d_.fmod_f64 : d_.fmod_f32) + "(" + x + ", " + y + ")"; break;
        default: return "";
      }
      return rounded(dt, e);
    }
    const bool is_bool = dt == KILN_DTYPE_BOOL;
    if (!is_bool && !dtype_is_int(dt)) return "";
    switch (code) {  // integers and bool
      case KILN_BINARY_AND: case KILN_BINARY_BIT_AND: return infix("&");
      case KILN_BINARY_OR: case KILN_BINARY_BIT_OR: return infix("|");
      case KILN_BINARY_BIT_XOR: return infix("^");
      default: break;
    }
    if (is_bool) return "";
    const std::string u(wide_unsigned(dt));
    const std::string ux = "(" + u + ")" + x, uy = "(" + u + ")" + y;
    const std::string mask = std::to_string(dtype_bytes(dt) * 8 - 1);
    switch (code) {
      case KILN_BINARY_ADD: return "(" + ux + " + " + uy + ")";
      case KILN_BINARY_SUB: return "(" + ux + " - " + uy + ")";
      case KILN_BINARY_MUL: return "(" + ux + " * " + uy + ")";
      case KILN_BINARY_DIV: return helper("div", dt) + "(" + x + ", " + y + ")";
      case KILN_BINARY_MOD: return helper("mod", dt) + "(" + x + ", " + y + ")";
      case KILN_BINARY_SHL: return "(" + ux + " << (" + y + " & " + mask + "))";
      case KILN_BINARY_SHR: return "(" + x + " >> (" + y + " & " + mask + "))";
      default: return "";
    }
  }

  std::string mad(unsigned dt, const std::string& a, const std::string& b, const std::string& c) {
    if (is_real(dt)) return rounded(dt, "(" + a + " * " + b + " + " + c + ")");
    if (!dtype_is_int(dt)) return "";
    const std::string u = "(" + std::string(wide_unsigned(dt)) + ")";
    return "(" + u + a + " * " + u + b + " + " + u + c + ")";
  }

  std::string cast(unsigned from, unsigned to, const std::string& x) {
    if (from == to) return x;
    if (to == KILN_DTYPE_BOOL) return "(" + x + " != 0)";
    if (is_half(to)) {
      const std::string f32(d_.value_types[KILN_DTYPE_F32]);
      return rounded(to, is_half(from) || from == KILN_DTYPE_F32 ? x : "(" + f32 + ")" + x);
    }
    return "(" + std::string(d_.value_types[to]) + ")" + x;
  }

  // The variable's value read from / written to memory of dtype dt.
  std::string from_storage(unsigned dt, const std::string& element) {
    if (!is_half(dt)) return element;
    uses_half = true;
    return std::string(dt == KILN_DTYPE_F16 ? "kiln_f16_to_f32(" : "kiln_bf16_to_f32(") + element + ")";
  }
  std::string to_storage(unsigned dt, const std::string& value) {
    if (!is_half(dt)) return value;
    uses_half = true;
    return std::string(dt == KILN_DTYPE_F16 ? "kiln_f32_to_f16(" : "kiln_f32_to_bf16(") + value + ")";
  }

  std::string literal(unsigned dt, std::uint64_t bits) const {
    const std::string type(d_.value_types[dt]);
    switch (dt) {
      case KILN_DTYPE_F32: return float_literal(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
      case KILN_DTYPE_F16: return float_literal(f16_bits_to_f32(static_cast<std::uint16_t>(bits)));
      case KILN_DTYPE_BF16: return float_literal(bf16_bits_to_f32(static_cast<std::uint16_t>(bits)));
      case KILN_DTYPE_F64: {
        const double v = std::bit_cast<double>(bits);
        if (!std::isfinite(v)) return "kiln_bits_f64(" + std::to_string(bits) + std::string(d_.u64_suffix) + ")";
        return "(" + hex_float(v) + ")";
      }
      case KILN_DTYPE_BOOL: return "((" + type + ")" + (bits != 0 ? "1" : "0") + ")";
      case KILN_DTYPE_U64: return "((" + type + ")" + std::to_string(bits) + std::string(d_.u64_suffix) + ")";
      case KILN_DTYPE_I64: {
        const std::int64_t v = static_cast<std::int64_t>(bits);
        const std::string sfx(d_.i64_suffix);
        if (v == std::numeric_limits<std::int64_t>::min())
          return "((" + type + ")(-9223372036854775807" + sfx + " - 1" + sfx + "))";
        return "((" + type + ")" + std::to_string(v) + sfx + ")";
      }
      case KILN_DTYPE_U32: return "((" + type + ")" + std::to_string(static_cast<std::uint32_t>(bits)) + "u)";
      default: {  // narrow integers: always within int
        return "((" + type + ")" + std::to_string(int_from_bits(bits, dt)) + ")";
      }
    }
  }

 private:
  const Dialect& d_;

  std::string_view wide_unsigned(unsigned dt) const {
    return d_.value_types[dtype_bytes(dt) == 8 ? KILN_DTYPE_U64 : KILN_DTYPE_U32];
  }

  std::string helper(std::string_view what, unsigned dt) {
    const std::string name = std::string(what) + "_" + std::string(dtype_name(dt));
    divmod_helpers.insert(name);
    return "kiln_" + name;
  }

  std::string rounded(unsigned dt, const std::string& e) {
    if (!is_half(dt)) return e;
    uses_half = true;
    return std::string(dt == KILN_DTYPE_F16 ? "kiln_round_f16(" : "kiln_round_bf16(") + e + ")";
  }

  static std::string hex_float(double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%a", v);
    return buffer;
  }

  std::string float_literal(float v) const {
    if (!std::isfinite(v))
      return "kiln_bits_f32(" + std::to_string(std::bit_cast<std::uint32_t>(v)) + "u)";
    return "(" + hex_float(static_cast<double>(v)) + std::string(d_.f32_suffix) + ")";
  }
};

// ------------------------------------------------------------- the emitter --

class Emitter {
 public:
  Emitter(std::span<const kiln_op> ops, const Dialect& d, const EmitOptions& options)
      : ops_(ops), d_(d), spell_(d) {
    shape_.entry = options.entry;
    shape_.parallel = options.parallel;
    shape_.threads = options.threads;
  }

  EmittedKernel run() {
    collect_shape();
    for (std::uint32_t id = 0; id < ops_.size(); ++id) emit(id);
    if (!open_blocks_.empty()) {
      const std::uint32_t id = open_blocks_.back();
      fail(KILN_STATUS_INVALID_ARGUMENT, describe(id, ops_[id]) + ": block is never closed", id);
    }
    EmittedKernel out;
    out.shape = shape_;
    out.source = d_.prelude(d_, shape_);
    for (const auto& [dt, lanes] : vector_types_) out.source += d_.vector_typedef(d_, dt, lanes);
    out.source += detail::shared_helpers(d_, spell_.uses_half, spell_.divmod_helpers);
    out.source += d_.kernel_begin(d_, shape_);
    out.source += body_;
    out.source += d_.kernel_end(d_, shape_);
    return out;
  }

 private:
  std::span<const kiln_op> ops_;
  const Dialect& d_;
  Spelling spell_;
  KernelShape shape_;
  std::string body_;
  int depth_ = 1;
  std::vector<std::uint32_t> open_blocks_;
  std::set<std::pair<unsigned, unsigned>> vector_types_;

  [[noreturn]] void reject(std::uint32_t id, kiln_status status, const std::string& why) const {
    fail(status, describe(id, ops_[id]) + ": " + why, id);
  }
  [[noreturn]] void unsupported(std::uint32_t id, const std::string& why) const {
    reject(id, KILN_STATUS_UNSUPPORTED, why + " in the " + std::string(d_.name) + " dialect");
  }

  void line(const std::string& text) {
    body_.append(static_cast<std::size_t>(depth_) * 2, ' ');
    body_ += text;
    body_ += '\n';
  }

  static std::string var(std::uint32_t id) { return "v" + std::to_string(id); }

  // The i-th operand of op `id`, checked to be an earlier op with a result.
  const kiln_op& operand(std::uint32_t id, unsigned i) const {
    const std::uint32_t src = ops_[id].src[i];
    if (src >= id) reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand " + std::to_string(i) + " does not precede the op");
    if (!has_result(ops_[src].kind))
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand " + std::to_string(i) + " (op " + std::to_string(src) + ") has no value");
    return ops_[src];
  }
  const kiln_op& value_operand(std::uint32_t id, unsigned i) const {
    const kiln_op& o = operand(id, i);
    if (is_memory(o)) reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand " + std::to_string(i) + " is memory, not a value");
    return o;
  }
  const kiln_op& scalar_index(std::uint32_t id, unsigned i) const {
    const kiln_op& o = value_operand(id, i);
    if (o.lanes != 1 || !dtype_is_int(o.dtype))
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand " + std::to_string(i) + " must be an integer scalar");
    return o;
  }

  std::string value_type(std::uint32_t id, unsigned dt, unsigned lanes) {
    if (!dtype_valid(dt)) reject(id, KILN_STATUS_UNSUPPORTED, "dtype " + std::to_string(dt) + " is unknown");
    if (lanes == 1) return std::string(d_.value_types[dt]);
    if (lanes > KILN_MAX_LANES || (d_.vector_lanes & (1u << lanes)) == 0)
      unsupported(id, std::to_string(lanes) + "-lane vectors are not available");
    vector_types_.emplace(dt, lanes);
    return d_.vector_type(d_, dt, lanes);
  }

  void collect_shape() {
    std::vector<const EmittedParam*> by_slot;
    std::vector<EmittedParam> params;
    for (std::uint32_t id = 0; id < ops_.size(); ++id) {
      const kiln_op& op = ops_[id];
      if (op.dtype == KILN_DTYPE_F64) shape_.uses_f64 = true;
      if (op.kind == KILN_OP_PARAM) {
        if (op.code < KILN_PARAM_GLOBAL || op.code > KILN_PARAM_VARIABLE)
          reject(id, KILN_STATUS_UNSUPPORTED, "param kind " + std::to_string(op.code) + " is unknown");
        if (!dtype_valid(op.dtype)) reject(id, KILN_STATUS_UNSUPPORTED, "dtype " + std::to_string(op.dtype) + " is unknown");
        params.push_back({id, op.code, op.dtype, op.imm});
      }
      if (op.kind == KILN_OP_INDEX) {
        if (op.attr >= KILN_MAX_AXES) reject(id, KILN_STATUS_INVALID_ARGUMENT, "axis must be 0, 1 or 2");
        if (op.code == KILN_SCOPE_GROUP) {
          if (shape_.group_axes[op.attr]) reject(id, KILN_STATUS_INVALID_ARGUMENT, "a second GROUP index on one axis");
          shape_.group_axes[op.attr] = true;
        } else if (op.code == KILN_SCOPE_LOCAL) {
          const kiln_op& len = operand(id, 0);
          if (len.kind != KILN_OP_CONST) reject(id, KILN_STATUS_INVALID_ARGUMENT, "a LOCAL length must be a CONST");
          shape_.local_sizes[op.attr] = int_from_bits(len.imm, len.dtype);
        } else {
          reject(id, KILN_STATUS_INVALID_ARGUMENT, "index scope must be GROUP or LOCAL");
        }
      }
    }
    shape_.params.resize(params.size());
    std::vector<bool> seen(params.size(), false);
    for (const EmittedParam& p : params) {
      const std::uint32_t slot = ops_[p.op].attr;
      if (slot >= params.size() || seen[slot])
        reject(p.op, KILN_STATUS_INVALID_ARGUMENT,
               "param slot " + std::to_string(slot) + " is out of range or used twice (" + std::to_string(params.size()) + " params)");
      seen[slot] = true;
      shape_.params[slot] = p;
    }
  }

  void define(std::uint32_t id, const std::string& type, const std::string& expr) {
    line("const " + type + " " + var(id) + " = " + expr + ";");
  }

  void emit(std::uint32_t id) {
    const kiln_op& op = ops_[id];
    if (op.lanes == 0) reject(id, KILN_STATUS_INVALID_ARGUMENT, "lanes is 0");
    switch (op.kind) {
      case KILN_OP_CONST:
        if (op.lanes != 1) reject(id, KILN_STATUS_INVALID_ARGUMENT, "a CONST is a scalar");
        define(id, value_type(id, op.dtype, 1), spell_.literal(op.dtype, op.imm));
        return;
      case KILN_OP_PARAM:
        if (op.code == KILN_PARAM_VARIABLE)
          define(id, value_type(id, op.dtype, 1), spell_.from_storage(op.dtype, var(id) + "_in"));
        return;  // buffers are named by the signature
      case KILN_OP_STORAGE: return emit_storage(id, op);
      case KILN_OP_LOAD: return emit_load(id, op);
      case KILN_OP_STORE: return emit_store(id, op);
      case KILN_OP_INDEX: return emit_index(id, op);
      case KILN_OP_LOOP: {
        const kiln_op& count = scalar_index(id, 0);
        (void)count;
        line("for (" + value_type(id, KILN_DTYPE_I64, 1) + " " + var(id) + " = 0; " + var(id) + " < " + var(op.src[0]) +
             "; ++" + var(id) + ") {");
        open(id);
        return;
      }
      case KILN_OP_IF: {
        const kiln_op& cond = value_operand(id, 0);
        if (cond.lanes != 1) reject(id, KILN_STATUS_INVALID_ARGUMENT, "the condition must be a scalar");
        line("if (" + var(op.src[0]) + ") {");
        open(id);
        return;
      }
      case KILN_OP_END_LOOP: return close(id, KILN_OP_LOOP);
      case KILN_OP_END_IF: return close(id, KILN_OP_IF);
      case KILN_OP_BARRIER:
        line(d_.barrier.empty() ? "/* barrier: one thread per group */" : std::string(d_.barrier));
        return;
      case KILN_OP_UNARY: case KILN_OP_BINARY: case KILN_OP_CAST: case KILN_OP_MAD: case KILN_OP_SELECT:
        return emit_elementwise(id, op);
      case KILN_OP_VEC_BROADCAST: return emit_broadcast(id, op);
      case KILN_OP_VEC_INSERT: {
        const kiln_op& v = value_operand(id, 0);
        value_operand(id, 1);
        if (op.lanes < 2 || v.lanes != op.lanes || op.attr >= op.lanes)
          reject(id, KILN_STATUS_INVALID_ARGUMENT, "lane out of range or vector widths differ");
        line(value_type(id, op.dtype, op.lanes) + " " + var(id) + " = " + var(op.src[0]) + ";");
        line(d_.lane(var(id), op.attr) + " = " + var(op.src[1]) + ";");
        return;
      }
      case KILN_OP_VEC_EXTRACT: {
        const kiln_op& v = value_operand(id, 0);
        if (op.attr >= v.lanes || v.lanes < 2) reject(id, KILN_STATUS_INVALID_ARGUMENT, "lane out of range");
        define(id, value_type(id, op.dtype, 1), d_.lane(var(op.src[0]), op.attr));
        return;
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

  void emit_storage(std::uint32_t id, const kiln_op& op) {
    if (op.imm == 0 || op.imm > (1u << 30)) reject(id, KILN_STATUS_INVALID_ARGUMENT, "storage length must be in 1..2^30");
    if (!dtype_valid(op.dtype)) reject(id, KILN_STATUS_UNSUPPORTED, "dtype is unknown");
    std::string prefix;
    if (op.code == KILN_SCOPE_LOCAL) prefix = d_.local_storage_prefix;
    else if (op.code != KILN_SCOPE_REGISTER) reject(id, KILN_STATUS_INVALID_ARGUMENT, "storage scope must be LOCAL or REGISTER");
    line(prefix + std::string(d_.storage_types[op.dtype]) + " " + var(id) + "[" + std::to_string(op.imm) + "];");
  }

  void emit_index(std::uint32_t id, const kiln_op& op) {
    const std::string type = value_type(id, KILN_DTYPE_I64, 1);
    if (op.code == KILN_SCOPE_GROUP) return define(id, type, d_.group_index(op.attr));
    if (d_.local_index != nullptr) return define(id, type, d_.local_index(op.attr));
    if (shape_.local_sizes[op.attr] != 1) unsupported(id, "LOCAL axes (threads within a group) are not available");
    define(id, type, "0");
  }

  const kiln_op& memory_operand(std::uint32_t id, bool store) const {
    const kiln_op& mem = operand(id, 0);
    if (!is_memory(mem)) reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand 0 is not a buffer or storage");
    if (store && mem.kind == KILN_OP_PARAM && mem.code != KILN_PARAM_GLOBAL_MUT)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "stores into a read-only (GLOBAL) param");
    scalar_index(id, 1);
    return mem;
  }

  std::string element(const kiln_op& op, unsigned lane) const {
    const std::string mem = var(op.src[0]), index = var(op.src[1]);
    return mem + "[" + (lane == 0 ? index : index + " + " + std::to_string(lane)) + "]";
  }

  void emit_load(std::uint32_t id, const kiln_op& op) {
    memory_operand(id, false);
    const std::string type = value_type(id, op.dtype, op.lanes);
    if (op.lanes == 1) return define(id, type, spell_.from_storage(op.dtype, element(op, 0)));
    if (!is_half(op.dtype)) {
      const std::string name = var(id), mem = var(op.src[0]), index = var(op.src[1]);
      const std::string whole = d_.vector_access(d_, {name, type, mem, index, op.dtype, op.lanes, false});
      if (!whole.empty()) return line(whole);
    }
    line(type + " " + var(id) + ";");
    for (unsigned k = 0; k < op.lanes; ++k)
      line(d_.lane(var(id), k) + " = " + spell_.from_storage(op.dtype, element(op, k)) + ";");
  }

  void emit_store(std::uint32_t id, const kiln_op& op) {
    memory_operand(id, true);
    const kiln_op& value = value_operand(id, 2);
    if (value.lanes != op.lanes) reject(id, KILN_STATUS_INVALID_ARGUMENT, "value lanes differ from the store's");
    const std::string type = value_type(id, op.dtype, op.lanes);
    const std::string v = var(op.src[2]);
    if (op.lanes == 1) return line(element(op, 0) + " = " + spell_.to_storage(op.dtype, v) + ";");
    if (!is_half(op.dtype)) {
      const std::string mem = var(op.src[0]), index = var(op.src[1]);
      const std::string whole = d_.vector_access(d_, {v, type, mem, index, op.dtype, op.lanes, true});
      if (!whole.empty()) return line(whole);
    }
    for (unsigned k = 0; k < op.lanes; ++k) line(element(op, k) + " = " + spell_.to_storage(op.dtype, d_.lane(v, k)) + ";");
  }

  void emit_broadcast(std::uint32_t id, const kiln_op& op) {
    const kiln_op& x = value_operand(id, 0);
    if (x.lanes != 1) reject(id, KILN_STATUS_INVALID_ARGUMENT, "broadcast source must be a scalar");
    const std::string type = value_type(id, op.dtype, op.lanes);
    if (op.lanes == 1) return define(id, type, var(op.src[0]));
    const std::string whole = d_.broadcast(type, var(op.src[0]), op.lanes);
    if (!whole.empty()) return define(id, type, whole);
    line(type + " " + var(id) + ";");
    for (unsigned k = 0; k < op.lanes; ++k) line(d_.lane(var(id), k) + " = " + var(op.src[0]) + ";");
  }

  // The ops whose scalar spelling also applies to whole vectors.
  bool whole_vector(const kiln_op& op, unsigned dt) const {
    if (!d_.whole_vector_ops) return false;
    const bool real = dt == KILN_DTYPE_F32 || dt == KILN_DTYPE_F64;  // f16/bf16 round per lane
    switch (op.kind) {
      case KILN_OP_MAD: return real;
      case KILN_OP_UNARY: return real && op.code == KILN_UNARY_NEG;
      case KILN_OP_BINARY:
        switch (op.code) {
          case KILN_BINARY_ADD: case KILN_BINARY_SUB: case KILN_BINARY_MUL: case KILN_BINARY_DIV: return real;
          case KILN_BINARY_AND: case KILN_BINARY_OR: case KILN_BINARY_BIT_AND: case KILN_BINARY_BIT_OR:
          case KILN_BINARY_BIT_XOR: return !real && !is_half(dt);
          default: return false;
        }
      case KILN_OP_SELECT: return ops_[op.src[0]].lanes == 1;
      default: return false;
    }
  }

  void emit_elementwise(std::uint32_t id, const kiln_op& op) {
    const unsigned n = operand_count(op.kind);
    std::array<const kiln_op*, 3> in{};
    for (unsigned i = 0; i < n; ++i) {
      in[i] = &value_operand(id, i);
      const bool scalar_condition = op.kind == KILN_OP_SELECT && i == 0 && in[i]->lanes == 1;
      if (in[i]->lanes != op.lanes && !scalar_condition)
        reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand " + std::to_string(i) + " has " + std::to_string(in[i]->lanes) + " lanes");
    }
    // The dtype the op computes in (its operands'; a comparison yields BOOL).
    const unsigned dt = op.kind == KILN_OP_SELECT ? in[1]->dtype : in[0]->dtype;
    const auto spell = [&](const std::array<std::string, 3>& a) -> std::string {
      switch (op.kind) {
        case KILN_OP_UNARY: return spell_.unary(op.code, dt, a[0]);
        case KILN_OP_BINARY: return spell_.binary(op.code, dt, a[0], a[1]);
        case KILN_OP_CAST: return spell_.cast(dt, op.dtype, a[0]);
        case KILN_OP_MAD: return spell_.mad(dt, a[0], a[1], a[2]);
        default: return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
      }
    };
    const std::string type = value_type(id, op.dtype, op.lanes);
    if (op.lanes == 1 || whole_vector(op, dt)) {
      const std::string e = spell({var(op.src[0]), n > 1 ? var(op.src[1]) : "", n > 2 ? var(op.src[2]) : ""});
      if (e.empty()) unsupported(id, "this op on " + std::string(dtype_name(dt)) + " is not available");
      return define(id, type, e);
    }
    line(type + " " + var(id) + ";");
    for (unsigned k = 0; k < op.lanes; ++k) {
      std::array<std::string, 3> a;
      for (unsigned i = 0; i < n; ++i) a[i] = in[i]->lanes == 1 ? var(op.src[i]) : d_.lane(var(op.src[i]), k);
      const std::string e = spell(a);
      if (e.empty()) unsupported(id, "this op on " + std::string(dtype_name(dt)) + " is not available");
      line(d_.lane(var(id), k) + " = " + e + ";");
    }
  }
};

}  // namespace

EmittedKernel emit_c_family(std::span<const kiln_op> ops, const Dialect& dialect, const EmitOptions& options) {
  return Emitter(ops, dialect, options).run();
}

std::uint32_t c_family_dtype_ops(const Dialect& dialect, unsigned dtype) {
  if (!dtype_valid(dtype)) return 0;
  Spelling spell(dialect);
  std::uint32_t bits = 0;
  for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u)
    if (!spell.unary(u, dtype, "x").empty()) bits |= KILN_CAP_UNARY(u);
  for (unsigned b = 1; b < KILN_BINARY_COUNT; ++b)
    if (!spell.binary(b, dtype, "x", "y").empty()) bits |= KILN_CAP_BINARY(b);
  return bits;
}

std::uint32_t c_family_vector_widths(const Dialect& dialect) { return dialect.vector_lanes | (1u << 1); }

}  // namespace kiln::sdk
