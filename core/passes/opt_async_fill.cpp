// async_fill(): LOCAL storage that a kernel fills with 16-byte vector LOADs
// of a read-only (GLOBAL) buffer, each stored as it is (the row of
// row_cache(local=1) after vectorize: `v = load x[i]; store cache[j], v`),
// is filled by asynchronous copies instead (COPY_ASYNC, cp.async on CUDA),
// all issued before the first of those loads:
//
//   LOOP k { if c { v = load x[i]; store s[j], v; f(v) } }
//     ->  LOOP k { if c { copy_async s[j] = load x[i] } }   the fill's slice
//         copy_commit; copy_wait 0; barrier
//         LOOP k { if c { v = load s[j]; f(v) } }             as before, from s
//
// The slice is every op the copies need (their indices, the conditions and
// trip counts of the IFs and LOOPs around them), cloned in order; it reads
// no memory (an index computed from a load refuses the step). The loads
// then read the storage, the stores go, and what the kernel computes is
// unchanged: the copies write the same values into the same elements,
// every thread's before its COPY_WAIT, every thread's visible to all after
// the BARRIER.
//
// Why: a thread's loads through registers go out a few at a time (each
// stored to LOCAL before the next, at the registers a group of 1024 threads
// has), so a row of 50257 halves in LOCAL keeps little of itself in flight;
// copies hold no registers, and a whole row is in flight at once. A
// hand-written softmax on the H200 (n = 50257 f16, the row in shared memory,
// two groups of 1024 threads an SM) ran at 0.886x of a float4 add filled by
// cp.async, against 0.78x with the row in registers (docs/passes.md, "GPU
// figures"). Only on a device that claims COPY_ASYNC for the buffer's dtype;
// LOCAL storage filled in any other way as well is left alone.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <kiln/sdk/wire.hpp>

#include <map>
#include <set>
#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::ValueId;

// A LOAD of a GLOBAL param whose value a STORE puts into LOCAL storage.
struct Fill {
  ValueId load = ir::kNoValue;
  ValueId store = ir::kNoValue;
};

struct Plan {
  std::vector<Fill> fills;
  ValueId first = ir::kNoValue;       // the top-level op where the region of fills begins
  ValueId end = 0;                    // one past its last op
  std::vector<bool> cloned;           // ops the fill's slice copies (markers included)
  std::string why_not;                // set when no plan
};

ValueId top_level(const ir::Blocks& blocks, ValueId id) {
  while (blocks.parent[id] != ir::kNoValue) id = blocks.parent[id];
  return id;
}

bool pure(const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Const: case OpKind::Binary: case OpKind::Unary: case OpKind::Cast: case OpKind::Mad:
    case OpKind::Select: case OpKind::Broadcast: case OpKind::Insert: case OpKind::Extract:
      return true;
    default:
      return false;
  }
}

