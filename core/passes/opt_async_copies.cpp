// async_copies(): a 16-byte vector LOAD of a read-only GLOBAL param whose
// value a thread stores unchanged to LOCAL storage (row_cache's LOCAL row,
// once vectorized) becomes an asynchronous copy (COPY_ASYNC: cp.async on
// CUDA), and the thread's other uses of the value read it back from LOCAL
// memory. The copies of one straight run of code (no LOOP, IF or BARRIER
// inside it) go out together, with their loads and the integer arithmetic
// that indexes them, as early in the run as their operands allow (ahead of
// the row's loose ends, whose loads would otherwise be waited for first);
// one COPY_COMMIT and COPY_WAIT(0) go where the first of the values is
// used, and the uses read it from LOCAL memory.
//
// Why: a row kept in LOCAL memory was loaded into registers and stored from
// there, so the registers bounded the loads a thread had in flight (ptxas
// kept 32 registers for 12 blocks of 8 halves, a few in flight at a time),
// and loading them all first needs 64 at 512 threads. A copy takes no
// register: every block of a thread's row is in flight at once. On the H200
// at n = 50257 (m = 5342, 2026-12-05, the emitted kernels timed by hand
// beside an add at 4387 GB/s) softmax f16 went from 3440 to 3810 GB/s and
// layernorm f16 from 3306 to 3934 (docs/passes.md, async_copies).
//
// Legal: the moved ops are pure (integer and float arithmetic, conversions,
// vector lanes) or loads of read-only GLOBAL params, which no op of the
// launch writes; the LOCAL elements are written by the wait, which comes
// before anything else of the run, and the run has no barrier and no other
// access to that storage between the wait and the stores it replaces, so no
// other thread can tell. A kernel with asynchronous copies of its own is
// refused (a commit here would close their group).
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::ValueId;

// A load and the store to LOCAL storage of its value: the load's, or
// select(c, load, zeros) (cp.async's zero-filling form: nothing read where
// c is false).
struct Copy {
  ValueId load = ir::kNoValue;
  ValueId store = ir::kNoValue;
  ValueId value = ir::kNoValue;  // what the store stores
};

// One straight run of code: its copies, the ops that go out with them (the
// loads and the arithmetic their indices need), and where they go.
struct Run {
  ValueId start = ir::kNoValue;  // the run's first op
  ValueId early = ir::kNoValue;  // where the moved ops and the copies go
  ValueId late = ir::kNoValue;   // where the commit and wait go: the first use of a copied value
  // Copies that no op of their thread reads (stage_input's: other threads
  // read them after a barrier): the wait goes before this top-level
  // BARRIER instead of after the commit.
  ValueId wait_at = ir::kNoValue;
  std::vector<Copy> copies;
  std::set<ValueId> moved;
};

bool ends_run(OpKind kind) {
  switch (kind) {
    case OpKind::Loop: case OpKind::EndLoop: case OpKind::If: case OpKind::EndIf: case OpKind::Barrier:
      return true;
    default:
      return false;
  }
}

bool is_async(OpKind kind) {
  return kind == OpKind::CopyAsync || kind == OpKind::CopyCommit || kind == OpKind::CopyWait;
}

// A vector of zero bits (a BROADCAST of a CONST 0).
bool zero_vector(const Kernel& k, ValueId id) {
  const ir::Op& op = k[id];
  return op.kind == OpKind::Broadcast && k[op.src[0]].kind == OpKind::Const && k[op.src[0]].imm == 0;
}

// Ops that may run earlier in their run: no memory written, none read but
// read-only params.
bool movable(const Kernel& k, ValueId id) {
  const ir::Op& op = k[id];
  switch (op.kind) {
    case OpKind::Const: case OpKind::Index: case OpKind::Unary: case OpKind::Binary: case OpKind::Cast:
    case OpKind::Mad: case OpKind::Select: case OpKind::Broadcast: case OpKind::Insert: case OpKind::Extract:
      return true;
    case OpKind::Load:
      return read_only_load(k, op);
    default:
      return false;
  }
}

// Adds `id` and the ops from `from` on that it needs, through movable ops,
// to `moved`; false when `id` itself may not move. (An op it needs that may
// not move stays where it is, and the moved ops go after it.)
bool take_with_operands(const Kernel& k, ValueId id, ValueId from, std::set<ValueId>& moved) {
  if (!movable(k, id)) return false;
  std::vector<ValueId> stack{id};
  while (!stack.empty()) {
    const ValueId v = stack.back();
    stack.pop_back();
    if (v < from || !movable(k, v) || !moved.insert(v).second) continue;
    for (ValueId operand : k[v].operands())
      if (operand != ir::kNoValue) stack.push_back(operand);
  }
  return true;
}

