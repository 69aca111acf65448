// The dialect-independent part of the C-family emitter: walks the ops once,
// one statement per op (spellings of the element ops: c_spelling.hpp).
#include "kiln/sdk/c_emitter.hpp"

#include "c_emitter_detail.hpp"
#include "c_spelling.hpp"
#include "kiln/sdk/capabilities.hpp"
#include "kiln/sdk/grid.hpp"
#include "kiln/sdk/integer_ranges.hpp"
#include "kiln/sdk/op_rules.hpp"
#include "kiln/sdk/plugin_support.hpp"
#include "kiln/sdk/wire.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace kiln::sdk {

namespace {

using detail::is_half;
using detail::Spelling;

std::string describe(std::uint32_t id, const kiln_op& op) {
  std::string what(op_kind_name(op.kind));
  if (op.kind == KILN_OP_UNARY) what += " " + std::string(unary_name(op.code));
  if (op.kind == KILN_OP_BINARY) what += " " + std::string(binary_name(op.code));
  what += " " + std::string(dtype_name(op.dtype));
  if (op.lanes > 1) what += "x" + std::to_string(op.lanes);
  return "op " + std::to_string(id) + " (" + what + ")";
}

// ------------------------------------------------------------- the emitter --

class Emitter {
 public:
  Emitter(std::span<const kiln_op> ops, const Dialect& d, const EmitOptions& options)
      : ops_(ops), d_(d), spell_(d) {
    shape_.entry = options.entry;
    shape_.parallel = options.parallel;
    shape_.threads = options.threads;
    shape_.vector_math = options.vector_math;
  }

