// The guard rewrite (kiln/passes/bounds.hpp): makes listed LOADs and STOREs
// safe whatever their index. A STORE is wrapped in IF (i > -1 AND
// i < n - lanes + 1), so an out-of-range one writes nothing; a LOAD reads
// at MIN(MAX(i, 0), last), `last` the last start of a whole, aligned vector
// inside the memory, so an out-of-range one reads the nearest element
// instead. Both forms are what the bounds analysis proves in range, so a
// guarded kernel classifies with no unknown access left.
#include "kiln/passes/bounds.hpp"

#include "kiln/ir/rewriter.hpp"

#include <algorithm>

namespace kiln::passes {

using ir::OpKind;
using ir::Value;
using ir::ValueId;

ir::Kernel guard_accesses(const ir::Kernel& kernel, std::span<const ValueId> accesses) {
  std::vector<bool> guarded(kernel.size());
  for (ValueId id : accesses)
    if (id < kernel.size()) guarded[id] = true;
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
    const ir::Op& op = kernel[id];
    if (!guarded[id] || (op.kind != OpKind::Load && op.kind != OpKind::Store)) return false;
    const auto elements = static_cast<std::int64_t>(kernel[op.src[0]].imm);
    const auto lanes = static_cast<std::int64_t>(op.lanes);
    if (elements < lanes) return false;  // no position is inside: the analysis refuses it
    ir::Builder& b = rw.out();
    const Value memory = rw.map(op.src[0]);
    const Value index = rw.map(op.src[1]);
    if (op.kind == OpKind::Load) {
      const std::int64_t last = (elements - lanes) / lanes * lanes;
      const Value low = b.max(index, b.constant_i64(0));
      rw.replace(id, b.load(memory, b.min(low, b.constant_i64(last)), op.lanes));
      return true;
    }
    const Value above = b.cmpgt(index, b.constant_i64(-1));
    const Value below = b.cmplt(index, b.constant_i64(elements - lanes + 1));
    const Value value = rw.map(op.src[2]);
    b.if_then(b.and_(above, below), [&] { b.store(memory, index, value); });
    return true;
  });
}

}  // namespace kiln::passes
