// Validation of a wire kernel for the interpreter: every rule of kernel_ir.h
// the interpreter relies on, so that nothing a third-party host sends can
// make it crash or read out of bounds: valid kinds, codes, dtypes and lanes;
// operands that precede their use, are visible (not defined inside a block
// that has ended) and have the right kind, dtype and width; balanced
// LOOP/IF markers; PARAM slots 0..n-1 once each; INDEX and STORAGE rules;
// the interpreter's size limits. Fields an op kind does not use are ignored.
#include <charconv>
#include <string>

#include "interpreter_program.hpp"
#include "kiln/sdk/op_rules.hpp"
#include "kiln/sdk/plugin_support.hpp"

namespace kiln::sdk {

namespace {

using namespace interp;

std::string str(std::uint64_t v) { return std::to_string(v); }

class Validator {
 public:
  Validator(std::span<const kiln_op> ops, const InterpreterLimits& limits) : ops_(ops), limits_(limits) {}

  KernelStructure validate() {
    if (ops_.size() > limits_.max_kernel_ops || ops_.size() >= kNone)
      kernel_error("has " + str(ops_.size()) + " ops, more than the interpreter's limit of " +
                   str(limits_.max_kernel_ops));
    check_ops();
    return std::move(s_);
  }

 private:
  // ------------------------------------------------------------- errors --

  [[noreturn]] void op_error(std::uint32_t id, const std::string& what) const {
    fail(KILN_STATUS_INVALID_ARGUMENT,
         "op " + str(id) + " (" + std::string(op_kind_name(ops_[id].kind)) + "): " + what, id);
  }
  [[noreturn]] static void kernel_error(const std::string& what) {
    fail(KILN_STATUS_INVALID_ARGUMENT, "kernel " + what, -1);
  }

  static std::string describe_type(unsigned dtype, unsigned lanes) {
    std::string s(dtype_name(dtype));
    if (lanes != 1) s += "x" + str(lanes);
    return s;
  }

  // ----------------------------------------------------------- operands --

  bool visible(std::uint32_t def) const {
    const std::uint32_t block = block_of_[def];
    return block == kNone || !closed_[block];
  }

  const kiln_op& operand(std::uint32_t id, unsigned k) const {
    const std::uint32_t src = ops_[id].src[k];
    if (src == KILN_NO_OPERAND) op_error(id, "operand " + str(k) + " is missing");
    if (src >= id) op_error(id, "operand " + str(k) + " (op " + str(src) + ") does not precede the op");
    if (!visible(src))
      op_error(id, "operand " + str(k) + " (op " + str(src) + ") is defined inside the " +
                       std::string(op_kind_name(ops_[block_of_[src]].kind)) + " at op " + str(block_of_[src]) +
                       ", which has ended");
    return ops_[src];
  }

  // A value operand; dtype/lanes 0 mean "any".
  const kiln_op& value(std::uint32_t id, unsigned k, unsigned dtype = 0, unsigned lanes = 0) const {
    const kiln_op& o = operand(id, k);
    const std::uint32_t src = ops_[id].src[k];
    if (!has_result(o.kind) || is_memory(o))
      op_error(id, "operand " + str(k) + " (op " + str(src) + ", " + std::string(op_kind_name(o.kind)) +
                       ") is not a value");
    if ((dtype != 0 && o.dtype != dtype) || (lanes != 0 && o.lanes != lanes))
      op_error(id, "operand " + str(k) + " (op " + str(src) + ") is " + describe_type(o.dtype, o.lanes) +
                       ", expected " + describe_type(dtype != 0 ? dtype : o.dtype, lanes != 0 ? lanes : o.lanes));
    return o;
  }

  const kiln_op& memory(std::uint32_t id) const {
    const kiln_op& o = operand(id, 0);
    if (!is_memory(o))
      op_error(id, "operand 0 (op " + str(ops_[id].src[0]) + ", " + std::string(op_kind_name(o.kind)) +
                       ") is not a buffer or storage");
    return o;
  }

