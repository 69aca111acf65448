// Dead code elimination (last in the pipeline): keeps what has an effect
// and what that needs, drops the rest.
//
// Live: stores to buffers; stores to LOCAL/REGISTER storage that some live
// load reads; barriers, when the kernel has LOCAL storage (without it a
// barrier orders nothing); PARAMs (their slots are the launch signature)
// and INDEX ops (they define the grid); a LOOP or IF whose body holds a
// live op (with its END marker); and every operand of a live op. A LOOP/IF
// whose body is empty is dead. Whether storage is read depends on which
// loads are live, so liveness is recomputed until that set stops growing.
#include "always_on.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"

#include <vector>

namespace kiln::passes::detail {

using ir::OpKind;
using ir::ValueId;

namespace {

bool is_storage(const Kernel& kernel, ValueId id) { return id < kernel.size() && kernel[id].kind == OpKind::Storage; }

std::vector<bool> live_ops(const Kernel& kernel, const ir::Blocks& blocks, const std::vector<bool>& storage_read,
                           bool has_local_storage) {
  const std::size_t n = kernel.size();
  std::vector<bool> live(n, false);
  auto mark = [&](ValueId id) {
    live[id] = true;
    for (ValueId v : kernel[id].operands())
      if (v < n) live[v] = true;
    // The blocks around a live op run it.
    for (ValueId p = blocks.parent[id]; p != ir::kNoValue; p = blocks.parent[p]) live[p] = true;
  };
  // Users follow their operands, so one backward walk sees every use first.
  for (ValueId id = static_cast<ValueId>(n); id-- > 0;) {
    const ir::Op& op = kernel[id];
    bool root = false;
    switch (op.kind) {
      case OpKind::Param: case OpKind::Index:
        root = true;
        break;
      case OpKind::Store: case OpKind::CopyAsync:
        root = !is_storage(kernel, op.src[0]) || storage_read[op.src[0]];
        break;
      case OpKind::CopyCommit: case OpKind::CopyWait: case OpKind::Wgmma: case OpKind::WgmmaFence:
      case OpKind::WgmmaCommit: case OpKind::WgmmaWait: case OpKind::Prefetch:
        root = true;
        break;
      case OpKind::Barrier:
        root = has_local_storage;
        break;
      case OpKind::EndLoop: case OpKind::EndIf:
        root = false;  // live with its block (below)
        break;
      default:
        break;
    }
    if (root || live[id]) mark(id);
  }
  for (ValueId id = 0; id < n; ++id) {
    const OpKind kind = kernel[id].kind;
    if ((kind == OpKind::Loop || kind == OpKind::If) && live[id] && blocks.end[id] != ir::kNoValue)
      live[blocks.end[id]] = true;
  }
  return live;
}

}  // namespace

Kernel eliminate_dead_code(const Kernel& kernel, const DeviceInfo&) {
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  const std::size_t n = kernel.size();
  bool has_local_storage = false;
  for (const ir::Op& op : kernel.ops)
    has_local_storage = has_local_storage || (op.kind == OpKind::Storage && op.scope() == ir::Scope::Local);

  std::vector<bool> storage_read(n, false);
  std::vector<bool> live;
  for (bool grew = true; grew;) {
    live = live_ops(kernel, blocks, storage_read, has_local_storage);
    grew = false;
    for (ValueId id = 0; id < n; ++id) {
      const ir::Op& op = kernel[id];
      const bool reads = op.kind == OpKind::Load || op.kind == OpKind::LoadMatrix;
      if (live[id] && reads && is_storage(kernel, op.src[0]) && !storage_read[op.src[0]]) {
        storage_read[op.src[0]] = true;
        grew = true;
      }
      // A WGMMA reads its LOCAL tiles and its accumulator.
      if (live[id] && op.kind == OpKind::Wgmma)
        for (ValueId m : {op.src[0], op.src[2]})
          if (is_storage(kernel, m) && !storage_read[m]) {
            storage_read[m] = true;
            grew = true;
          }
    }
  }
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
    if (live[id]) return false;
    rw.drop(id);
    return true;
  });
}

}  // namespace kiln::passes::detail
