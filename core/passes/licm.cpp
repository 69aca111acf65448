// Loop-invariant code motion: an op whose value is the same in every
// iteration of a loop moves to just before that loop (the outermost loop it
// is invariant in), so it runs once instead of once per iteration.
//
// Only ops that are safe to run when the original would not have run
// (the loop may run zero times; the op may sit under an IF) move:
//   - arithmetic that cannot fault or be undefined: every UNARY, BINARY,
//     MAD, SELECT and vector op, except integer DIV/MOD whose divisor is not
//     a nonzero constant, and CASTs from float to integer (out of range is
//     undefined on devices);
//   - a LOAD only when the loop's count is a constant >= 1 and the load is
//     not under an IF or a loop of unknown count inside it (it would have
//     run anyway, so its index is in range), nothing in the loop stores to
//     that memory, and, for LOCAL memory, the loop holds no BARRIER (the
//     load would move across it).
#include "always_on.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"

#include <vector>

namespace kiln::passes::detail {

using ir::OpKind;
using ir::ValueId;

namespace {

bool speculatable_arithmetic(const Kernel& kernel, const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Unary: case OpKind::Mad: case OpKind::Select: case OpKind::Broadcast: case OpKind::Insert:
    case OpKind::Extract:
      return true;
    case OpKind::Binary:
      if ((op.binary() == ir::BinaryOp::Div || op.binary() == ir::BinaryOp::Mod) && !ir::is_float(op.dtype)) {
        const auto divisor = ir::constant_int(kernel, op.src[1]);
        return divisor && *divisor != 0;
      }
      return true;
    case OpKind::Cast:
      return !(op.src[0] < kernel.size() && ir::is_float(kernel[op.src[0]].dtype) && !ir::is_float(op.dtype) &&
               op.dtype != ir::DType::Bool);
    default:
      return false;
  }
}

struct LoopFacts {
  std::vector<bool> stored;  // per memory op: some STORE in the loop writes it
  bool has_barrier = false;
  bool runs = false;         // the count is a constant >= 1
};

LoopFacts facts_of(const Kernel& kernel, const ir::Blocks& blocks, ValueId loop) {
  LoopFacts facts;
  facts.stored.assign(kernel.size(), false);
  const auto count = ir::constant_int(kernel, kernel[loop].src[0]);
  facts.runs = count && *count >= 1;
  for (ValueId id = loop + 1; id < kernel.size() && id < blocks.end[loop]; ++id) {
    const ir::Op& op = kernel[id];
    // A copy_wait writes LOCAL storage as a barrier publishes it.
    // A wgmma_wait writes the accumulators of the WGMMAs it covers.
    if (op.kind == OpKind::Barrier || op.kind == OpKind::CopyWait || op.kind == OpKind::WgmmaWait) facts.has_barrier = true;
    if (op.kind == OpKind::Wgmma && op.src[2] < kernel.size()) facts.stored[op.src[2]] = true;  // its accumulator
    if ((op.kind != OpKind::Store && op.kind != OpKind::CopyAsync) || op.src[0] >= kernel.size()) continue;
    facts.stored[op.src[0]] = true;
    // Two GLOBAL_MUT params may be bound to one buffer: a store to one may
    // change what a load from another reads.
    if (kernel[op.src[0]].kind == OpKind::Param)
      for (ValueId m = 0; m < kernel.size(); ++m)
        if (kernel[m].kind == OpKind::Param && kernel[m].param_kind() == ir::ParamKind::GlobalMut) facts.stored[m] = true;
  }
  return facts;
}

// Whether a LOAD inside `loop` runs whenever one iteration of it runs: no
// IF, and no loop of unknown or zero count, between it and `loop`.
bool runs_every_iteration(const Kernel& kernel, const ir::Blocks& blocks, ValueId id, ValueId loop) {
  for (ValueId p = blocks.parent[id]; p != loop && p != ir::kNoValue; p = blocks.parent[p]) {
    if (kernel[p].kind == OpKind::If) return false;
    const auto count = ir::constant_int(kernel, kernel[p].src[0]);
    if (!count || *count < 1) return false;
  }
  return true;
}

}  // namespace

Kernel hoist_loop_invariants(const Kernel& kernel, const DeviceInfo&) {
  const std::size_t n = kernel.size();
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  // target[id]: the outermost loop `id` can move out of (kNoValue: stays).
  std::vector<ValueId> target(n, ir::kNoValue);
  for (ValueId loop = 0; loop < n; ++loop) {
    if (kernel[loop].kind != OpKind::Loop || blocks.end[loop] == ir::kNoValue) continue;
    const LoopFacts facts = facts_of(kernel, blocks, loop);
    // hoistable[id] for ops inside `loop`: invariant in it and safe to move.
    std::vector<bool> hoistable(n, false);
    auto invariant_operand = [&](ValueId v) {
      if (v >= n || v == loop) return false;  // the counter varies by definition
      return !blocks.encloses(loop, v) || hoistable[v];
    };
    for (ValueId id = loop + 1; id < blocks.end[loop]; ++id) {
      const ir::Op& op = kernel[id];
      bool safe = speculatable_arithmetic(kernel, op);
      if (op.kind == OpKind::Load) {
        const ValueId memory = op.src[0];
        const bool local = memory < n && opts::is_local_storage(kernel, memory);
        safe = facts.runs && memory < n && !facts.stored[memory] && !(local && facts.has_barrier) &&
               runs_every_iteration(kernel, blocks, id, loop);
      }
      if (!safe) continue;
      bool operands_invariant = true;
      for (ValueId v : op.operands()) operands_invariant = operands_invariant && invariant_operand(v);
      hoistable[id] = operands_invariant;
      // Loops are visited outermost first: the first loop that accepts an op is its target.
      if (hoistable[id] && target[id] == ir::kNoValue) target[id] = loop;
    }
  }
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
    if (kernel[id].kind != OpKind::Loop) return false;
    for (ValueId inner = id + 1; inner < n && inner < blocks.end[id]; ++inner)
      if (target[inner] == id) rw.copy(inner);
    rw.copy(id);
    return true;
  });
}

}  // namespace kiln::passes::detail