  // ---------------------------------------------------------- validation --

  void check_ops() {
    const std::size_t n = ops_.size();
    block_of_.assign(n, kNone);
    closed_.assign(n, 0);
    s_.end_of.assign(n, kNone);
    s_.loop_of.assign(n, kNone);
    std::vector<std::uint32_t> param_op_of_slot(n, kNone);
    std::uint32_t params = 0;

    for (std::uint32_t id = 0; id < n; ++id) {
      const kiln_op& op = ops_[id];
      const std::uint32_t block = open_.empty() ? kNone : open_.back();
      block_of_[id] = block;
      s_.loop_of[id] = open_loops_.empty() ? kNone : open_loops_.back();
      if (op.kind == KILN_OP_INVALID || op.kind >= KILN_OP_KIND_COUNT) op_error(id, "unknown op kind " + str(op.kind));
      if (has_result(op.kind)) {
        if (!dtype_valid(op.dtype)) op_error(id, "invalid dtype " + str(op.dtype));
        if (op.lanes < 1 || op.lanes > KILN_MAX_LANES) op_error(id, "lanes " + str(op.lanes) + " not in 1..16");
      }
      const bool top_level = open_.empty();
      switch (op.kind) {
        case KILN_OP_CONST:
          scalar_result(id);
          if (!wire_bits_fit(op.dtype, op.imm))
            op_error(id, "imm 0x" + hex(op.imm) + " is not a " + std::string(dtype_name(op.dtype)) +
                             " value (zero-extended bits)");
          break;
        case KILN_OP_PARAM:
          scalar_result(id);
          if (!top_level) op_error(id, "a PARAM must be outside every LOOP and IF");
          if (op.code < KILN_PARAM_GLOBAL || op.code > KILN_PARAM_VARIABLE) op_error(id, "invalid param kind " + str(op.code));
          if (op.attr >= n) op_error(id, "slot " + str(op.attr) + " exceeds the op count");
          if (param_op_of_slot[op.attr] != kNone)
            op_error(id, "slot " + str(op.attr) + " is already bound by op " + str(param_op_of_slot[op.attr]));
          param_op_of_slot[op.attr] = id;
          ++params;
          break;
        case KILN_OP_STORAGE:
          scalar_result(id);
          if (!top_level) op_error(id, "a STORAGE must be outside every LOOP and IF");
          if (op.code != KILN_SCOPE_LOCAL && op.code != KILN_SCOPE_REGISTER)
            op_error(id, "scope must be local or register, not " + std::string(scope_name(op.code)));
          if (op.imm == 0) op_error(id, "element count is 0");
          add_storage(id);
          break;
        case KILN_OP_LOAD:
        case KILN_OP_STORE: {
          const kiln_op& mem = memory(id);
          if (op.dtype != mem.dtype)
            op_error(id, "dtype " + std::string(dtype_name(op.dtype)) + " differs from the memory's " +
                             std::string(dtype_name(mem.dtype)));
          if (op.lanes < 1 || op.lanes > KILN_MAX_LANES) op_error(id, "lanes " + str(op.lanes) + " not in 1..16");
          if (op.attr != 0 && (op.attr != KILN_ACCESS_UNALIGNED || op.lanes == 1))
            op_error(id, "attr " + str(op.attr) + " is neither 0 nor KILN_ACCESS_UNALIGNED (1, for lanes > 1)");
          value(id, 1, KILN_DTYPE_I64, 1);
          if (op.kind == KILN_OP_STORE) {
            if (mem.kind == KILN_OP_PARAM && mem.code != KILN_PARAM_GLOBAL_MUT)
              op_error(id, "stores to the read-only param at op " + str(op.src[0]));
            value(id, 2, op.dtype, op.lanes);
          }
          break;
        }
        case KILN_OP_COPY_ASYNC: {
          const kiln_op& mem = memory(id);
          if (mem.kind != KILN_OP_STORAGE || mem.code != KILN_SCOPE_LOCAL)
            op_error(id, "copies go into LOCAL storage, not the memory at op " + str(op.src[0]));
          if (op.dtype != mem.dtype)
            op_error(id, "dtype " + std::string(dtype_name(op.dtype)) + " differs from the memory's " +
                             std::string(dtype_name(mem.dtype)));
          if (!dtype_valid(op.dtype) || op.lanes * dtype_bytes(op.dtype) != kCopyAsyncBytes)
            op_error(id, "a copy moves exactly " + str(kCopyAsyncBytes) + " bytes");
          value(id, 1, KILN_DTYPE_I64, 1);
          value(id, 2, op.dtype, op.lanes);
          break;
        }
        case KILN_OP_PREFETCH: {
          // A hint: any index (it reads nothing), one element of a buffer param.
          const kiln_op& mem = memory(id);
          if (mem.kind != KILN_OP_PARAM) op_error(id, "prefetch names a buffer param, not the storage at op " + str(op.src[0]));
          if (op.dtype != mem.dtype || op.lanes != 1)
            op_error(id, "prefetch is typed as one element of its param's dtype");
          value(id, 1, KILN_DTYPE_I64, 1);
          break;
        }
        case KILN_OP_LOAD_MATRIX: {
          const kiln_op& mem = memory(id);
          if (mem.kind != KILN_OP_STORAGE || mem.code != KILN_SCOPE_LOCAL)
            op_error(id, "load_matrix reads LOCAL storage, not the memory at op " + str(op.src[0]));
          if (op.dtype != mem.dtype || !dtype_valid(op.dtype) || dtype_bytes(op.dtype) != 2)
            op_error(id, "load_matrix loads 16-bit elements of the storage's dtype");
          if (op.attr != 1 && op.attr != 2 && op.attr != 4) op_error(id, "load_matrix loads 1, 2 or 4 matrices, not " + str(op.attr));
          if (op.code > 1) op_error(id, "load_matrix's code is 0 or 1 (transposed), not " + str(op.code));
          if (op.lanes != 2 * op.attr) op_error(id, "load_matrix of " + str(op.attr) + " matrices gives " + str(2 * op.attr) + " lanes");
          value(id, 1, KILN_DTYPE_I64, 1);
          if (first_mma_ == kNone) first_mma_ = id;
          break;
        }
        case KILN_OP_WGMMA: {
          const kiln_op& mem = memory(id);
          if (mem.kind != KILN_OP_STORAGE || mem.code != KILN_SCOPE_LOCAL)
            op_error(id, "wgmma reads A and B from LOCAL storage, not the memory at op " + str(op.src[0]));
          if (op.dtype != mem.dtype || (op.dtype != KILN_DTYPE_F16 && op.dtype != KILN_DTYPE_BF16 && op.dtype != KILN_DTYPE_F32) ||
              op.lanes != 1)
            op_error(id, "wgmma multiplies f16, bf16 or f32 (as tf32) storage and is typed as its storage");
          if (!wgmma_n_allowed(op.attr)) op_error(id, "wgmma's n is a multiple of 8 from 8 to 256, not " + str(op.attr));
          value(id, 1, KILN_DTYPE_I64, 2);
          if (!wgmma_code_allowed(op.code, op.dtype))
            op_error(id, "wgmma's A from registers (code 1) is the tf32 form's only, and its code is 0 or 1, not " + str(op.code));
          const kiln_op& acc = operand(id, 2);
          const std::uint64_t elements = wgmma_register_elements(op.attr, op.code);  // code 1: A's fragments past the accumulator
          if (acc.kind != KILN_OP_STORAGE || acc.code != KILN_SCOPE_REGISTER || acc.dtype != KILN_DTYPE_F32 ||
              acc.imm < elements)
            op_error(id, "wgmma accumulates into REGISTER f32 storage of at least " + str(elements) + " elements");
          if (first_wgmma_ == kNone) first_wgmma_ = id;
          break;
        }
        case KILN_OP_WGMMA_FENCE:
        case KILN_OP_WGMMA_COMMIT:
          if (first_wgmma_ == kNone) first_wgmma_ = id;
          break;
        case KILN_OP_WGMMA_WAIT:
          if (op.attr > kMaxWgmmaWaitGroups) op_error(id, "wgmma_wait leaves at most 7 groups pending, not " + str(op.attr));
          if (first_wgmma_ == kNone) first_wgmma_ = id;
          break;
        case KILN_OP_COPY_COMMIT:
          break;
        case KILN_OP_COPY_WAIT:
          if (op.attr > kMaxCopyWaitGroups) op_error(id, "copy_wait leaves at most 7 groups pending, not " + str(op.attr));
          break;
        case KILN_OP_INDEX:
          validate_index(id, top_level);
          break;
        case KILN_OP_LOOP:
          scalar_result(id, KILN_DTYPE_I64);
          value(id, 0, KILN_DTYPE_I64, 1);
          open_.push_back(id);
          open_loops_.push_back(id);
          block_of_[id] = id;  // the counter is visible only inside the loop
          break;
        case KILN_OP_IF:
          value(id, 0, KILN_DTYPE_BOOL, 1);
          open_.push_back(id);
          break;
        case KILN_OP_END_LOOP:
        case KILN_OP_END_IF:
          close_block(id);
          break;
        case KILN_OP_BARRIER:
          if (op.code != KILN_SCOPE_LOCAL) op_error(id, "scope must be local, not " + std::string(scope_name(op.code)));
          s_.has_barrier = true;
          break;
        case KILN_OP_UNARY:
          value(id, 0, op.dtype, op.lanes);
          if (!unary_allowed(op.dtype, op.code))
            op_error(id, "unary " + std::string(unary_name(op.code)) + " is not defined on " +
                             std::string(dtype_name(op.dtype)));
          break;
        case KILN_OP_BINARY: {
          const kiln_op& x = value(id, 0, 0, op.lanes);
          value(id, 1, x.dtype, op.lanes);
          if (!binary_allowed(x.dtype, op.code))
            op_error(id, "binary " + std::string(binary_name(op.code)) + " is not defined on " +
                             std::string(dtype_name(x.dtype)));
          const unsigned result = binary_is_comparison(op.code) ? unsigned{KILN_DTYPE_BOOL} : unsigned{x.dtype};
          if (op.dtype != result)
            op_error(id, "result dtype " + std::string(dtype_name(op.dtype)) + ", expected " +
                             std::string(dtype_name(result)));
          break;
        }
        case KILN_OP_CAST:
          value(id, 0, 0, op.lanes);
          break;
        case KILN_OP_MAD:
          for (unsigned k = 0; k < 3; ++k) value(id, k, op.dtype, op.lanes);
          if (!mad_allowed(op.dtype)) op_error(id, "mad is not defined on " + std::string(dtype_name(op.dtype)));
          break;
        case KILN_OP_SELECT: {
          const kiln_op& cond = value(id, 0, KILN_DTYPE_BOOL);
          if (cond.lanes != 1 && cond.lanes != op.lanes)
            op_error(id, "condition has " + str(cond.lanes) + " lanes; expected 1 or " + str(op.lanes));
          value(id, 1, op.dtype, op.lanes);
          value(id, 2, op.dtype, op.lanes);
          break;
        }
        case KILN_OP_VEC_BROADCAST:
          value(id, 0, op.dtype, 1);
          break;
        case KILN_OP_VEC_INSERT:
          value(id, 0, op.dtype, op.lanes);
          value(id, 1, op.dtype, 1);
          if (op.attr >= op.lanes) op_error(id, "lane " + str(op.attr) + " is not below " + str(op.lanes));
          break;
        case KILN_OP_VEC_EXTRACT: {
          const kiln_op& v = value(id, 0, op.dtype);
          scalar_result(id);
          if (op.attr >= v.lanes) op_error(id, "lane " + str(op.attr) + " is not below " + str(v.lanes));
          break;
        }
        case KILN_OP_MMA: {
          const MmaShapeInfo info = mma_shape_info(op.code);
          if (info.m == 0) op_error(id, "unknown mma shape " + str(op.code));
          if (!mma_input_allowed(op.code, op.attr))
            op_error(id, std::string(mma_shape_name(op.code)) + " does not take inputs of dtype " + str(op.attr));
          if (op.dtype != KILN_DTYPE_F32 || op.lanes != info.c_lanes)
            op_error(id, "the result must be f32x" + str(info.c_lanes) + ", not " + describe_type(op.dtype, op.lanes));
          value(id, 0, op.attr, info.a_lanes);
          value(id, 1, op.attr, info.b_lanes);
          value(id, 2, KILN_DTYPE_F32, info.c_lanes);
          if (first_mma_ == kNone) first_mma_ = id;
          break;
        }
        case KILN_OP_BF16_PAIR:
          if (op.dtype != KILN_DTYPE_U32) op_error(id, "bf16_pair gives u32, not " + std::string(dtype_name(op.dtype)));
          value(id, 0, KILN_DTYPE_BF16, op.lanes);
          value(id, 1, KILN_DTYPE_BF16, op.lanes);
          break;
        case KILN_OP_DOT_BF16:
          if (op.dtype != KILN_DTYPE_F32) op_error(id, "dot_bf16 gives f32, not " + std::string(dtype_name(op.dtype)));
          value(id, 0, KILN_DTYPE_F32, op.lanes);
          value(id, 1, KILN_DTYPE_U32, op.lanes);
          value(id, 2, KILN_DTYPE_U32, op.lanes);
          break;
        case KILN_OP_SUBGROUP_REDUCE:
          if (!subgroup_reduction_allowed(op.code))
            op_error(id, "subgroup_reduce takes add, mul, max or min, not " + std::string(binary_name(op.code)));
          if (!subgroup_width_allowed(op.attr))
            op_error(id, "subgroup width " + str(op.attr) + " is not a power of two from 2 to " + str(kMaxSubgroupWidth));
          if (op.dtype == KILN_DTYPE_BOOL) op_error(id, "subgroup_reduce does not take bool");
          scalar_result(id);
          value(id, 0, op.dtype, 1);
          if (widest_subgroup_ == kNone || op.attr > ops_[widest_subgroup_].attr) widest_subgroup_ = id;
          break;
        default:
          break;
      }
    }
    // The engine gathers a warp from 32 consecutive threads of one group.
    if (first_mma_ != kNone && s_.local[0] % kMmaWarp != 0)
      op_error(first_mma_, "mma runs in warps of 32 threads, but LOCAL axis 0 has " + str(s_.local[0]) +
                               " threads (not a multiple of 32)");
    // ... and a warp group from 128.
    if (first_wgmma_ != kNone && s_.local[0] % kWgmmaGroup != 0)
      op_error(first_wgmma_, "wgmma runs in warp groups of 128 threads, but LOCAL axis 0 has " + str(s_.local[0]) +
                                 " threads (not a multiple of 128)");
    if (!open_.empty())
      kernel_error("ends inside the " + std::string(op_kind_name(ops_[open_.back()].kind)) + " at op " +
                   str(open_.back()) + " (no matching end)");
    s_.param_ops.assign(params, kNone);
    for (std::uint32_t slot = 0; slot < params; ++slot) {
      if (param_op_of_slot[slot] == kNone)
        kernel_error("has " + str(params) + " params but none binds slot " + str(slot) +
                     " (slots must be 0..n-1, each once)");
      s_.param_ops[slot] = param_op_of_slot[slot];
    }
    for (unsigned axis = 0; axis < 3; ++axis) s_.threads_per_group *= s_.local[axis];
    // The engine takes a subgroup from consecutive threads of one group.
    if (widest_subgroup_ != kNone && s_.threads_per_group % ops_[widest_subgroup_].attr != 0)
      op_error(widest_subgroup_, "subgroups of " + str(ops_[widest_subgroup_].attr) + " threads do not divide the " +
                                     str(s_.threads_per_group) + " threads of a group");
    if (s_.threads_per_group > limits_.max_local_threads)
      kernel_error("has " + str(s_.threads_per_group) + " threads per group, more than the limit of " +
                   str(limits_.max_local_threads));
  }

