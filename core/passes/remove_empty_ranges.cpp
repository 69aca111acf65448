// Zero-length loops and unit-length indices: a LOOP whose count is a
// constant <= 0 never runs its body, so the loop and its body go; an INDEX
// of constant length 1 is always 0, so it becomes the constant 0 (a missing
// axis has length 1: the grid is unchanged). When that removes the last
// LOCAL index, a group is one thread and its barriers order nothing, so
// they go too (the verifier requires a LOCAL index for a barrier).
#include "always_on.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"

namespace kiln::passes::detail {

using ir::OpKind;

namespace {

bool unit_index(const Kernel& kernel, ir::ValueId id) {
  return kernel[id].kind == OpKind::Index && ir::constant_int(kernel, kernel[id].src[0]) == 1;
}

}  // namespace

Kernel remove_empty_ranges(const Kernel& kernel, const DeviceInfo&) {
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  bool local_index_left = false;
  for (ir::ValueId id = 0; id < kernel.size(); ++id)
    local_index_left = local_index_left || (kernel[id].kind == OpKind::Index && kernel[id].scope() == ir::Scope::Local &&
                                            !unit_index(kernel, id));
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ir::ValueId id) {
    const ir::Op& op = kernel[id];
    if (op.kind == OpKind::Loop && blocks.end[id] != ir::kNoValue) {
      const auto count = ir::constant_int(kernel, op.src[0]);
      if (!count || *count > 0) return false;
      for (ir::ValueId dead = id; dead <= blocks.end[id]; ++dead) rw.drop(dead);
      return true;
    }
    if (unit_index(kernel, id)) {
      rw.replace(id, rw.out().constant_i64(0));
      return true;
    }
    if (op.kind == OpKind::Barrier && !local_index_left) {
      rw.drop(id);
      return true;
    }
    return false;
  });
}

}  // namespace kiln::passes::detail