// Where the wait of copies that their own thread never reads may go: the
// first BARRIER at the kernel's top level after the run, when the run lies
// in no LOOP (another iteration's copies would meet pending ones) and no op
// between its last store and that barrier touches the storages copied into.
// kNoValue otherwise (the wait then follows the commit). Before the barrier,
// every thread has waited for its own copies, so after it every thread sees
// them: what the stores gave.
ValueId deferred_wait(const Kernel& k, const ir::Blocks& blocks, ValueId start, ValueId last_store,
                      const std::set<ValueId>& storages) {
  ValueId top = start;
  while (blocks.parent[top] != ir::kNoValue) {
    top = blocks.parent[top];
    if (k[top].kind == OpKind::Loop) return ir::kNoValue;
  }
  for (ValueId id = last_store + 1; id < k.size(); ++id) {
    const ir::Op& op = k[id];
    if (op.kind == OpKind::Barrier && blocks.parent[id] == ir::kNoValue) return id;
    for (ValueId operand : op.operands())
      if (storages.count(operand) > 0) return ir::kNoValue;
  }
  return ir::kNoValue;
}

// The runs whose copies the step makes, for a device that copies `dtype`s.
std::vector<Run> find_runs(const Kernel& k, const DeviceInfo& device) {
  std::vector<Run> runs;
  const ir::Blocks blocks = ir::analyze_blocks(k);
  // The users of every op, and the run each op lies in (ops of one run
  // share a parent and are not split by an op that ends a run).
  std::vector<std::vector<ValueId>> users(k.size());
  std::vector<ValueId> run_of(k.size(), ir::kNoValue);
  std::map<ValueId, ValueId> open;  // parent -> the run being built there
  std::vector<ValueId> run_start;   // by run: its first op
  for (ValueId id = 0; id < k.size(); ++id) {
    for (ValueId operand : k[id].operands())
      if (operand != ir::kNoValue && operand < k.size()) users[operand].push_back(id);
    const ValueId parent = blocks.parent[id];
    if (ends_run(k[id].kind)) {
      open.erase(parent);
      open.erase(id);  // a LOOP/IF's own body starts a run of its own
      continue;
    }
    auto [it, fresh] = open.try_emplace(parent, static_cast<ValueId>(run_start.size()));
    if (fresh) run_start.push_back(id);
    run_of[id] = it->second;
  }
  std::map<ValueId, Run> by_run;
  for (ValueId id = 0; id < k.size(); ++id) {
    const ir::Op& store = k[id];
    if (store.kind != OpKind::Store || !is_local_storage(k, store.src[0])) continue;
    const ValueId value = store.src[2];
    ValueId load = value;
    if (value < id && k[value].kind == OpKind::Select && k[k[value].src[0]].lanes == 1 && zero_vector(k, k[value].src[2]))
      load = k[value].src[1];
    if (load >= id || !read_only_load(k, k[load])) continue;
    const ir::Op& l = k[load];
    if (l.dtype != store.dtype || l.lanes != store.lanes || ir::dtype_bytes(l.dtype) * l.lanes != 16) continue;
    if (!device.supports_op_kind(KILN_OP_COPY_ASYNC, static_cast<unsigned>(l.dtype))) continue;
    if (run_of[load] == ir::kNoValue || run_of[load] != run_of[id]) continue;
    const auto in_run = [&](ValueId v) {
      return std::all_of(users[v].begin(), users[v].end(), [&](ValueId u) { return run_of[u] == run_of[id]; });
    };
    if (!in_run(load) || !in_run(value)) continue;
    Run& run = by_run[run_of[id]];
    run.start = run_start[run_of[id]];
    run.copies.push_back({load, id, value});
  }
  for (auto& entry : by_run) {
    Run& run = entry.second;
    std::sort(run.copies.begin(), run.copies.end(), [](const Copy& a, const Copy& b) { return a.value < b.value; });
    // A store's index that cannot move (it read memory): the run is left as it is.
    bool movable_indices = true;
    for (const Copy& c : run.copies) {
      take_with_operands(k, c.value, run.start, run.moved);
      if (!take_with_operands(k, k[c.store].src[1], run.start, run.moved)) movable_indices = false;
    }
    if (!movable_indices) continue;
    // The moved ops go right after the last op of the run they need.
    run.early = run.start;
    for (ValueId moved : run.moved)
      for (ValueId operand : k[moved].operands())
        if (operand != ir::kNoValue && operand >= run.start && run.moved.count(operand) == 0)
          run.early = std::max(run.early, operand + 1);
    for (const Copy& c : run.copies) run.early = std::max(run.early, k[c.store].src[0] + 1);  // the storage
    // (Stores need not come in their loads' order.)
    ValueId last_store = 0;
    for (const Copy& c : run.copies) last_store = std::max(last_store, c.store);
    run.late = last_store;
    for (const Copy& c : run.copies)
      for (ValueId user : users[c.value])
        if (user != c.store) run.late = std::min(run.late, user);
    // An op the moved ones need that comes after the first use: left as it is.
    if (run.early > run.late) continue;
    // From where the copies go to the last store, the storages copied into
    // are touched by nothing but these stores.
    std::set<ValueId> storages, stores;
    for (const Copy& c : run.copies) {
      storages.insert(k[c.store].src[0]);
      stores.insert(c.store);
    }
    bool clean = true;
    for (ValueId id = run.early; id <= last_store && clean; ++id) {
      const ir::Op& op = k[id];
      if (stores.count(id) > 0) continue;
      if ((op.kind == OpKind::Load || op.kind == OpKind::Store) && storages.count(op.src[0]) > 0) clean = false;
    }
    if (!clean) continue;
    const bool read_here = std::any_of(run.copies.begin(), run.copies.end(), [&](const Copy& c) {
      return std::any_of(users[c.value].begin(), users[c.value].end(), [&](ValueId u) { return u != c.store; });
    });
    if (!read_here) run.wait_at = deferred_wait(k, blocks, run.start, last_store, storages);
    runs.push_back(std::move(run));
  }
  return runs;
}