  static std::string hex(std::uint64_t v) {
    char digits[17];
    return std::string(digits, std::to_chars(digits, digits + sizeof(digits), v, 16).ptr);
  }

  void scalar_result(std::uint32_t id, unsigned dtype = 0) const {
    const kiln_op& op = ops_[id];
    if (op.lanes != 1) op_error(id, "must be a scalar (lanes 1), has " + str(op.lanes) + " lanes");
    if (dtype != 0 && op.dtype != dtype)
      op_error(id, "dtype must be " + std::string(dtype_name(dtype)) + ", not " + std::string(dtype_name(op.dtype)));
  }

  void validate_index(std::uint32_t id, bool top_level) {
    const kiln_op& op = ops_[id];
    scalar_result(id, KILN_DTYPE_I64);
    if (!top_level) op_error(id, "an INDEX must be outside every LOOP and IF");
    if (op.code != KILN_SCOPE_GROUP && op.code != KILN_SCOPE_LOCAL)
      op_error(id, "scope must be group or local, not " + std::string(scope_name(op.code)));
    if (op.attr >= KILN_MAX_AXES) op_error(id, "axis " + str(op.attr) + " is not 0, 1 or 2");
    const kiln_op& len = value(id, 0, KILN_DTYPE_I64, 1);
    std::uint32_t& seen = op.code == KILN_SCOPE_GROUP ? group_index_op_[op.attr] : local_index_op_[op.attr];
    if (seen != kNone)
      op_error(id, "a second " + std::string(scope_name(op.code)) + " index on axis " + str(op.attr) +
                       " (the first is op " + str(seen) + ")");
    seen = id;
    if (op.code == KILN_SCOPE_LOCAL) {
      if (len.kind != KILN_OP_CONST) op_error(id, "a LOCAL length must be a CONST");
      const auto threads = static_cast<std::int64_t>(len.imm);
      if (threads < 1 || static_cast<std::uint64_t>(threads) > limits_.max_local_threads)
        op_error(id, "LOCAL length " + std::to_string(threads) + " not in 1.." + str(limits_.max_local_threads));
      s_.local[op.attr] = static_cast<std::uint32_t>(threads);
    } else {
      std::vector<std::uint8_t> seen_ops(id, 0);
      check_host_evaluable(id, op.src[0], 0, seen_ops);
    }
  }

