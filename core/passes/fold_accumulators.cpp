// Accumulator folding: store-to-load forwarding on REGISTER storage. A load
// from register storage at a constant index, after a store of the same
// width to that element in the same straight-line stretch of code, is the
// stored value. Unrolled and length-1 reductions then become plain
// arithmetic, and DCE removes accumulators nobody reads any more.
//
//   store f32 %acc[%0], %x         ->   store f32 %acc[%0], %x
//   %5 = load f32 %acc[%0]               (uses of %5 use %x)
//
// And the other way round, dead-store elimination: a store to a register
// element that a later store of the same width overwrites, with no load of
// that storage in between, is dropped.
//
//   store f32 %acc[%0], %x         ->   store f32 %acc[%0], %y
//   store f32 %acc[%0], %y
//
// Registers are private to a thread, so only this thread's stores matter.
// Any LOOP/IF boundary forgets what is known (a loop iterates, an if may
// not run); a store at a non-constant index forgets that whole storage. A
// WGMMA reads its accumulator's storage (and, code 1, A's fragments in it)
// and writes the accumulator by its WGMMA_WAIT: it and every wait forget
// the WGMMAs' storages (a one-step kernel's loop, removed, would otherwise
// forward the accumulators' zeros past the MMAs to C).
#include "always_on.hpp"
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"

#include <map>
#include <tuple>
#include <vector>

namespace kiln::passes::detail {

using ir::OpKind;
using ir::ValueId;

namespace {

struct Stored {
  std::uint8_t lanes = 1;
  ir::Value value;
};

bool is_register(const ir::Kernel& kernel, ValueId memory) {
  return memory < kernel.size() && kernel[memory].kind == OpKind::Storage && kernel[memory].scope() == ir::Scope::Register;
}

// The REGISTER storages WGMMAs accumulate into.
std::vector<ValueId> wgmma_accumulators(const ir::Kernel& kernel) {
  std::vector<ValueId> out;
  for (ValueId id = 0; id < kernel.size(); ++id)
    if (kernel[id].kind == OpKind::Wgmma && is_register(kernel, kernel[id].src[2])) out.push_back(kernel[id].src[2]);
  return out;
}

// Stores to register elements that a later store to the same element (same
// width, same straight-line stretch) overwrites before any load of that
// storage reads it.
std::vector<bool> overwritten_stores(const ir::Kernel& kernel) {
  std::vector<bool> dead(kernel.size(), false);
  std::map<std::pair<ValueId, std::int64_t>, ValueId> pending;  // (storage, element) -> last store
  auto forget_storage = [&](ValueId memory) {
    for (auto it = pending.lower_bound({memory, INT64_MIN}); it != pending.end() && it->first.first == memory;)
      it = pending.erase(it);
  };
  for (ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    switch (op.kind) {
      case OpKind::Loop: case OpKind::EndLoop: case OpKind::If: case OpKind::EndIf:
        pending.clear();
        break;
      case OpKind::Wgmma:  // reads the storage: the stores before it are live
        forget_storage(op.src[2]);
        break;
      case OpKind::Load:
        if (is_register(kernel, op.src[0])) forget_storage(op.src[0]);
        break;
      case OpKind::Store: {
        if (!is_register(kernel, op.src[0])) break;
        const auto index = ir::constant_int(kernel, op.src[1]);
        if (!index) {
          forget_storage(op.src[0]);
          break;
        }
        const auto key = std::make_pair(op.src[0], *index);
        if (const auto it = pending.find(key); it != pending.end() && kernel[it->second].lanes == op.lanes) dead[it->second] = true;
        // Wider or narrower stores that overlap this one are simply forgotten.
        for (auto it = pending.lower_bound({op.src[0], INT64_MIN}); it != pending.end() && it->first.first == op.src[0];) {
          const std::int64_t start = it->first.second;
          const bool overlaps = start < *index + op.lanes && *index < start + kernel[it->second].lanes;
          it = overlaps ? pending.erase(it) : std::next(it);
        }
        pending[key] = id;
        break;
      }
      default:
        break;
    }
  }
  return dead;
}

}  // namespace

Kernel fold_accumulators(const Kernel& kernel, const DeviceInfo&) {
  const std::vector<bool> dead_stores = overwritten_stores(kernel);
  const std::vector<ValueId> accumulators = wgmma_accumulators(kernel);
  // (storage, first element) -> the value stored there last.
  std::map<std::pair<ValueId, std::int64_t>, Stored> known;
  auto forget_storage = [&](ValueId memory) {
    for (auto it = known.lower_bound({memory, INT64_MIN}); it != known.end() && it->first.first == memory;)
      it = known.erase(it);
  };
  auto forget_overlapping = [&](ValueId memory, std::int64_t first, std::int64_t lanes) {
    for (auto it = known.lower_bound({memory, INT64_MIN}); it != known.end() && it->first.first == memory;) {
      const std::int64_t start = it->first.second;
      const bool overlaps = start < first + lanes && first < start + it->second.lanes;
      it = overlaps ? known.erase(it) : std::next(it);
    }
  };
  return ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
    const ir::Op& op = kernel[id];
    switch (op.kind) {
      case OpKind::Loop: case OpKind::EndLoop: case OpKind::If: case OpKind::EndIf:
        known.clear();
        return false;
      case OpKind::Wgmma:  // writes its accumulator by its wait
        forget_storage(op.src[2]);
        return false;
      case OpKind::WgmmaWait:
        for (const ValueId memory : accumulators) forget_storage(memory);
        return false;
      case OpKind::Store: {
        if (!is_register(kernel, op.src[0])) return false;
        const auto index = ir::constant_int(kernel, op.src[1]);
        if (!index) {
          forget_storage(op.src[0]);
          return false;
        }
        forget_overlapping(op.src[0], *index, op.lanes);
        const ir::Value value = rw.map(op.src[2]);
        if (value.valid()) known[{op.src[0], *index}] = Stored{op.lanes, value};
        if (!dead_stores[id]) return false;
        rw.drop(id);  // overwritten before anything reads it; its value is still forwarded
        return true;
      }
      case OpKind::Load: {
        if (!is_register(kernel, op.src[0])) return false;
        const auto index = ir::constant_int(kernel, op.src[1]);
        if (!index) return false;
        const auto found = known.find({op.src[0], *index});
        if (found == known.end() || found->second.lanes != op.lanes) return false;
        rw.replace(id, found->second.value);
        return true;
      }
      default:
        return false;
    }
  });
}

}  // namespace kiln::passes::detail