  EmittedKernel run() {
    collect_shape();
    collect_wgmma();
    plan_dynamic_local();
    if (d_.raw_halves) find_raw_halves();
    if (!d_.index32_type.empty()) find_index32();
    for (std::uint32_t id = 0; id < ops_.size(); ++id) emit(id);
    if (!open_blocks_.empty()) {
      const std::uint32_t id = open_blocks_.back();
      fail(KILN_STATUS_INVALID_ARGUMENT, describe(id, ops_[id]) + ": block is never closed", id);
    }
    EmittedKernel out;
    out.shape = shape_;
    out.dynamic_local_bytes = dynamic_local_bytes_;
    out.source = d_.prelude(d_, shape_);
    for (const auto& [dt, lanes] : vector_types_) out.source += d_.vector_typedef(d_, dt, lanes);
    out.source += globals_;
    out.source += detail::shared_helpers(d_, spell_.helpers);
    out.source += half_vector_helpers_;  // after the scalar conversions they may fall back on
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
  std::string globals_, body_;  // globals_: file-scope LOCAL storage and helpers
  std::set<std::string> simd_helpers_;
  std::map<std::string, bool> half_vectors_;  // Dialect::half_vector helpers asked for: defined or not
  std::set<std::uint32_t> unrounded_;          // f16/bf16 vector ops whose float value before rounding is v<id>_f
  std::set<std::uint32_t> loaded_bits_;        // f16/bf16 vector LOADs read whole as bits, v<id>_bits (whole_half_bits)
  std::string half_vector_helpers_;
  int depth_ = 1;
  std::vector<std::uint32_t> open_blocks_;
  std::set<std::pair<unsigned, unsigned>> vector_types_;
  std::vector<bool> raw_;  // Dialect::raw_halves: the op's f16/bf16 value is held as its bits (U16)
  std::vector<bool> index32_;  // Dialect::index32_type: the op's i64 value is declared as that type
  std::vector<std::optional<IntRange>> ranges_;  // ... from these (find_index32)
  std::uint64_t dynamic_local_bytes_ = 0;  // > 0: LOCAL storage lives in one dynamic buffer
  std::uint64_t next_local_offset_ = 0;
  // WGMMA: the LOCAL storages it reads (1024-byte aligned: the swizzle
  // follows address bits 7..9) and the accumulators it writes (elements).
  std::set<std::uint32_t> wgmma_locals_;
  std::map<std::uint32_t, unsigned> accumulators_;
  bool declared_dynamic_ = false;
  bool aligned_base_ = false;  // the dynamic buffer is used from a 1024-byte aligned base

  void collect_wgmma() {
    // Only well-formed ones (emit_wgmma rejects the rest in order).
    for (std::uint32_t id = 0; id < ops_.size(); ++id) {
      const kiln_op& op = ops_[id];
      if (op.kind != KILN_OP_WGMMA || op.src[0] >= id || op.src[2] >= id || !wgmma_n_allowed(op.attr)) continue;
      const kiln_op& local = ops_[op.src[0]];
      const kiln_op& acc = ops_[op.src[2]];
      if (local.kind != KILN_OP_STORAGE || local.code != KILN_SCOPE_LOCAL || acc.kind != KILN_OP_STORAGE ||
          acc.code != KILN_SCOPE_REGISTER || acc.imm < op.attr / 2)
        continue;
      wgmma_locals_.insert(op.src[0]);
      // Code 1 reads A's fragments from the same array, after the
      // accumulator, as late as its wait: they are held too (the whole
      // array), so the compiler keeps their registers until then instead of
      // reusing them once the asm statement has taken them (register arrays
      // are far smaller than the 1024 elements a hold list is cut at).
      unsigned& count = accumulators_[op.src[2]];
      count = std::max(count, op.code == 1 ? static_cast<unsigned>(std::min<std::uint64_t>(acc.imm, 1024)) : op.attr / 2);
    }
  }
  std::uint64_t local_alignment(std::uint32_t id) const { return wgmma_locals_.contains(id) ? 1024 : 16; }
  static std::uint64_t aligned_to(std::uint64_t offset, std::uint64_t alignment) {
    return (offset + alignment - 1) / alignment * alignment;
  }

  // LOCAL storage past the dialect's static limit goes into one dynamic
  // buffer, each piece 16-byte aligned (vector accesses of 16 bytes).
  static std::uint64_t aligned16(std::uint64_t bytes) { return (bytes + 15) / 16 * 16; }
  void plan_dynamic_local() {
    if (d_.dynamic_local_above == 0) return;
    std::uint64_t total = 0;
    for (std::uint32_t id = 0; id < ops_.size(); ++id) {
      const kiln_op& op = ops_[id];
      if (op.kind == KILN_OP_STORAGE && op.code == KILN_SCOPE_LOCAL && dtype_valid(op.dtype) && op.imm <= (1u << 30))
        total = aligned_to(total, local_alignment(id)) + aligned16(op.imm * dtype_bytes(op.dtype));
    }
    // The buffer's start is only known 16-byte aligned: 1024 bytes more let
    // the storages start from a 1024-byte boundary found at run time.
    aligned_base_ = !wgmma_locals_.empty();
    if (aligned_base_) total += 1024;
    if (total > d_.dynamic_local_above) dynamic_local_bytes_ = total;
    else aligned_base_ = false;
    shape_.dynamic_local_bytes = dynamic_local_bytes_;
  }

  bool raw(std::uint32_t id) const { return id < raw_.size() && raw_[id]; }

  // An op that only moves f16/bf16 data is raw when every use of its value
  // takes raw data: a STORE's value, an MMA's A or B, or a data operand of a
  // raw mover. Users follow their operands, so one backward sweep decides.
  void find_raw_halves() {
    raw_.assign(ops_.size(), false);
    std::vector<bool> candidate(ops_.size(), false), refused(ops_.size(), false);
    for (std::uint32_t id = 0; id < ops_.size(); ++id) {
      const kiln_op& op = ops_[id];
      switch (op.kind) {
        case KILN_OP_CONST: case KILN_OP_LOAD: case KILN_OP_VEC_BROADCAST: case KILN_OP_VEC_INSERT:
        case KILN_OP_VEC_EXTRACT: case KILN_OP_SELECT: case KILN_OP_LOAD_MATRIX: candidate[id] = is_half(op.dtype); break;
        default: break;
      }
    }
    for (std::uint32_t id = static_cast<std::uint32_t>(ops_.size()); id-- > 0;) {
      const kiln_op& op = ops_[id];
      raw_[id] = candidate[id] && !refused[id];
      const unsigned n = operand_count(op.kind);
      for (unsigned i = 0; i < n; ++i) {
        const std::uint32_t src = op.src[i];
        if (src >= id) continue;  // malformed: emit() rejects it
        bool takes_raw = false;
        switch (op.kind) {
          case KILN_OP_STORE: case KILN_OP_COPY_ASYNC: takes_raw = i == 2; break;
          case KILN_OP_MMA: takes_raw = i < 2; break;
          case KILN_OP_VEC_BROADCAST: case KILN_OP_VEC_EXTRACT: takes_raw = raw_[id]; break;
          case KILN_OP_VEC_INSERT: takes_raw = raw_[id]; break;
          case KILN_OP_SELECT: takes_raw = raw_[id] && i > 0; break;
          default: break;
        }
        if (!takes_raw) refused[src] = true;
      }
    }
  }

  // Operand i of op `id` (a scalar) in raw form.
  std::string raw_scalar(std::uint32_t id, unsigned i) {
    const std::uint32_t src = ops_[id].src[i];
    return raw(src) ? var(src) : spell_.to_storage(ops_[src].dtype, var(src));
  }
  // Lane k of operand i of op `id` (a vector) in raw form.
  std::string raw_lane(std::uint32_t id, unsigned i, unsigned k) {
    const std::uint32_t src = ops_[id].src[i];
    return raw(src) ? d_.lane(var(src), k) : spell_.to_storage(ops_[src].dtype, d_.lane(var(src), k));
  }

  // A raw op: the same data movement on the bits.
  void emit_raw(std::uint32_t id, const kiln_op& op) {
    const std::string type = value_type(id, KILN_DTYPE_U16, op.lanes);
    switch (op.kind) {
      case KILN_OP_CONST: return define(id, type, d_.literal(d_, KILN_DTYPE_U16, op.imm & 0xFFFFu));
      case KILN_OP_LOAD: {
        memory_operand(id, false);
        if (op.lanes == 1) return define(id, type, element(op, 0));
        const std::string whole = whole_vector_load(var(id), type, op, KILN_DTYPE_U16);
        if (!whole.empty()) return line(whole);
        std::vector<std::string> lanes;
        for (unsigned k = 0; k < op.lanes; ++k) lanes.push_back(element(op, k));
        return define(id, type, d_.vector_literal(type, lanes));
      }
      case KILN_OP_VEC_BROADCAST: {
        if (value_operand(id, 0).lanes != 1) reject(id, KILN_STATUS_INVALID_ARGUMENT, "broadcast source must be a scalar");
        const std::string x = raw_scalar(id, 0);
        if (op.lanes == 1) return define(id, type, x);
        return define(id, type, d_.vector_literal(type, std::vector<std::string>(op.lanes, x)));
      }
      case KILN_OP_VEC_INSERT: {
        const kiln_op& v = value_operand(id, 0);
        value_operand(id, 1);
        if (op.lanes < 2 || v.lanes != op.lanes || op.attr >= op.lanes)
          reject(id, KILN_STATUS_INVALID_ARGUMENT, "lane out of range or vector widths differ");
        std::vector<std::string> lanes;
        for (unsigned k = 0; k < op.lanes; ++k) lanes.push_back(k == op.attr ? raw_scalar(id, 1) : raw_lane(id, 0, k));
        return define(id, type, d_.vector_literal(type, lanes));
      }
      case KILN_OP_VEC_EXTRACT: {
        const kiln_op& v = value_operand(id, 0);
        if (op.attr >= v.lanes || v.lanes < 2) reject(id, KILN_STATUS_INVALID_ARGUMENT, "lane out of range");
        return define(id, type, raw_lane(id, 0, op.attr));
      }
      default: {  // SELECT
        const kiln_op& cond = value_operand(id, 0);
        for (unsigned i = 1; i < 3; ++i)
          if (value_operand(id, i).lanes != op.lanes || ops_[op.src[i]].dtype != op.dtype)
            reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand " + std::to_string(i) + " is not of the result's type");
        if (cond.lanes != 1 && cond.lanes != op.lanes)
          reject(id, KILN_STATUS_INVALID_ARGUMENT, "the condition has " + std::to_string(cond.lanes) + " lanes");
        if (op.lanes == 1) return define(id, type, "(" + var(op.src[0]) + " ? " + raw_scalar(id, 1) + " : " + raw_scalar(id, 2) + ")");
        std::vector<std::string> lanes;
        for (unsigned k = 0; k < op.lanes; ++k)
          lanes.push_back("(" + (cond.lanes == 1 ? var(op.src[0]) : d_.lane(var(op.src[0]), k)) + " ? " + raw_lane(id, 1, k) +
                          " : " + raw_lane(id, 2, k) + ")");
        return define(id, type, d_.vector_literal(type, lanes));
      }
    }
  }

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

  // The type op `id`'s own value is declared with: Dialect::index32_type
  // for the i64 values find_index32 chose, else value_type.
  std::string declared_type(std::uint32_t id) {
    const kiln_op& op = ops_[id];
    if (op.lanes == 1 && id < index32_.size() && index32_[id]) return std::string(d_.index32_type);
    return value_type(id, op.dtype, op.lanes);
  }

  // Dialect::index32_type: the scalar i64 values (constants, INDEX and LOOP
  // counters, and integer arithmetic) whose range the kernel proves within
  // 32 bits (kiln/sdk/integer_ranges.hpp), which is every index of a kernel
  // whose buffers and grid have fewer than 2^31 elements and threads. A
  // MAD's product must fit too (C computes it in the operands' type); a
  // LOOP counter stays below INT32_MAX, whose ++ ends the loop. An i64 op
  // that does not compute in 32 bits converts such operands to 64 bits
  // first (index64_operand), so that nothing computes in 32 bits what
  // needs 64.
  void find_index32() {
    ranges_ = integer_ranges(ops_);
    constexpr std::int64_t lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max();
    index32_.assign(ops_.size(), false);
    for (std::uint32_t id = 0; id < ops_.size(); ++id) {
      const kiln_op& op = ops_[id];
      const std::optional<IntRange>& r = ranges_[id];
      if (!r || !r->within(lo, op.kind == KILN_OP_LOOP ? hi - 1 : hi)) continue;
      switch (op.kind) {
        case KILN_OP_CONST: case KILN_OP_INDEX: case KILN_OP_LOOP: case KILN_OP_UNARY: case KILN_OP_BINARY:
        case KILN_OP_CAST: case KILN_OP_SELECT:
          index32_[id] = true;
          break;
        case KILN_OP_MAD: {
          const std::optional<IntRange> product = product_range(ranges_[op.src[0]], ranges_[op.src[1]]);
          index32_[id] = product && product->within(lo, hi);
          break;
        }
        default:
          break;
      }
    }
  }
  // Whether scalar op `id` computing in i64 may compute in 32 bits: every
  // i64 operand is declared 32-bit, and so is its result, or the result is
  // a comparison's (BINARY to BOOL). Not CAST and SELECT: they compute
  // nothing a 32-bit spelling would change. Nor a shift by an amount that
  // may pass 31: shifts take their amount modulo the width (kernel_ir.h),
  // so i64 x >> 40 is not i32 x >> 40.
  bool computes_in_32_bits(std::uint32_t id, const kiln_op& op) const {
    if (index32_.empty() || op.lanes != 1 || (op.kind != KILN_OP_UNARY && op.kind != KILN_OP_BINARY && op.kind != KILN_OP_MAD))
      return false;
    for (unsigned i = 0; i < operand_count(op.kind); ++i)
      if (ops_[op.src[i]].dtype != KILN_DTYPE_I64 || !index32_[op.src[i]]) return false;
    if (op.kind == KILN_OP_BINARY && (op.code == KILN_BINARY_SHL || op.code == KILN_BINARY_SHR) &&
        !(ranges_[op.src[1]] && ranges_[op.src[1]]->within(0, 31)))
      return false;
    return op.dtype == KILN_DTYPE_I64 ? index32_[id] : op.dtype == KILN_DTYPE_BOOL && op.kind == KILN_OP_BINARY;
  }
  // Operand `v` of an op computing in i64: converted to the i64 type when
  // it is declared 32-bit and the op does not compute in 32 bits
  // (computes_in_32_bits), so that the op computes in 64 bits: a result
  // that may pass 2^31, or a shift by more than 31. A CAST or SELECT of a
  // 32-bit value is exact as it is.
  std::string index64_operand(std::uint32_t id, std::uint32_t v) {
    const kiln_op& op = ops_[id];
    if (index32_.empty() || !index32_[v] || op.kind == KILN_OP_CAST || op.kind == KILN_OP_SELECT ||
        computes_in_32_bits(id, op))
      return var(v);
    return d_.cast(d_.value_types[KILN_DTYPE_I64], var(v));
  }

  void collect_shape() {
    std::vector<const ParamSlot*> by_slot;
    std::vector<ParamSlot> params;
    for (std::uint32_t id = 0; id < ops_.size(); ++id) {
      const kiln_op& op = ops_[id];
      if (op.dtype == KILN_DTYPE_F64) shape_.uses_f64 = true;
      if (op.kind == KILN_OP_SUBGROUP_REDUCE) shape_.uses_subgroups = true;
      if (op.kind == KILN_OP_PARAM) {
        if (op.code < KILN_PARAM_GLOBAL || op.code > KILN_PARAM_VARIABLE)
          reject(id, KILN_STATUS_UNSUPPORTED, "param kind " + std::to_string(op.code) + " is unknown");
        if (!dtype_valid(op.dtype)) reject(id, KILN_STATUS_UNSUPPORTED, "dtype " + std::to_string(op.dtype) + " is unknown");
        params.push_back({id, op.code, op.dtype, op.code == KILN_PARAM_VARIABLE ? 0 : op.imm});
      }
      if (op.kind == KILN_OP_INDEX) {
        if (op.attr >= KILN_MAX_AXES) reject(id, KILN_STATUS_INVALID_ARGUMENT, "axis must be 0, 1 or 2");
        if (op.code == KILN_SCOPE_GROUP) {
          if (shape_.group_axes[op.attr]) reject(id, KILN_STATUS_INVALID_ARGUMENT, "a second GROUP index on one axis");
          shape_.group_axes[op.attr] = true;
        } else if (op.code == KILN_SCOPE_LOCAL) {
          const kiln_op& len = operand(id, 0);
          if (len.kind != KILN_OP_CONST || !dtype_is_int(len.dtype) || int_from_bits(len.imm, len.dtype) < 1)
            reject(id, KILN_STATUS_INVALID_ARGUMENT, "a LOCAL length must be an integer CONST of at least 1");
          shape_.local_sizes[op.attr] = int_from_bits(len.imm, len.dtype);
        } else {
          reject(id, KILN_STATUS_INVALID_ARGUMENT, "index scope must be GROUP or LOCAL");
        }
      }
    }
    shape_.params.resize(params.size());
    std::vector<bool> seen(params.size(), false);
    for (const ParamSlot& p : params) {
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
      case KILN_OP_CONST: case KILN_OP_PARAM: case KILN_OP_STORAGE: case KILN_OP_INDEX: case KILN_OP_LOOP:
      case KILN_OP_VEC_EXTRACT:
        if (op.lanes != 1) reject(id, KILN_STATUS_INVALID_ARGUMENT, "lanes must be 1 for this op");
        break;
      default: break;
    }
    if (raw(id) && op.kind == KILN_OP_LOAD_MATRIX) return emit_load_matrix(id, op);
    if (raw(id)) return emit_raw(id, op);
    switch (op.kind) {
      case KILN_OP_CONST: {
        value_type(id, op.dtype, 1);  // validates the dtype first
        if (!index32_.empty() && index32_[id])  // in int's range: its low 32 bits as an i32 literal
          return define(id, declared_type(id), d_.literal(d_, KILN_DTYPE_I32, op.imm & 0xffffffffu));
        define(id, declared_type(id), d_.literal(d_, op.dtype, op.imm));
        return;
      }
      case KILN_OP_PARAM:
        if (op.code == KILN_PARAM_VARIABLE) {
          const std::string type = value_type(id, op.dtype, 1);
          define(id, type, spell_.from_storage(op.dtype, var(id) + "_in"));
        }
        return;  // buffers are named by the signature
      case KILN_OP_STORAGE: return emit_storage(id, op);
      case KILN_OP_LOAD: return emit_load(id, op);
      case KILN_OP_STORE: return emit_store(id, op);
      case KILN_OP_INDEX: return emit_index(id, op);
      case KILN_OP_LOOP: {
        scalar_index(id, 0);  // the trip count
        line("for (" + declared_type(id) + " " + var(id) + " = 0; " + var(id) + " < " + var(op.src[0]) +
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
        std::vector<std::string> lanes;
        for (unsigned k = 0; k < op.lanes; ++k) lanes.push_back(k == op.attr ? var(op.src[1]) : d_.lane(var(op.src[0]), k));
        const std::string type = value_type(id, op.dtype, op.lanes);
        define(id, type, d_.vector_literal(type, lanes));
        return;
      }
      case KILN_OP_VEC_EXTRACT: {
        const kiln_op& v = value_operand(id, 0);
        if (op.attr >= v.lanes || v.lanes < 2) reject(id, KILN_STATUS_INVALID_ARGUMENT, "lane out of range");
        define(id, value_type(id, op.dtype, 1), d_.lane(var(op.src[0]), op.attr));
        return;
      }
      case KILN_OP_MMA: return emit_mma(id, op);
      case KILN_OP_SUBGROUP_REDUCE: return emit_subgroup_reduce(id, op);
      case KILN_OP_BF16_PAIR: return emit_bf16_pair(id, op);
      case KILN_OP_DOT_BF16: return emit_dot_bf16(id, op);
      case KILN_OP_COPY_ASYNC: return emit_copy_async(id, op);
      case KILN_OP_LOAD_MATRIX: return emit_load_matrix(id, op);
      case KILN_OP_COPY_COMMIT:
        line(d_.copy_commit != nullptr ? d_.copy_commit() : "/* copy_commit: copies are plain stores */");
        return;
      case KILN_OP_WGMMA: return emit_wgmma(id, op);
      case KILN_OP_WGMMA_FENCE:
        if (d_.wgmma_fence == nullptr) unsupported(id, "wgmma (warp-group matrix multiply-accumulate) is not available");
        hold_accumulators();
        line(d_.wgmma_fence());
        return;
      case KILN_OP_WGMMA_COMMIT:
        if (d_.wgmma_commit == nullptr) unsupported(id, "wgmma (warp-group matrix multiply-accumulate) is not available");
        line(d_.wgmma_commit());
        return;
      case KILN_OP_WGMMA_WAIT:
        if (d_.wgmma_wait == nullptr) unsupported(id, "wgmma (warp-group matrix multiply-accumulate) is not available");
        line(d_.wgmma_wait(op.attr));
        hold_accumulators();
        return;
      case KILN_OP_COPY_WAIT:
        line(d_.copy_wait != nullptr ? d_.copy_wait(op.attr) : "/* copy_wait: copies are plain stores */");
        return;
      case KILN_OP_PREFETCH: {
        const kiln_op& mem = memory_operand(id, false);
        if (mem.kind != KILN_OP_PARAM) reject(id, KILN_STATUS_INVALID_ARGUMENT, "prefetch names a buffer param");
        // The address as an integer, not &p[i] or p + i: the index may lie
        // past the buffer, where pointer arithmetic is undefined in C.
        if (d_.prefetch != nullptr)
          line(d_.prefetch("(const void*)((uintptr_t)" + var(op.src[0]) + " + (uintptr_t)" + var(op.src[1]) + " * sizeof *" +
                           var(op.src[0]) + ")"));
        return;
      }
      default:
        reject(id, KILN_STATUS_UNSUPPORTED, "op kind " + std::to_string(op.kind) + " is unknown");
    }
  }

  // MMA: a call of a helper the dialect defines once per shape and dtype.
  void emit_mma(std::uint32_t id, const kiln_op& op) {
    if (d_.mma == nullptr) unsupported(id, "mma (warp matrix multiply-accumulate) is not available");
    const MmaShapeInfo info = mma_shape_info(op.code);
    if (info.m == 0 || !mma_input_allowed(op.code, op.attr) || op.dtype != KILN_DTYPE_F32 || op.lanes != info.c_lanes)
      reject(id, KILN_STATUS_UNSUPPORTED, "mma shape " + std::to_string(op.code) + " with input dtype " +
                                              std::to_string(op.attr) + " is unknown");
    const unsigned lanes[3] = {info.a_lanes, info.b_lanes, info.c_lanes};
    for (unsigned i = 0; i < 3; ++i) {
      const kiln_op& v = value_operand(id, i);
      if (v.dtype != (i < 2 ? op.attr : static_cast<std::uint32_t>(KILN_DTYPE_F32)) || v.lanes != lanes[i])
        reject(id, KILN_STATUS_INVALID_ARGUMENT, "operand " + std::to_string(i) + " is not the fragment type");
    }
    const std::string c = value_type(id, KILN_DTYPE_F32, info.c_lanes);
    if (d_.raw_halves && is_half(op.attr)) {
      // Fragments as bits; one built here from float values where an operand is not raw.
      std::array<std::string, 2> in;
      for (unsigned i = 0; i < 2; ++i) {
        const unsigned lanes_i = i == 0 ? info.a_lanes : info.b_lanes;
        const std::string type = value_type(id, KILN_DTYPE_U16, lanes_i);
        in[i] = var(op.src[i]);
        if (raw(op.src[i])) continue;
        std::vector<std::string> lanes;
        for (unsigned k = 0; k < lanes_i; ++k) lanes.push_back(raw_lane(id, i, k));
        in[i] = var(id) + (i == 0 ? "_a" : "_b");
        line("const " + type + " " + in[i] + " = " + d_.vector_literal(type, lanes) + ";");
      }
      const std::string a = value_type(id, KILN_DTYPE_U16, info.a_lanes), b = value_type(id, KILN_DTYPE_U16, info.b_lanes);
      const std::string name = "kiln_mma_" + std::string(mma_shape_name(op.code)) + "_" +
                               std::string(mma_input_name(op.code, op.attr)) + "_bits";
      if (simd_helpers_.insert(name).second) globals_ += d_.mma(d_, {name, op.code, op.attr, a, b, c, true});
      return define(id, c, name + "(" + in[0] + ", " + in[1] + ", " + var(op.src[2]) + ")");
    }
    const std::string a = value_type(id, op.attr, info.a_lanes), b = value_type(id, op.attr, info.b_lanes);
    const std::string name = "kiln_mma_" + std::string(mma_shape_name(op.code)) + "_" +
                             std::string(mma_input_name(op.code, op.attr));
    if (simd_helpers_.insert(name).second) globals_ += d_.mma(d_, {name, op.code, op.attr, a, b, c});
    define(id, c, name + "(" + var(op.src[0]) + ", " + var(op.src[1]) + ", " + var(op.src[2]) + ")");
  }

  // BF16_PAIR: the bf16 values are held as floats whose high half is the
  // bf16 (non-raw dialects), so the words are two masks and a shift of their
  // bits; whole vectors in C, whose vector casts reinterpret the bits.
  void emit_bf16_pair(std::uint32_t id, const kiln_op& op) {
    if (d_.raw_halves) unsupported(id, "bf16_pair on a dialect with raw halves is not available");
    const kiln_op& lo = value_operand(id, 0);
    const kiln_op& hi = value_operand(id, 1);
    if (op.dtype != KILN_DTYPE_U32 || lo.dtype != KILN_DTYPE_BF16 || hi.dtype != KILN_DTYPE_BF16 ||
        lo.lanes != op.lanes || hi.lanes != op.lanes)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "not a bf16_pair of two bf16 values into u32 words of their lanes");
    const std::string words = value_type(id, KILN_DTYPE_U32, op.lanes);
    if (op.lanes == 1)
      return define(id, words, "((kiln_f32_bits(" + var(op.src[0]) + ") >> 16) | (kiln_f32_bits(" + var(op.src[1]) +
                                   ") & 0xffff0000u))");
    if (d_.name == "c")
      return define(id, words, "((((" + words + ")" + var(op.src[0]) + ") >> 16) | (((" + words + ")" + var(op.src[1]) +
                                   ") & 0xffff0000u))");
    std::vector<std::string> lanes;
    for (unsigned k = 0; k < op.lanes; ++k)
      lanes.push_back("((kiln_f32_bits(" + d_.lane(var(op.src[0]), k) + ") >> 16) | (kiln_f32_bits(" +
                      d_.lane(var(op.src[1]), k) + ") & 0xffff0000u))");
    define(id, words, d_.vector_literal(words, lanes));
  }

  // DOT_BF16: a call of the dialect's helper for the lane count.
  void emit_dot_bf16(std::uint32_t id, const kiln_op& op) {
    if (d_.dot_bf16 == nullptr) unsupported(id, "dot_bf16 (bf16 pair dot-accumulate) is not available");
    const kiln_op& acc = value_operand(id, 0);
    const kiln_op& a = value_operand(id, 1);
    const kiln_op& b = value_operand(id, 2);
    if (op.dtype != KILN_DTYPE_F32 || acc.dtype != KILN_DTYPE_F32 || a.dtype != KILN_DTYPE_U32 ||
        b.dtype != KILN_DTYPE_U32 || acc.lanes != op.lanes || a.lanes != op.lanes || b.lanes != op.lanes)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "not a dot_bf16 of an f32 accumulator and two u32 words of its lanes");
    const std::string acc_type = value_type(id, KILN_DTYPE_F32, op.lanes);
    const std::string word_type = value_type(id, KILN_DTYPE_U32, op.lanes);
    const std::string name = "kiln_dot_bf16_x" + std::to_string(op.lanes);
    if (simd_helpers_.insert(name).second) globals_ += d_.dot_bf16(d_, {name, op.lanes, acc_type, word_type});
    define(id, acc_type, name + "(" + var(op.src[0]) + ", " + var(op.src[1]) + ", " + var(op.src[2]) + ")");
  }