  // GROUP lengths: CONSTs, VARIABLE params and integer UNARY/BINARY/CAST over
  // them (what kiln/sdk/grid.hpp evaluates before launch).
  void check_host_evaluable(std::uint32_t index, std::uint32_t id, int depth, std::vector<std::uint8_t>& seen) const {
    if (seen[id]) return;
    seen[id] = 1;
    const kiln_op& op = ops_[id];
    auto reject = [&](const std::string& why) {
      op_error(index, "GROUP length is not host-evaluable: op " + str(id) + " " + why);
    };
    if (depth > 64) reject("is nested too deep");
    if (op.lanes != 1 || !(dtype_is_int(op.dtype) || op.dtype == KILN_DTYPE_BOOL)) reject("is not an integer scalar");
    switch (op.kind) {
      case KILN_OP_CONST:
        return;
      case KILN_OP_PARAM:
        if (op.code != KILN_PARAM_VARIABLE) reject("is a buffer");
        return;
      case KILN_OP_UNARY:
        if (op.code != KILN_UNARY_NEG && op.code != KILN_UNARY_ABS && op.code != KILN_UNARY_BIT_NOT)
          reject("is unary " + std::string(unary_name(op.code)));
        break;
      case KILN_OP_BINARY:
        if (binary_is_comparison(op.code) || op.code == KILN_BINARY_POW)
          reject("is binary " + std::string(binary_name(op.code)));
        break;
      case KILN_OP_CAST:
        break;
      default:
        reject("is a " + std::string(op_kind_name(op.kind)));
    }
    for (std::uint32_t src : operands(op)) check_host_evaluable(index, src, depth + 1, seen);
  }

