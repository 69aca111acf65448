// Decoding of a validated wire kernel (interpreter_validate.cpp) into what the
// engine runs: value slots (a value's slot is reused after its last use, so
// large kernels stay small in memory), memories, the values filled before a
// run (constants, scalar arguments, indices) and the instruction list.
#include <algorithm>
#include <string>

#include <bit>

#include "interpreter_program.hpp"
#include "kiln/sdk/plugin_support.hpp"

namespace kiln::sdk {

namespace {

using namespace interp;

class Decoder {
 public:
  Decoder(std::span<const kiln_op> ops, KernelStructure structure) : ops_(ops), s_(std::move(structure)) {}

  ProgramData decode() {
    out_.ops.assign(ops_.begin(), ops_.end());
    out_.param_ops = s_.param_ops;
    out_.local = s_.local;
    out_.threads_per_group = s_.threads_per_group;
    out_.local_bytes = s_.local_bytes;
    out_.local_elements = s_.local_elements;
    out_.register_bytes = s_.register_bytes;
    out_.register_elements = s_.register_elements;
    out_.has_barrier = s_.has_barrier;
    assign_slots();
    emit();
    return std::move(out_);
  }

 private:
  // ------------------------------------------------------------- slots --

  static bool hoisted(const kiln_op& op) {
    return op.kind == KILN_OP_CONST || op.kind == KILN_OP_INDEX ||
           (op.kind == KILN_OP_PARAM && op.code == KILN_PARAM_VARIABLE);
  }

  static unsigned slot_count(const kiln_op& op) {
    if (!has_result(op.kind) || is_memory(op)) return 0;
    return op.kind == KILN_OP_LOOP ? 2u : op.lanes;  // LOOP: counter + trip count
  }

  // The last op index at which value `def` must still hold, given a use at
  // `use`: a use inside a loop that does not contain the definition keeps the
  // value alive to the end of that loop (every iteration reads it).
  std::uint32_t live_until(std::uint32_t def, std::uint32_t use) const {
    std::uint32_t last = use;
    for (std::uint32_t loop = s_.loop_of[use]; loop != kNone && loop > def; loop = s_.loop_of[loop]) last = s_.end_of[loop];
    return last;
  }

  void assign_slots() {
    const std::size_t n = ops_.size();
    std::vector<std::uint32_t> last_use(n, 0);
    for (std::uint32_t id = 0; id < n; ++id) {
      const kiln_op& op = ops_[id];
      if (slot_count(op) != 0) last_use[id] = std::max(last_use[id], id);
      if (op.kind == KILN_OP_LOOP) last_use[id] = s_.end_of[id];
      if (op.kind == KILN_OP_END_LOOP || op.kind == KILN_OP_END_IF) continue;
      for (std::uint32_t src : operands(op))
        if (slot_count(ops_[src]) != 0) last_use[src] = std::max(last_use[src], live_until(src, id));
    }
    slot_.assign(n, kNone);
    // Values whose last use is op i, as linked lists (two words per op).
    std::vector<std::uint32_t> expiring(n, kNone);
    std::vector<std::uint32_t> next_expiring(n, kNone);
    std::array<std::vector<std::uint32_t>, KILN_MAX_LANES + 1> free_slots;
    std::uint32_t next = 0;
    for (std::uint32_t id = 0; id < n; ++id) {
      if (id > 0)
        for (std::uint32_t dead = expiring[id - 1]; dead != kNone; dead = next_expiring[dead])
          free_slots[slot_count(ops_[dead])].push_back(slot_[dead]);
      const kiln_op& op = ops_[id];
      const unsigned count = slot_count(op);
      if (count == 0) continue;
      auto& pool = free_slots[count];
      if (!hoisted(op) && !pool.empty()) {
        slot_[id] = pool.back();
        pool.pop_back();
      } else {
        slot_[id] = next;
        next += count;
      }
      if (!hoisted(op)) {
        next_expiring[id] = expiring[last_use[id]];
        expiring[last_use[id]] = id;
      }
    }
    out_.slot_count = next;
  }