  // SUBGROUP_REDUCE: the halving butterfly of kernel_ir.h, one shuffle per
  // step; the lower lane of each pair is the left operand, so both lanes of
  // a pair compute the same value (and the interpreter's, bit for bit).
  void emit_subgroup_reduce(std::uint32_t id, const kiln_op& op) {
    if (d_.shuffle_xor == nullptr) unsupported(id, "subgroup_reduce (subgroup shuffles) is not available");
    const kiln_op& x = value_operand(id, 0);
    if (!subgroup_reduction_allowed(op.code) || !subgroup_width_allowed(op.attr) || op.lanes != 1 ||
        op.dtype == KILN_DTYPE_BOOL || x.dtype != op.dtype || x.lanes != 1)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "not a subgroup reduction of a scalar number of its own type");
    const std::string type = value_type(id, op.dtype, 1);
    const std::string i64 = value_type(id, KILN_DTYPE_I64, 1);
    // The linear local id, x + X * (y + Y * z), over the axes that exist.
    std::string linear;
    for (unsigned axis = KILN_MAX_AXES; axis-- > 0;) {
      if (shape_.local_sizes[axis] == 1) continue;
      if (d_.local_index == nullptr) unsupported(id, "LOCAL axes (threads within a group) are not available");
      const std::string index = d_.local_index(axis);
      linear = linear.empty() ? index
                              : "(" + index + " + " + std::to_string(shape_.local_sizes[axis]) + std::string(d_.i64_suffix) +
                                    " * " + linear + ")";
    }
    if (linear.empty()) linear = "0" + std::string(d_.i64_suffix);
    const std::string lane = var(id) + "_tid", acc = var(id) + "_acc";
    line("const " + i64 + " " + lane + " = " + linear + ";");
    line(type + " " + acc + " = " + var(op.src[0]) + ";");
    for (unsigned m = op.attr / 2; m >= 1; m /= 2) {
      const std::string theirs = var(id) + "_x" + std::to_string(m);
      const std::string shuffle = d_.shuffle_xor(d_, {op.dtype, acc, m, op.attr, lane});
      if (shuffle.empty())
        unsupported(id, "subgroup shuffles of " + std::string(dtype_name(op.dtype)) + " in subgroups of " +
                            std::to_string(op.attr) + " are not available");
      line("const " + type + " " + theirs + " = " + shuffle + ";");
      line(acc + " = ((" + lane + " & " + std::to_string(m) + std::string(d_.i64_suffix) + ") != 0) ? " +
           spell_.binary(op.code, op.dtype, theirs, acc) + " : " + spell_.binary(op.code, op.dtype, acc, theirs) + ";");
    }
    define(id, type, acc);
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
    if (op.code != KILN_SCOPE_LOCAL && op.code != KILN_SCOPE_REGISTER)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "storage scope must be LOCAL or REGISTER");
    const std::string array = std::string(d_.storage_types[op.dtype]) + " " + var(id) + "[" + std::to_string(op.imm) + "];";
    if (op.code == KILN_SCOPE_REGISTER) return line(std::string(d_.register_storage_prefix) + array);
    if (dynamic_local_bytes_ > 0) {
      if (!declared_dynamic_) {
        declared_dynamic_ = true;
        line("extern __shared__ __align__(16) unsigned char kiln_dynamic_local[];");
        if (aligned_base_)
          line("unsigned char* const kiln_local_base = kiln_dynamic_local + ((1024u - ((unsigned int)__cvta_generic_to_shared("
               "kiln_dynamic_local) & 1023u)) & 1023u);");
      }
      const std::string type(d_.storage_types[op.dtype]);
      next_local_offset_ = aligned_to(next_local_offset_, local_alignment(id));
      line(type + "* const " + var(id) + " = (" + type + "*)(" + (aligned_base_ ? "kiln_local_base + " : "kiln_dynamic_local + ") +
           std::to_string(next_local_offset_) + ");");
      next_local_offset_ += aligned16(op.imm * dtype_bytes(op.dtype));
      return;
    }
    std::string prefix(d_.local_storage_prefix);
    if (wgmma_locals_.contains(id)) {  // the dialect's 16-byte alignment raised to the swizzle's 1024
      if (const auto at = prefix.find("__align__(16)"); at != std::string::npos) prefix.replace(at, 13, "__align__(1024)");
    }
    if (d_.local_storage_global) globals_ += prefix + array + "\n";
    else line(prefix + array);
  }

  void emit_index(std::uint32_t id, const kiln_op& op) {
    value_type(id, KILN_DTYPE_I64, 1);
    const std::string type = declared_type(id);
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
    if (mem.dtype != ops_[id].dtype) reject(id, KILN_STATUS_INVALID_ARGUMENT, "dtype differs from the memory's");
    // attr means KILN_ACCESS_UNALIGNED on LOAD and STORE only (LOAD_MATRIX's
    // is its matrix count, 1 included).
    const kiln_op& access = ops_[id];
    if ((access.kind == KILN_OP_LOAD || access.kind == KILN_OP_STORE) && access.attr == KILN_ACCESS_UNALIGNED &&
        !d_.any_index_vectors && !any_index_load(access))
      unsupported(id, std::string("vector ") + (access.kind == KILN_OP_LOAD ? "loads" : "stores") +
                          " at any element index (KILN_ACCESS_UNALIGNED) are not available" +
                          (d_.any_index_loads ? " (loads from buffers only)" : ""));
    scalar_index(id, 1);
    return mem;
  }

  // A vector LOAD of a buffer at any element index that the dialect writes
  // itself (Dialect::any_index_loads).
  bool any_index_load(const kiln_op& op) const {
    return d_.any_index_loads && op.kind == KILN_OP_LOAD && op.attr == KILN_ACCESS_UNALIGNED && op.lanes > 1 &&
           ops_[op.src[0]].kind == KILN_OP_PARAM;
  }
  // The dialect's statement for a whole-vector LOAD `op` into `name`, or ""
  // to go lane by lane. A load at any element index may call a helper of
  // the dialect's (Dialect::helper: CUDA's kiln_load_any), defined only in
  // the kernels that use it.
  std::string whole_vector_load(const std::string& name, const std::string& type, const kiln_op& op, unsigned dtype) {
    const bool any_index = any_index_load(op);
    std::string whole = d_.vector_access(d_, {name, type, var(op.src[0]), var(op.src[1]), dtype, op.lanes, false, false, any_index});
    if (any_index && !whole.empty()) spell_.helpers.insert("kiln_load_any");
    return whole;
  }

  std::string element(const kiln_op& op, unsigned lane) const { return spell_.element(var(op.src[0]), var(op.src[1]), lane); }

  void emit_load(std::uint32_t id, const kiln_op& op) {
    memory_operand(id, false);
    const std::string type = value_type(id, op.dtype, op.lanes);
    if (op.lanes == 1) return define(id, type, spell_.from_storage(op.dtype, element(op, 0)));
    if (is_half(op.dtype)) {
      const std::string convert = half_vector(HalfVectorOp::Load, op.dtype, op.lanes, type);
      if (!convert.empty()) return define(id, type, convert + "(&" + element(op, 0) + ")");
    } else {
      const std::string whole = whole_vector_load(var(id), type, op, op.dtype);
      if (!whole.empty()) return line(whole);
    }
    std::vector<std::string> lanes;
    const std::string bits = whole_half_bits(id, op);
    if (!bits.empty()) loaded_bits_.insert(id);
    for (unsigned k = 0; k < op.lanes; ++k)
      lanes.push_back(spell_.from_storage(op.dtype, bits.empty() ? element(op, k) : d_.lane(bits, k)));
    define(id, type, d_.vector_literal(type, lanes));
  }

  // COPY_ASYNC: the dialect's hardware copy when the value is a LOAD of a
  // read-only buffer, or SELECT(c, that LOAD, zeros); else a plain STORE.
  void emit_copy_async(std::uint32_t id, const kiln_op& op) {
    const kiln_op& mem = memory_operand(id, true);
    if (mem.kind != KILN_OP_STORAGE || mem.code != KILN_SCOPE_LOCAL)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "copies go into LOCAL storage");
    const kiln_op& value = value_operand(id, 2);
    if (value.lanes * dtype_bytes(op.dtype) != kCopyAsyncBytes || value.lanes != op.lanes || value.dtype != op.dtype)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "a copy moves 16 bytes of the storage's dtype");
    if (d_.copy_async != nullptr) {
      std::uint32_t load = op.src[2];
      std::string source_bytes;
      if (value.kind == KILN_OP_SELECT && ops_[value.src[0]].lanes == 1 && zero_vector(value.src[2])) {
        load = value.src[1];
        source_bytes = "(" + var(value.src[0]) + " ? " + std::to_string(kCopyAsyncBytes) + " : 0)";
      }
      const kiln_op& source = ops_[load];
      if (source.kind == KILN_OP_LOAD && source.lanes == op.lanes && ops_[source.src[0]].kind == KILN_OP_PARAM &&
          ops_[source.src[0]].code == KILN_PARAM_GLOBAL) {
        const std::string local = "(" + var(op.src[0]) + " + " + var(op.src[1]) + ")";
        const std::string global = "(" + var(source.src[0]) + " + " + var(source.src[1]) + ")";
        return line(d_.copy_async(local, global, source_bytes));
      }
    }
    emit_store(id, op);
  }

  // WGMMA: the dialect's statement on the storage, the tile indices (lanes
  // of the i64 x 2 operand) and the accumulator array.
  void emit_wgmma(std::uint32_t id, const kiln_op& op) {
    if (d_.wgmma == nullptr) unsupported(id, "wgmma (warp-group matrix multiply-accumulate) is not available");
    const kiln_op& mem = operand(id, 0);
    const kiln_op& acc = operand(id, 2);
    const kiln_op& tiles = value_operand(id, 1);
    if (mem.kind != KILN_OP_STORAGE || mem.code != KILN_SCOPE_LOCAL || mem.dtype != op.dtype ||
        (op.dtype != KILN_DTYPE_F16 && op.dtype != KILN_DTYPE_BF16 && op.dtype != KILN_DTYPE_F32) || acc.kind != KILN_OP_STORAGE ||
        acc.code != KILN_SCOPE_REGISTER || acc.dtype != KILN_DTYPE_F32 || acc.imm < wgmma_register_elements(op.attr, op.code) ||
        tiles.dtype != KILN_DTYPE_I64 || tiles.lanes != 2 || !wgmma_n_allowed(op.attr) || !wgmma_code_allowed(op.code, op.dtype))
      reject(id, KILN_STATUS_INVALID_ARGUMENT,
             "wgmma multiplies f16/bf16/f32 (tf32) LOCAL tiles (tf32's A possibly from registers, code 1) into REGISTER f32 storage");
    const std::string tiles_var = var(op.src[1]);
    const std::string a = d_.lane(tiles_var, 0), b = d_.lane(tiles_var, 1);
    line(d_.wgmma({var(op.src[0]), a, b, var(op.src[2]), op.attr, op.dtype, op.code == 1}));
  }

  void hold_accumulators() {
    if (d_.wgmma_hold == nullptr) return;
    for (const auto& [storage, count] : accumulators_) line(d_.wgmma_hold(var(storage), count));
  }

  // LOAD_MATRIX: the dialect's statement into registers, then the vector
  // (raw: the halves as they are; else each converted from storage).
  void emit_load_matrix(std::uint32_t id, const kiln_op& op) {
    if (d_.load_matrix == nullptr) unsupported(id, "load_matrix (warp 8 x 8 matrix loads) is not available");
    const kiln_op& mem = memory_operand(id, false);
    if (mem.kind != KILN_OP_STORAGE || mem.code != KILN_SCOPE_LOCAL || dtype_bytes(op.dtype) != 2 ||
        (op.attr != 1 && op.attr != 2 && op.attr != 4) || op.lanes != 2 * op.attr || op.code > 1)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "load_matrix reads 1, 2 or 4 matrices of 16-bit LOCAL storage");
    const std::string registers = var(id) + "_r";
    line("unsigned int " + registers + "[" + std::to_string(op.attr) + "];");
    line(d_.load_matrix(registers, op.attr, op.code == 1, "(" + var(op.src[0]) + " + " + var(op.src[1]) + ")"));
    const bool bits = raw(id);
    const std::string type = value_type(id, bits ? unsigned{KILN_DTYPE_U16} : unsigned{op.dtype}, op.lanes);
    std::vector<std::string> lanes;
    for (unsigned e = 0; e < op.lanes; ++e) {
      const std::string half = "(unsigned short)(" + registers + "[" + std::to_string(e / 2) + "]" + (e % 2 ? " >> 16)" : ")");
      lanes.push_back(bits ? half : spell_.from_storage(op.dtype, half));
    }
    define(id, type, d_.vector_literal(type, lanes));
  }

  // A vector of zero bits: a BROADCAST of a CONST 0.
  bool zero_vector(std::uint32_t v) const {
    const kiln_op& b = ops_[v];
    return b.kind == KILN_OP_VEC_BROADCAST && ops_[b.src[0]].kind == KILN_OP_CONST && ops_[b.src[0]].imm == 0;
  }

  // Dialects that move halves as bits (raw_halves: CUDA) also read a vector
  // of halves of a buffer that is converted to floats as one access of its
  // bits: one 16-byte load for 8 lanes instead of 8 2-byte ones (a buffer's
  // start is aligned; so is a LOCAL array's, where lanes cost instructions:
  // a 16-bit row kept in LOCAL memory by row_cache local=1; REGISTER arrays
  // go lane by lane). The name of the bits' vector, or "" where the dialect
  // has no whole access.
  std::string whole_half_bits(std::uint32_t id, const kiln_op& op) {
    if (!whole_half_access(op)) return "";
    const std::string bits = var(id) + "_bits";
    const std::string whole = whole_vector_load(bits, value_type(id, KILN_DTYPE_U16, op.lanes), op, KILN_DTYPE_U16);
    if (whole.empty()) return "";
    line(whole);
    return bits;
  }

  bool whole_half_access(const kiln_op& op) const {
    const kiln_op& mem = ops_[op.src[0]];
    return d_.raw_halves && op.lanes > 1 && (mem.kind == KILN_OP_PARAM || mem.kind == KILN_OP_STORAGE);
  }

  // The float a half STORE converts: a CAST to f16/bf16 of an f32 value
  // rounds it to the half's value (kiln_round_f16, two conversions), which
  // the store converts again; converting the f32 source once gives the same
  // bits (both round to nearest even), so the store takes it (raw_halves
  // dialects: their conversions are instructions the compiler cannot fold).
  std::string half_store_source(std::uint32_t value_id) const {
    const kiln_op& value = ops_[value_id];
    if (d_.raw_halves && value.kind == KILN_OP_CAST && is_half(value.dtype) && value.src[0] < value_id &&
        ops_[value.src[0]].dtype == KILN_DTYPE_F32 && ops_[value.src[0]].lanes == value.lanes)
      return var(value.src[0]);
    return var(value_id);
  }

  void emit_store(std::uint32_t id, const kiln_op& op) {
    memory_operand(id, true);
    const kiln_op& value = value_operand(id, 2);
    if (value.lanes != op.lanes || value.dtype != op.dtype)
      reject(id, KILN_STATUS_INVALID_ARGUMENT, "the value's dtype or lanes differ from the store's");
    if (raw(op.src[2])) {  // the bits as they are
      const std::string type = value_type(id, KILN_DTYPE_U16, op.lanes);
      if (op.lanes == 1) return line(element(op, 0) + " = " + var(op.src[2]) + ";");
      const std::string whole = d_.vector_access(d_, {var(op.src[2]), type, var(op.src[0]), var(op.src[1]), KILN_DTYPE_U16, op.lanes, true});
      if (!whole.empty()) return line(whole);
      for (unsigned k = 0; k < op.lanes; ++k) line(element(op, k) + " = " + d_.lane(var(op.src[2]), k) + ";");
      return;
    }
    const std::string type = value_type(id, op.dtype, op.lanes);
    const std::string v = is_half(op.dtype) ? half_store_source(op.src[2]) : var(op.src[2]);
    if (op.lanes == 1) return line(element(op, 0) + " = " + spell_.to_storage(op.dtype, v) + ";");
    if (is_half(op.dtype)) {
      const bool streaming = streaming_store(op);
      const std::string convert = half_vector(streaming ? HalfVectorOp::StreamStore : HalfVectorOp::Store, op.dtype, op.lanes, type);
      if (!convert.empty()) {
        shape_.streaming_stores = shape_.streaming_stores || streaming;
        // Storing the float value before its rounding gives the same bits
        // (rounding to nearest even twice to one format is rounding once):
        // one conversion instead of three.
        const std::string stored = unrounded_.contains(op.src[2]) ? v + "_f" : v;
        return line(convert + "(&" + element(op, 0) + ", " + stored + ");");
      }
      if (whole_half_access(op)) {  // the lanes as a vector of bits, stored whole (as whole_half_bits reads)
        // A vector stored as it was loaded (a 16-bit row kept in LOCAL memory
        // by row_cache local=1, whose values the kernel also computes with)
        // stores the loaded bits, not the floats converted back (a conversion
        // a lane the compiler cannot fold; the same bits but for a signalling
        // f16 NaN, which this keeps as the interpreter does).
        const bool as_loaded = loaded_bits_.contains(op.src[2]);
        const std::string bits = var(as_loaded ? op.src[2] : id) + "_bits", bits_type = value_type(id, KILN_DTYPE_U16, op.lanes);
        const std::string whole =
            d_.vector_access(d_, {bits, bits_type, var(op.src[0]), var(op.src[1]), KILN_DTYPE_U16, op.lanes, true});
        if (!whole.empty()) {
          if (!as_loaded) {
            std::vector<std::string> lanes;
            for (unsigned k = 0; k < op.lanes; ++k) lanes.push_back(spell_.to_storage(op.dtype, d_.lane(v, k)));
            line("const " + bits_type + " " + bits + " = " + d_.vector_literal(bits_type, lanes) + ";");
          }
          return line(whole);
        }
      }
    } else {
      const std::string mem = var(op.src[0]), index = var(op.src[1]);
      const bool streaming = streaming_store(op);
      shape_.streaming_stores = shape_.streaming_stores || streaming;
      const std::string whole = d_.vector_access(d_, {v, type, mem, index, op.dtype, op.lanes, true, streaming});
      if (!whole.empty()) return line(whole);
    }
    for (unsigned k = 0; k < op.lanes; ++k) line(element(op, k) + " = " + spell_.to_storage(op.dtype, d_.lane(v, k)) + ";");
  }

  // A 64-byte vector STORE (f16/bf16: 32 bytes, 16 lanes; consecutive ones
  // still fill whole lines) into a written PARAM of known size of at least
  // kStreamingStoreBytes (kernel_ir.h: such a buffer aliases nothing else).
  bool streaming_store(const kiln_op& op) const {
    if (!d_.streaming_stores || !shape_.vector_math) return false;
    const kiln_op& mem = ops_[op.src[0]];
    const bool half = is_half(op.dtype);
    const std::uint64_t element = half ? 2 : detail::value_bytes(op.dtype);  // in memory
    return mem.kind == KILN_OP_PARAM && mem.code == KILN_PARAM_GLOBAL_MUT && op.lanes * element == (half ? 32u : 64u) &&
           mem.imm * element >= kStreamingStoreBytes;
  }

  // The name of the dialect's whole-vector f16/bf16 conversion `what` for a
  // `dtype` x `lanes` vector (Dialect::half_vector), defined once; "" where
  // the dialect converts lane by lane.
  std::string half_vector(HalfVectorOp what, unsigned dtype, unsigned lanes, const std::string& vector_type) {
    if (d_.half_vector == nullptr || lanes < 2) return "";
    static constexpr std::string_view kVerbs[] = {"load", "store", "stream", "round", "round_normal"};
    const std::string name = "kiln_" + std::string(kVerbs[static_cast<unsigned>(what)]) + "_" +
                             std::string(dtype_name(dtype)) + "x" + std::to_string(lanes);
    const auto [at, fresh] = half_vectors_.emplace(name, false);
    if (fresh) {
      const std::string text = d_.half_vector(d_, {name, what, dtype, lanes, vector_type});
      at->second = !text.empty();
      half_vector_helpers_ += text;
    }
    if (!at->second) return "";
    spell_.helpers.insert("half");  // the scalar conversions, which a definition may fall back on
    return name;
  }

  // An f16/bf16 vector op computed in float on the whole vector and rounded
  // as one vector (Dialect::half_vector): each lane is the float result
  // rounded once, exactly what the op gives lane by lane. Returns the float
  // vector expression and the rounding helper's name ("" for a CAST to f32:
  // the value as it is); {"", ""} where this does not apply (comparisons,
  // other ops, a dialect without whole-vector conversions).
  std::pair<std::string, std::string> half_vector_op(std::uint32_t id, const kiln_op& op, unsigned dt) {
    if (d_.half_vector == nullptr || !d_.whole_vector_ops) return {};
    const auto real32 = [](unsigned t) { return is_half(t) || t == KILN_DTYPE_F32; };
    const std::string x = var(op.src[0]);
    std::string value;  // the float vector, before rounding
    if (op.kind == KILN_OP_CAST) {
      if (!real32(dt) || !real32(op.dtype)) return {};
      if (!is_half(op.dtype)) return {x, ""};  // to f32: every f16/bf16 value is a float already
      value = x;
    } else if (!is_half(dt) || op.dtype != dt) {
      return {};
    } else if (op.kind == KILN_OP_BINARY && (op.code == KILN_BINARY_ADD || op.code == KILN_BINARY_SUB ||
                                             op.code == KILN_BINARY_MUL || op.code == KILN_BINARY_DIV)) {
      value = spell_.binary(op.code, KILN_DTYPE_F32, x, var(op.src[1]));
    } else if (op.kind == KILN_OP_MAD) {
      value = spell_.mad(KILN_DTYPE_F32, x, var(op.src[1]), var(op.src[2]));
    } else if (op.kind == KILN_OP_UNARY && op.code == KILN_UNARY_NEG) {
      value = "(-" + x + ")";
    } else if (op.kind == KILN_OP_UNARY && d_.simd_function_helpers && shape_.vector_math && op.code < KILN_UNARY_COUNT &&
               defined_before_simd_helpers(d_.unary_f32[op.code])) {
      const std::string f32 = value_type(id, KILN_DTYPE_F32, op.lanes);
      value = simd_function(d_.unary_f32[op.code], KILN_DTYPE_F32, op.lanes, f32) + "(" + x + ")";
    } else {
      return {};
    }
    // kiln_exp_f32 (the C prelude's exp with vector_math) gives 0 below
    // FLT_MIN, never a subnormal: its rounding may skip the check for one.
    const bool normal = op.kind == KILN_OP_UNARY && op.code == KILN_UNARY_EXP && d_.unary_f32[op.code] == "kiln_exp_f32";
    const std::string round = half_vector(normal ? HalfVectorOp::RoundNormal : HalfVectorOp::Round, op.dtype, op.lanes,
                                          value_type(id, op.dtype, op.lanes));
    if (round.empty()) return {};
    return {value, round};
  }

  // Whether `function` (a unary_f32/unary_f64 name) exists before the SIMD
  // helpers: a libm function, or one of the prelude's (kiln_exp_f32), but
  // not a shared helper (detail::math_helper's kiln_sigmoid_f32 ...), which
  // is defined after them.
  bool defined_before_simd_helpers(std::string_view function) const {
    if (function.empty()) return false;
    return !function.starts_with("kiln_") || d_.helper == nullptr || d_.helper(d_, function).empty();
  }

  // The name of a helper applying libm's `function` to every lane of a
  // `dtype` x `lanes` vector (defined once, at file scope).
  std::string simd_function(std::string_view function, unsigned dtype, unsigned lanes, const std::string& vector_type) {
    const std::string_view base = function.starts_with("kiln_") ? function.substr(5) : function;
    const std::string name = "kiln_simd_" + std::string(base) + "_" + std::to_string(lanes);
    if (simd_helpers_.insert(name).second) {
      const Dialect::SimdWhole whole = d_.simd_function_whole != nullptr && dtype == KILN_DTYPE_F32
                                           ? d_.simd_function_whole(function, lanes)
                                           : Dialect::SimdWhole{};
      const std::string scalar(d_.value_types[dtype]), n = std::to_string(lanes);
      const std::string loop = "  " + scalar + " a[" + n + "], r[" + n + "];\n  memcpy(a, &x, sizeof a);\n  #pragma omp simd\n" +
                               "  for (int i = 0; i < " + n + "; ++i) r[i] = " + std::string(function) +
                               "(a[i]);\n  memcpy(&out, r, sizeof out);\n";
      globals_ += "static inline " + vector_type + " " + name + "(" + vector_type + " x) {\n  " + vector_type + " out;\n" +
                  (whole.condition.empty() ? loop : "#if " + whole.condition + "\n" + whole.statements + "#else\n" + loop + "#endif\n") +
                  "  return out;\n}\n";
    }
    return name;
  }

  // The name of a helper computing MAX or MIN (x > y ? x : y, x < y ? x : y)
  // of two `dtype` x `lanes` vectors lane by lane under `omp simd`: a vector
  // literal of per-lane conditionals compiles to scalar code, the loop to
  // one vmaxps/vminps.
  std::string simd_min_max(unsigned code, unsigned dtype, unsigned lanes, const std::string& vector_type) {
    const bool max = code == KILN_BINARY_MAX;
    const std::string name = std::string("kiln_simd_") + (max ? "max_" : "min_") + std::string(dtype_name(dtype)) + "_" +
                             std::to_string(lanes);
    if (simd_helpers_.insert(name).second) {
      const std::string scalar(d_.value_types[dtype]), n = std::to_string(lanes);
      globals_ += "static inline " + vector_type + " " + name + "(" + vector_type + " x, " + vector_type + " y) {\n  " +
                  scalar + " a[" + n + "], b[" + n + "], r[" + n +
                  "];\n  memcpy(a, &x, sizeof a);\n  memcpy(b, &y, sizeof b);\n  #pragma omp simd\n  for (int i = 0; i < " +
                  n + "; ++i) r[i] = a[i] " + (max ? ">" : "<") + " b[i] ? a[i] : b[i];\n  " + vector_type +
                  " out;\n  memcpy(&out, r, sizeof out);\n  return out;\n}\n";
    }
    return name;
  }

  void emit_broadcast(std::uint32_t id, const kiln_op& op) {
    const kiln_op& x = value_operand(id, 0);
    if (x.lanes != 1) reject(id, KILN_STATUS_INVALID_ARGUMENT, "broadcast source must be a scalar");
    const std::string type = value_type(id, op.dtype, op.lanes);
    if (op.lanes == 1) return define(id, type, var(op.src[0]));
    define(id, type, d_.vector_literal(type, std::vector<std::string>(op.lanes, var(op.src[0]))));
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
          case KILN_BINARY_BIT_XOR: return !real && !is_half(dt) && !(dt == KILN_DTYPE_BOOL && d_.native_bool);
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
    // Integer arithmetic on values declared 32-bit whose own result is
    // (or is a comparison) computes in 32 bits: exact, the ranges say so.
    const unsigned computes_in = computes_in_32_bits(id, op) ? static_cast<unsigned>(KILN_DTYPE_I32) : dt;
    const auto spell = [&](const std::array<std::string, 3>& a) -> std::string {
      switch (op.kind) {
        case KILN_OP_UNARY: return spell_.unary(op.code, computes_in, a[0]);
        case KILN_OP_BINARY: return spell_.binary(op.code, computes_in, a[0], a[1]);
        case KILN_OP_CAST: return spell_.cast(dt, op.dtype, a[0]);
        case KILN_OP_MAD: return spell_.mad(computes_in, a[0], a[1], a[2]);
        default: return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
      }
    };
    value_type(id, op.dtype, op.lanes);  // validates the dtype and width first
    const std::string type = declared_type(id);
    if (op.lanes > 1 && (is_half(op.dtype) || is_half(dt))) {
      const auto [value, round] = half_vector_op(id, op, dt);
      if (!value.empty() && round.empty()) return define(id, type, value);
      if (!value.empty()) {
        line("const " + type + " " + var(id) + "_f = " + value + ";");
        unrounded_.insert(id);
        return define(id, type, round + "(" + var(id) + "_f)");
      }
    }
    if (op.kind == KILN_OP_UNARY && op.lanes > 1 && d_.simd_function_helpers && shape_.vector_math &&
        (dt == KILN_DTYPE_F32 || dt == KILN_DTYPE_F64)) {
      const std::string_view function = dt == KILN_DTYPE_F32 ? d_.unary_f32[op.code] : d_.unary_f64[op.code];
      // A shared helper (kiln_sigmoid_f32 ...) is defined after the SIMD
      // helpers: those ops go lane by lane below.
      if (defined_before_simd_helpers(function))
        return define(id, type, simd_function(function, dt, op.lanes, type) + "(" + var(op.src[0]) + ")");
    }
    if (op.kind == KILN_OP_BINARY && (op.code == KILN_BINARY_MAX || op.code == KILN_BINARY_MIN) && op.lanes > 1 &&
        d_.simd_function_helpers && (dt == KILN_DTYPE_F32 || dt == KILN_DTYPE_F64))
      return define(id, type, simd_min_max(op.code, dt, op.lanes, type) + "(" + var(op.src[0]) + ", " + var(op.src[1]) + ")");
    if (op.lanes == 1 || whole_vector(op, dt)) {
      // (index64_operand: a 32-bit index widened where the op computes in 64 bits.)
      const std::string e = spell({index64_operand(id, op.src[0]), n > 1 ? index64_operand(id, op.src[1]) : "",
                                   n > 2 ? index64_operand(id, op.src[2]) : ""});
      if (e.empty()) unsupported(id, "this op on " + std::string(dtype_name(dt)) + " is not available");
      return define(id, type, e);
    }
    std::vector<std::string> lanes;
    for (unsigned k = 0; k < op.lanes; ++k) {
      std::array<std::string, 3> a;
      for (unsigned i = 0; i < n; ++i) a[i] = in[i]->lanes == 1 ? var(op.src[i]) : d_.lane(var(op.src[i]), k);
      lanes.push_back(spell(a));
      if (lanes.back().empty()) unsupported(id, "this op on " + std::string(dtype_name(dt)) + " is not available");
    }
    define(id, type, d_.vector_literal(type, lanes));
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
  for (unsigned u = 1; u < kUnaryOps1_0; ++u)
    if (!spell.unary(u, dtype, "x").empty()) bits |= KILN_CAP_UNARY(u);
  for (unsigned b = 1; b < kBinaryOps1_0; ++b)
    if (!spell.binary(b, dtype, "x", "y").empty()) bits |= KILN_CAP_BINARY(b);
  return bits;
}