bool has_async_ops(const Kernel& k) {
  return std::any_of(k.ops.begin(), k.ops.end(), [](const ir::Op& op) { return is_async(op.kind); });
}

class AsyncCopies final : public Optimization {
 public:
  std::string_view name() const override { return "async_copies"; }
  std::string_view description() const override {
    return "16-byte loads stored unchanged to LOCAL memory become asynchronous copies, a run's copies issued together";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    if (!is_valid(kernel) || has_async_ops(kernel) || find_runs(kernel, device).empty()) return {};
    return {make_step(name(), {})};
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY(step_params(step, {}));
    if (has_async_ops(kernel)) return step_error(step, "the kernel has asynchronous copies of its own");
    const std::vector<Run> runs = find_runs(kernel, device);
    if (runs.empty())
      return step_error(step, "no 16-byte load of a read-only param stored unchanged to LOCAL memory, or the device "
                              "has no asynchronous copies (copy_async) of its dtype");
    std::map<ValueId, const Run*> early, late;
    std::set<ValueId> dropped, waits;
    for (const Run& run : runs) {
      early[run.early] = &run;
      late[run.late] = &run;
      for (const Copy& c : run.copies) dropped.insert(c.store);
      if (run.wait_at != ir::kNoValue) waits.insert(run.wait_at);
    }
    // The wait may fall on a store that goes (a run whose loads have no
    // other use waits where its last store was): emit before dropping.
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      ir::Builder& b = rw.out();
      if (const auto found = early.find(id); found != early.end()) {
        const Run& run = *found->second;
        for (ValueId moved : run.moved)
          if (!rw.handled(moved)) rw.copy(moved);
        for (const Copy& c : run.copies) {
          const ir::Op& store = kernel[c.store];
          b.copy_async(rw.map(store.src[0]), rw.map(store.src[1]), rw.map(c.value));
        }
      }
      if (waits.count(id) > 0) b.copy_wait(0);
      if (const auto found = late.find(id); found != late.end()) {
        const Run& run = *found->second;
        b.copy_commit();
        if (run.wait_at == ir::kNoValue) {
          b.copy_wait(0);
          for (const Copy& c : run.copies) {
            const ir::Op& store = kernel[c.store];
            rw.replace(c.value, b.load(rw.map(store.src[0]), rw.map(store.src[1]), store.lanes));
          }
        }
      }
      if (dropped.count(id) > 0)
        rw.drop(id);
      else if (!rw.handled(id))
        rw.copy(id);
      return true;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& async_copies() {
  static const AsyncCopies instance;
  return instance;
}

}  // namespace kiln::passes::opts