  // -------------------------------------------------------------- emit --

  static OpClass float_class(unsigned dtype) {
    return dtype == KILN_DTYPE_F64 ? OpClass::DoubleAlu : OpClass::FloatAlu;
  }

  static OpClass unary_class(unsigned dtype, unsigned code) {
    if (!dtype_is_float(dtype)) return OpClass::IntAlu;
    switch (code) {
      case KILN_UNARY_EXP: case KILN_UNARY_LN: return OpClass::ExpLn;
      case KILN_UNARY_EXP2: case KILN_UNARY_LOG2: return OpClass::Exp2Log2;
      case KILN_UNARY_RECIP: case KILN_UNARY_SQRT: case KILN_UNARY_SIN: case KILN_UNARY_COS:
        return OpClass::FloatSpecial;
      default: return float_class(dtype);
    }
  }

  static OpClass binary_class(unsigned dtype, unsigned code) {
    const bool division = code == KILN_BINARY_DIV || code == KILN_BINARY_MOD;
    if (!dtype_is_float(dtype)) return division ? OpClass::IntDiv : OpClass::IntAlu;
    return division || code == KILN_BINARY_POW ? OpClass::FloatSpecial : float_class(dtype);
  }

  void emit() {
    const std::size_t n = ops_.size();
    memory_of_.assign(n, kNone);
    for (const Memory& m : s_.storages) {
      memory_of_[m.op] = static_cast<std::uint32_t>(out_.memories.size());
      out_.memories.push_back(m);
    }
    for (std::uint32_t slot = 0; slot < out_.param_ops.size(); ++slot) {
      const std::uint32_t id = out_.param_ops[slot];
      const kiln_op& op = ops_[id];
      if (op.code == KILN_PARAM_VARIABLE) {
        out_.variables.push_back({slot_[id], slot, op.dtype, id});
        continue;
      }
      Memory m{};
      m.op = id;
      m.space = Space::Global;
      m.dtype = op.dtype;
      m.writable = op.code == KILN_PARAM_GLOBAL_MUT;
      m.param_slot = slot;
      m.elements = op.imm;
      memory_of_[id] = static_cast<std::uint32_t>(out_.memories.size());
      out_.memories.push_back(m);
    }

    std::vector<std::uint32_t> instr_of(n, kNone);
    std::uint32_t depth = 0;
    for (std::uint32_t id = 0; id < n; ++id) {
      const kiln_op& op = ops_[id];
      Instr in{};
      in.op = id;
      in.lanes = has_result(op.kind) || op.kind == KILN_OP_STORE || op.kind == KILN_OP_COPY_ASYNC ? op.lanes : std::uint8_t{1};
      in.dtype = op.dtype;
      in.dst = slot_[id];
      auto slot_of = [&](unsigned k) { return slot_[op.src[k]]; };
      switch (op.kind) {
        case KILN_OP_CONST:
          out_.consts.push_back({slot_[id], slot_from_wire_bits(op.dtype, op.imm)});
          continue;
        case KILN_OP_PARAM:
        case KILN_OP_STORAGE:
        case KILN_OP_PREFETCH:  // a hint with no effect on any result
          continue;
        case KILN_OP_INDEX:
          (op.code == KILN_SCOPE_GROUP ? out_.group_indices : out_.local_indices).push_back({slot_[id], op.attr});
          continue;
        case KILN_OP_LOAD:
        case KILN_OP_STORE:
          in.exec = op.kind == KILN_OP_LOAD ? Exec::Load : Exec::Store;
          in.op_class = OpClass::Count;  // counted in the memory statistics
          in.a = memory_of_[op.src[0]];
          in.b = slot_of(1);
          in.aux = op.attr;  // KILN_ACCESS_UNALIGNED: any element index
          if (op.kind == KILN_OP_STORE) in.c = slot_of(2);
          break;
        case KILN_OP_COPY_ASYNC:
          in.exec = Exec::CopyAsync;
          in.op_class = OpClass::Count;  // counted in the memory statistics
          in.a = memory_of_[op.src[0]];
          in.b = slot_of(1);
          in.c = slot_of(2);
          break;
        case KILN_OP_LOAD_MATRIX:
          in.exec = Exec::LoadMatrix;
          in.op_class = OpClass::Count;  // counted in the memory statistics
          in.a = memory_of_[op.src[0]];
          in.b = slot_of(1);
          in.aux = op.code;
          break;
        case KILN_OP_COPY_COMMIT:
          in.exec = Exec::CopyCommit;
          break;
        case KILN_OP_WGMMA:
          in.exec = Exec::Wgmma;
          in.op_class = OpClass::Count;  // done (and counted) at its wait
          in.a = memory_of_[op.src[0]];
          in.b = slot_of(1);
          in.c = memory_of_[op.src[2]];
          in.aux = op.attr;
          in.input = op.code;  // 1: A's fragments in the accumulator's storage
          break;
        case KILN_OP_WGMMA_FENCE:
          in.exec = Exec::WgmmaFence;
          break;
        case KILN_OP_WGMMA_COMMIT:
          in.exec = Exec::WgmmaCommit;
          break;
        case KILN_OP_WGMMA_WAIT:
          in.exec = Exec::WgmmaWait;
          in.aux = op.attr;
          break;
        case KILN_OP_COPY_WAIT:
          in.exec = Exec::CopyWait;
          in.aux = op.attr;
          break;
        case KILN_OP_LOOP:
          in.exec = Exec::Loop;
          in.a = slot_of(0);
          in.aux = slot_[id] + 1;
          in.depth = depth++;
          break;
        case KILN_OP_IF:
          in.exec = Exec::If;
          in.a = slot_of(0);
          in.depth = depth++;
          break;
        case KILN_OP_END_LOOP:
        case KILN_OP_END_IF: {
          Instr& start = out_.code[instr_of[op.src[0]]];
          in.exec = op.kind == KILN_OP_END_LOOP ? Exec::EndLoop : Exec::EndIf;
          in.depth = --depth;
          in.dst = start.dst;
          in.aux = start.aux;
          in.jump = instr_of[op.src[0]] + 1;
          start.jump = static_cast<std::uint32_t>(out_.code.size()) + 1;
          break;
        }
        case KILN_OP_BARRIER:
          in.exec = Exec::Barrier;
          break;
        case KILN_OP_UNARY:
          in.exec = Exec::Elementwise;
          in.operands = 1;
          in.a = slot_of(0);
          in.fn = unary_row(vclass_of(op.dtype), op.code);
          in.shift = static_cast<std::uint8_t>(int_shift(op.dtype));
          in.op_class = unary_class(op.dtype, op.code);
          break;
        case KILN_OP_BINARY: {
          const unsigned x = ops_[op.src[0]].dtype;
          in.exec = Exec::Elementwise;
          in.operands = 2;
          in.a = slot_of(0);
          in.b = slot_of(1);
          in.fn = binary_row(vclass_of(x), op.code);
          in.shift = static_cast<std::uint8_t>(int_shift(x));
          in.op_class = binary_class(x, op.code);
          break;
        }
        case KILN_OP_CAST:
          in.exec = Exec::Elementwise;
          in.operands = 1;
          in.a = slot_of(0);
          in.fn = cast_row(vclass_of(ops_[op.src[0]].dtype), vclass_of(op.dtype));
          in.shift = static_cast<std::uint8_t>(int_shift(op.dtype));
          in.op_class = OpClass::Convert;
          break;
        case KILN_OP_MAD:
          in.exec = Exec::Elementwise;
          in.operands = 3;
          in.a = slot_of(0);
          in.b = slot_of(1);
          in.c = slot_of(2);
          in.fn = mad_row(vclass_of(op.dtype));
          in.shift = static_cast<std::uint8_t>(int_shift(op.dtype));
          in.op_class = dtype_is_float(op.dtype) ? float_class(op.dtype) : OpClass::IntAlu;
          break;
        case KILN_OP_SELECT:
          in.exec = Exec::Select;
          in.a = slot_of(0);
          in.b = slot_of(1);
          in.c = slot_of(2);
          in.aux = ops_[op.src[0]].lanes == 1 ? 0u : 1u;
          in.op_class = OpClass::Move;
          break;
        case KILN_OP_VEC_BROADCAST:
          in.exec = Exec::Broadcast;
          in.a = slot_of(0);
          in.op_class = OpClass::Move;
          break;
        case KILN_OP_VEC_INSERT:
          in.exec = Exec::Insert;
          in.a = slot_of(0);
          in.b = slot_of(1);
          in.aux = op.attr;
          in.op_class = OpClass::Move;
          break;
        case KILN_OP_VEC_EXTRACT:
          in.exec = Exec::Extract;
          in.a = slot_of(0);
          in.aux = op.attr;
          in.op_class = OpClass::Move;
          break;
        case KILN_OP_MMA: {
          const MmaShapeInfo info = mma_shape_info(op.code);
          in.exec = Exec::Mma;
          in.a = slot_of(0);
          in.b = slot_of(1);
          in.c = slot_of(2);
          in.aux = op.code;
          in.input = static_cast<std::uint8_t>(op.attr);
          // Statistics count the multiply-adds each thread's share of the
          // tile stands for (M*N*K / 32), as float ALU work.
          in.lanes = static_cast<std::uint8_t>(info.m * info.n * info.k / kMmaWarp);
          in.op_class = OpClass::FloatAlu;
          break;
        }
        case KILN_OP_BF16_PAIR:
          in.exec = Exec::Elementwise;
          in.operands = 2;
          in.a = slot_of(0);
          in.b = slot_of(1);
          in.fn = bf16_pair_row();
          in.op_class = OpClass::IntAlu;
          break;
        case KILN_OP_DOT_BF16:
          in.exec = Exec::Elementwise;
          in.operands = 3;
          in.a = slot_of(0);
          in.b = slot_of(1);
          in.c = slot_of(2);
          in.fn = dot_bf16_row();
          in.op_class = OpClass::FloatAlu;
          break;
        case KILN_OP_SUBGROUP_REDUCE:
          in.exec = Exec::SubgroupReduce;
          in.a = slot_of(0);
          in.aux = op.attr;
          in.fn = binary_row(vclass_of(op.dtype), op.code);
          in.shift = static_cast<std::uint8_t>(int_shift(op.dtype));
          in.op_class = binary_class(op.dtype, op.code);
          // Statistics count one combining op per step, log2(width) of them.
          in.lanes = static_cast<std::uint8_t>(std::countr_zero(op.attr));
          break;
        default:
          continue;
      }
      if ((in.exec == Exec::Elementwise || in.exec == Exec::SubgroupReduce) && in.fn == nullptr)  // validation admits only ops with one
        fail(KILN_STATUS_INTERNAL, "op " + std::to_string(id) + ": no implementation", id);
      instr_of[id] = static_cast<std::uint32_t>(out_.code.size());
      out_.code.push_back(in);
      out_.max_depth = std::max(out_.max_depth, depth);
    }
  }

  std::span<const kiln_op> ops_;
  KernelStructure s_;
  ProgramData out_;
  std::vector<std::uint32_t> memory_of_;  // PARAM buffer / STORAGE op -> memory index
  std::vector<std::uint32_t> slot_;
};

}  // namespace

ProgramData decode_program(std::span<const kiln_op> ops, const InterpreterLimits& limits) {
  return Decoder(ops, validate_kernel(ops, limits)).decode();
}

}  // namespace kiln::sdk
