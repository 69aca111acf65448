// Loops of length 1 disappear: their body runs once, in place, with the
// counter replaced by 0. (Values defined in the body become visible after
// it, which is harmless: nothing used them there before.)
//
//   %3 = loop %1          # %1 = const i64 1
//     store f32 %0[%3], %2          ->   %3 = const i64 0
//   endloop %3                           store f32 %0[%3], %2
#include "always_on.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"

#include <vector>

namespace kiln::passes::detail {

Kernel remove_unit_loops(const Kernel& kernel, const DeviceInfo&) {
  std::vector<bool> removed(kernel.size(), false);
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ir::ValueId id) {
    const ir::Op& op = kernel[id];
    if (op.kind == ir::OpKind::Loop && ir::constant_int(kernel, op.src[0]) == 1) {
      removed[id] = true;
      rw.replace(id, rw.out().constant_i64(0));
      return true;
    }
    if (op.kind == ir::OpKind::EndLoop && op.src[0] < kernel.size() && removed[op.src[0]]) {
      rw.drop(id);
      return true;
    }
    return false;
  });
}

}  // namespace kiln::passes::detail
