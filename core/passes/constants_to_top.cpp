// Constants to the top: every CONST moves to the start of the kernel, once
// per distinct (dtype, bits). Constants are then defined before every use
// and outside every loop (no loop re-materializes them), and equal
// constants are one value, which CSE and pattern matching rely on.
#include "always_on.hpp"
#include "kiln/ir/rewriter.hpp"

#include <map>
#include <tuple>

namespace kiln::passes::detail {

Kernel constants_to_top(const Kernel& kernel, const DeviceInfo&) {
  ir::Rewriter rw(kernel);
  std::map<std::tuple<ir::DType, std::uint8_t, std::uint64_t>, ir::Value> emitted;
  for (ir::ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind != ir::OpKind::Const) continue;
    const auto key = std::make_tuple(op.dtype, op.lanes, op.imm);
    auto found = emitted.find(key);
    if (found == emitted.end()) found = emitted.emplace(key, rw.copy(id)).first;
    rw.replace(id, found->second);
  }
  rw.copy_range(0, static_cast<ir::ValueId>(kernel.size()));
  return rw.finish();
}

}  // namespace kiln::passes::detail
