// Instruction scheduling into the canonical order every later step and the
// kernel hash rely on: PARAMs first (by slot), then CONSTs (by dtype, then
// bits), then every other op in its original relative order. Only PARAMs
// and CONSTs move, and they have no operands and no effects, so memory
// order, barriers and blocks are untouched by construction.
#include "always_on.hpp"
#include "kiln/ir/rewriter.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

namespace kiln::passes::detail {

Kernel schedule_instructions(const Kernel& kernel, const DeviceInfo&) {
  std::vector<ir::ValueId> params, constants;
  for (ir::ValueId id = 0; id < kernel.size(); ++id) {
    // PARAMs are top-level by rule; a CONST may sit in a block, and moving
    // it to the top only widens where it is visible.
    if (kernel[id].kind == ir::OpKind::Param) params.push_back(id);
    if (kernel[id].kind == ir::OpKind::Const) constants.push_back(id);
  }
  std::stable_sort(params.begin(), params.end(), [&](ir::ValueId a, ir::ValueId b) { return kernel[a].attr < kernel[b].attr; });
  std::stable_sort(constants.begin(), constants.end(), [&](ir::ValueId a, ir::ValueId b) {
    const ir::Op& x = kernel[a];
    const ir::Op& y = kernel[b];
    return std::tie(x.dtype, x.lanes, x.imm) < std::tie(y.dtype, y.lanes, y.imm);
  });
  ir::Rewriter rw(kernel);
  for (ir::ValueId id : params) rw.copy(id);
  for (ir::ValueId id : constants) rw.copy(id);
  rw.copy_range(0, static_cast<ir::ValueId>(kernel.size()));
  return rw.finish();
}

}  // namespace kiln::passes::detail