Plan plan_fill(const Kernel& kernel, const DeviceInfo& device) {
  Plan plan;
  const ir::Blocks blocks = ir::analyze_blocks(kernel);
  // Candidates, and every other write of each LOCAL storage.
  std::map<ValueId, std::vector<Fill>> by_storage;
  std::set<ValueId> written_otherwise;
  for (ValueId id = 0; id < kernel.size(); ++id) {
    const ir::Op& op = kernel[id];
    if (op.kind != OpKind::Store && op.kind != OpKind::CopyAsync) continue;
    const ir::Op& memory = kernel[op.src[0]];
    if (memory.kind != OpKind::Storage || memory.scope() != ir::Scope::Local) continue;
    const ir::Op& value = kernel[op.src[2]];
    const bool fill = op.kind == OpKind::Store && value.kind == OpKind::Load && kernel[value.src[0]].kind == OpKind::Param &&
                      kernel[value.src[0]].param_kind() == ir::ParamKind::Global && value.dtype == op.dtype &&
                      value.lanes == op.lanes && op.lanes * ir::dtype_bytes(op.dtype) == sdk::kCopyAsyncBytes &&
                      blocks.parent[op.src[2]] == blocks.parent[id] &&
                      device.supports_op_kind(KILN_OP_COPY_ASYNC, static_cast<unsigned>(op.dtype)) &&
                      op.src[1] < op.src[2];  // the LOCAL index exists where the load is
    if (fill) by_storage[op.src[0]].push_back({op.src[2], id});
    else written_otherwise.insert(op.src[0]);
  }
  for (const auto& [storage, fills] : by_storage)
    if (!written_otherwise.contains(storage)) plan.fills.insert(plan.fills.end(), fills.begin(), fills.end());
  if (plan.fills.empty()) {
    plan.why_not = "no LOCAL storage is filled only by storing 16-byte vector loads of a read-only buffer (as row_cache "
                   "local=1 and vectorize leave a row) where the device claims copy_async";
    return plan;
  }
  plan.first = kernel.size();
  for (const Fill& f : plan.fills) {
    const ValueId top = top_level(blocks, f.load);
    plan.first = std::min(plan.first, top);
    const ValueId last = kernel[top].kind == OpKind::Loop || kernel[top].kind == OpKind::If ? blocks.end[top] : f.store;
    plan.end = std::max(plan.end, last + 1);
  }
  // Nothing reads a filled storage before the copies go out.
  for (ValueId id = 0; id < plan.first; ++id)
    if (kernel[id].kind == OpKind::Load)
      for (const Fill& f : plan.fills)
        if (kernel[id].src[0] == kernel[f.store].src[0]) {
          plan.why_not = "op " + std::to_string(id) + " reads the storage before it is filled";
          plan.fills.clear();
          return plan;
        }
  // The slice: indices, and the controllers of the blocks around each fill
  // and each cloned op, transitively, within [first, end).
  plan.cloned.assign(kernel.size(), false);
  std::vector<ValueId> work;
  const auto need = [&](ValueId v) {
    if (v >= plan.first && v < plan.end && !plan.cloned[v]) {
      plan.cloned[v] = true;
      work.push_back(v);
    }
  };
  for (const Fill& f : plan.fills) {
    plan.cloned[f.store] = true;
    work.push_back(f.store);
  }
  while (!work.empty()) {
    const ValueId id = work.back();
    work.pop_back();
    const ir::Op& op = kernel[id];
    for (ValueId p = blocks.parent[id]; p != ir::kNoValue; p = blocks.parent[p]) need(p);
    if (op.kind == OpKind::Loop || op.kind == OpKind::If) {
      need(op.src[0]);
      plan.cloned[blocks.end[id]] = true;
      continue;
    }
    if (op.kind == OpKind::Store) {  // a fill: its indices
      need(op.src[1]);
      need(kernel[op.src[2]].src[1]);
      continue;
    }
    if (!pure(op)) {
      plan.why_not = "the copies' indices or conditions need op " + std::to_string(id) + " (" +
                     std::string(sdk::op_kind_name(static_cast<unsigned>(op.kind))) + "), which is not pure arithmetic";
      plan.fills.clear();
      return plan;
    }
    for (ValueId v : op.operands()) need(v);
  }
  for (const Fill& f : plan.fills)
    for (const ValueId memory : {kernel[f.store].src[0], kernel[f.load].src[0]})
      if (memory >= plan.first) {
        plan.why_not = "the memory op " + std::to_string(memory) + " comes after the first fill";
        plan.fills.clear();
        return plan;
      }
  return plan;
}

class AsyncFill final : public Optimization {
 public:
  std::string_view name() const override { return "async_fill"; }
  std::string_view description() const override {
    return "LOCAL storage filled by storing 16-byte loads of a read-only buffer is filled by asynchronous copies, all "
           "issued before the first of those loads";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    if (!is_valid(kernel) || plan_fill(kernel, device).fills.empty()) return {};
    return {make_step(name(), {})};
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY(step_params(step, {}));
    const Plan plan = plan_fill(kernel, device);
    if (plan.fills.empty()) return step_error(step, plan.why_not);
    std::map<ValueId, ValueId> fill_of_store, fill_of_load;
    for (const Fill& f : plan.fills) {
      fill_of_store[f.store] = f.load;
      fill_of_load[f.load] = f.store;
    }
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      ir::Builder& b = rw.out();
      if (id == plan.first) emit_fill(kernel, plan, rw);
      if (fill_of_store.contains(id)) {
        rw.drop(id);
        return true;
      }
      if (const auto it = fill_of_load.find(id); it != fill_of_load.end()) {
        const ir::Op& store = kernel[it->second];
        rw.replace(id, b.load(rw.map(store.src[0]), rw.map(store.src[1]), kernel[id].lanes));
        return true;
      }
      return false;
    });
    return checked_output(step, std::move(out));
  }

 private:
  // The slice, in order, with a COPY_ASYNC for each fill; then the commit,
  // the wait and a barrier.
  static void emit_fill(const Kernel& kernel, const Plan& plan, ir::Rewriter& rw) {
    ir::Builder& b = rw.out();
    std::map<ValueId, ir::Value> clone;
    const auto map = [&](ValueId v) {
      const auto it = clone.find(v);
      return it != clone.end() ? it->second : rw.map(v);
    };
    for (ValueId id = plan.first; id < plan.end; ++id) {
      if (!plan.cloned[id]) continue;
      const ir::Op& op = kernel[id];
      if (op.kind == OpKind::Store) {
        const ir::Op& load = kernel[op.src[2]];
        const ir::Value value = b.load(map(load.src[0]), map(load.src[1]), load.lanes);
        b.copy_async(map(op.src[0]), map(op.src[1]), value);
        continue;
      }
      ir::Op copy = op;
      for (ValueId& src : copy.src)
        if (src != ir::kNoValue) src = map(src).id;
      clone[id] = b.append(copy);
    }
    b.copy_commit();
    b.copy_wait(0);
    if (has_local_index(kernel)) b.barrier();  // one thread per group: it reads only what it copied
  }
};

}  // namespace

const Optimization& async_fill() {
  static const AsyncFill instance;
  return instance;
}

}  // namespace kiln::passes::opts
