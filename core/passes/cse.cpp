// Common subexpression elimination: an op equal to an earlier one that is
// still in scope (same kind, type, code, attr, operands and immediate) is
// replaced by it.
//
// Scopes: a value defined inside a LOOP/IF is visible only until its END,
// so entries made in a block are forgotten there. Loads: a load matches an
// earlier load only while its memory is unchanged in between, tracked by a
// per-memory epoch that moves on every STORE to that memory (wherever it
// is nested), on every BARRIER (all memories: other threads' writes become
// visible), and on entry to a LOOP for what the loop body writes (a later
// iteration sees those writes before the load). Two GLOBAL_MUT params may
// be bound to one buffer, so a store to one moves the epoch of all of them
// (GLOBAL params are read-only for the whole launch: nothing moves theirs).
#include "always_on.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"

#include <array>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::passes::detail {

using ir::OpKind;
using ir::ValueId;

namespace {

using Key = std::array<std::uint64_t, 6>;

struct KeyHash {
  std::size_t operator()(const Key& key) const {
    std::uint64_t h = 0x9e3779b97f4a7c15u;
    for (const std::uint64_t word : key) h = (h ^ word) * 0xff51afd7ed558ccdu + (h >> 29);
    return static_cast<std::size_t>(h);
  }
};

bool eligible(OpKind kind) {
  switch (kind) {
    case OpKind::Const: case OpKind::Load: case OpKind::Unary: case OpKind::Binary: case OpKind::Cast:
    case OpKind::Mad: case OpKind::Select: case OpKind::Broadcast: case OpKind::Insert: case OpKind::Extract:
      return true;
    default:
      return false;
  }
}

class Table {
 public:
  std::optional<ValueId> find(const Key& key) const {
    const auto it = entries_.find(key);
    return it == entries_.end() ? std::nullopt : std::optional(it->second);
  }
  void add(const Key& key, ValueId value) {
    if (entries_.emplace(key, value).second && !scopes_.empty()) scopes_.back().push_back(key);
  }
  void open() { scopes_.emplace_back(); }
  void close() {
    if (scopes_.empty()) return;
    for (const Key& key : scopes_.back()) entries_.erase(key);
    scopes_.pop_back();
  }

 private:
  std::unordered_map<Key, ValueId, KeyHash> entries_;
  std::vector<std::vector<Key>> scopes_;
};

}  // namespace

Kernel eliminate_common_subexpressions(const Kernel& kernel, const DeviceInfo&) {
  const std::size_t n = kernel.size();
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  std::vector<std::uint64_t> epoch(n, 0);  // per memory op (PARAM / STORAGE)
  std::vector<ValueId> memories;
  for (ValueId id = 0; id < n; ++id)
    if (kernel[id].is_memory()) memories.push_back(id);
  auto bump = [&](ValueId memory) {
    if (memory >= n) return;
    const bool buffer = kernel[memory].kind == OpKind::Param;
    for (ValueId m : memories) {
      const bool mutable_buffer = kernel[m].kind == OpKind::Param && kernel[m].param_kind() == ir::ParamKind::GlobalMut;
      if (m == memory || (buffer && mutable_buffer)) ++epoch[m];
    }
  };

  Table table;
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
    const ir::Op& op = kernel[id];
    switch (op.kind) {
      case OpKind::Loop:
        for (ValueId inner = id + 1; inner < n && blocks.encloses(id, inner); ++inner) {
          if (kernel[inner].kind == OpKind::Store || kernel[inner].kind == OpKind::CopyAsync) bump(kernel[inner].src[0]);
          if (kernel[inner].kind == OpKind::Wgmma) bump(kernel[inner].src[2]);
          // A copy_wait writes whatever copies it covers.
          if (kernel[inner].kind == OpKind::Barrier || kernel[inner].kind == OpKind::CopyWait ||
              kernel[inner].kind == OpKind::WgmmaWait)
            for (ValueId memory : memories) bump(memory);
        }
        rw.copy(id);
        table.open();
        return true;
      case OpKind::If:
        rw.copy(id);
        table.open();
        return true;
      case OpKind::EndLoop: case OpKind::EndIf:
        table.close();
        return false;
      case OpKind::Store: case OpKind::CopyAsync:
        bump(op.src[0]);
        return false;
      case OpKind::Wgmma:
        bump(op.src[2]);
        return false;
      case OpKind::Barrier: case OpKind::CopyWait: case OpKind::WgmmaWait:
        for (ValueId memory : memories) bump(memory);
        return false;
      default:
        break;
    }
    if (!eligible(op.kind)) return false;
    Key key = {static_cast<std::uint64_t>(op.kind) | std::uint64_t{static_cast<std::uint8_t>(op.dtype)} << 8 |
                   std::uint64_t{op.lanes} << 16 | std::uint64_t{op.code} << 24 | std::uint64_t{op.attr} << 32,
               op.imm, 0, 0, 0, 0};
    for (std::size_t i = 0; i < op.operand_count(); ++i) {
      const ir::Value v = rw.map(op.src[i]);
      if (!v.valid()) return false;
      key[2 + i] = v.id;
    }
    if (op.kind == OpKind::Load) key[5] = op.src[0] < n ? epoch[op.src[0]] : 0;
    if (const auto earlier = table.find(key)) {
      rw.replace(id, ir::Value{*earlier});
      return true;
    }
    table.add(key, rw.copy(id).id);
    return true;
  });
}

}  // namespace kiln::passes::detail