bool c_family_has_unary(const Dialect& dialect, unsigned op, unsigned dtype) {
  if (!dtype_valid(dtype)) return false;
  Spelling spell(dialect);
  return !spell.unary(op, dtype, "x").empty();
}

void set_c_family_caps(kiln_device_info& info, const Dialect& dialect, unsigned dtype) {
  const std::uint32_t word = c_family_dtype_ops(dialect, dtype);
  set_dtype_caps(info, dtype, word);
  set_unary_after_1_0(info, dtype, [&](unsigned u) { return word != 0 && c_family_has_unary(dialect, u, dtype); });
}

std::uint32_t c_family_vector_widths(const Dialect& dialect) { return dialect.vector_lanes | (1u << 1); }

void set_cuda_caps(kiln_device_info& info, int cc_major, int cc_minor, std::uint32_t warp_size) {
  info.vector_widths = c_family_vector_widths(cuda_dialect());
  for (unsigned dt = KILN_DTYPE_BF16; dt < KILN_DTYPE_COUNT; ++dt) set_c_family_caps(info, cuda_dialect(), dt);
  // MMA is emitted as mma.sync with f16/bf16/tf32 inputs, which needs sm_80.
  if (cc_major >= 8) {
    set_op_kind(info, KILN_DTYPE_F32, KILN_OP_MMA);
    set_feature(info, KILN_FEATURE_MMA_M16N8K16_F16);
    set_feature(info, KILN_FEATURE_MMA_M16N8K16_BF16);
    set_feature(info, KILN_FEATURE_MMA_M16N8K8_TF32);
    // COPY_ASYNC is cp.async.cg (16 bytes, global -> shared, sm_80+).
    set_copy_async(info);
    // LOAD_MATRIX is ldmatrix.sync.aligned.m8n8 (sm_75+).
    set_load_matrix(info);
  }
  // WGMMA is wgmma.mma_async (f16, bf16, and f32 as tf32), which exists on sm_90a only (not on sm_100:
  // its tensor cores take tcgen05); the CUDA plugin compiles for sm_90a then.
  if (cc_major == 9 && cc_minor == 0) set_wgmma(info);
  // SUBGROUP_REDUCE is __shfl_xor_sync (every arch kiln runs on): a block's
  // warps are 32 consecutive linear thread ids.
  if (warp_size == 32) set_subgroup_reduce(info);
  // LOAD at any element index: two aligned loads and funnel shifts
  // (cuda_vector_access); stores stay aligned.
  set_unaligned_vector_loads(info);
}

}  // namespace kiln::sdk