  void add_storage(std::uint32_t id) {
    const kiln_op& op = ops_[id];
    const bool local = op.code == KILN_SCOPE_LOCAL;
    const std::uint64_t limit = local ? limits_.max_local_bytes : limits_.max_register_bytes;
    std::uint64_t& bytes = local ? s_.local_bytes : s_.register_bytes;
    std::uint64_t& elements = local ? s_.local_elements : s_.register_elements;
    const std::uint64_t offset = (bytes + 15) / 16 * 16;
    if (op.imm > limit / dtype_bytes(op.dtype) || offset + op.imm * dtype_bytes(op.dtype) > limit)
      op_error(id, std::string(local ? "LOCAL" : "REGISTER") + " storage exceeds the interpreter's limit of " +
                       str(limit) + " bytes " + (local ? "per group" : "per thread"));
    Memory m{};
    m.op = id;
    m.space = local ? Space::Local : Space::Register;
    m.dtype = op.dtype;
    m.writable = true;
    m.elements = op.imm;
    m.offset = offset;
    m.first_element = elements;
    s_.storages.push_back(m);
    bytes = offset + op.imm * dtype_bytes(op.dtype);
    elements += op.imm;
  }

  void close_block(std::uint32_t id) {
    const kiln_op& op = ops_[id];
    const bool is_loop = op.kind == KILN_OP_END_LOOP;
    const unsigned want = is_loop ? KILN_OP_LOOP : KILN_OP_IF;
    if (open_.empty()) op_error(id, "no open " + std::string(op_kind_name(want)) + " to close");
    const std::uint32_t start = open_.back();
    if (ops_[start].kind != want)
      op_error(id, "the innermost open block is the " + std::string(op_kind_name(ops_[start].kind)) + " at op " +
                       str(start));
    if (op.src[0] != start)
      op_error(id, "closes op " + (op.src[0] == KILN_NO_OPERAND ? std::string("<none>") : str(op.src[0])) +
                       ", but the innermost open block is op " + str(start));
    open_.pop_back();
    if (is_loop) open_loops_.pop_back();
    closed_[start] = 1;
    s_.end_of[start] = id;
    block_of_[id] = open_.empty() ? kNone : open_.back();
    s_.loop_of[id] = open_loops_.empty() ? kNone : open_loops_.back();
  }

  std::span<const kiln_op> ops_;
  InterpreterLimits limits_;
  KernelStructure s_;
  std::vector<std::uint32_t> block_of_;  // innermost open LOOP/IF at each op (a LOOP: itself)
  std::vector<std::uint8_t> closed_;     // LOOP/IF ops whose END has been seen
  std::vector<std::uint32_t> open_;
  std::vector<std::uint32_t> open_loops_;
  std::array<std::uint32_t, 3> group_index_op_ = {kNone, kNone, kNone};
  std::array<std::uint32_t, 3> local_index_op_ = {kNone, kNone, kNone};
  std::uint32_t first_mma_ = kNone;
  std::uint32_t first_wgmma_ = kNone;
  std::uint32_t widest_subgroup_ = kNone;  // the SUBGROUP_REDUCE of the largest width
};

}  // namespace

KernelStructure validate_kernel(std::span<const kiln_op> ops, const InterpreterLimits& limits) {
  return Validator(ops, limits).validate();
}

}  // namespace kiln::sdk
