// pipeline_rows(loop): software-pipelines the loop-th LOOP (program order)
// across its iterations, row by row. Its body must hold D >= 2 stage LOOPs:
// the LOOPs directly in it that share a constant count T, the count most of
// them share (the longer on a tie) (softmax: max, sum of exps, writing; the
// norms: statistics, writing; a split row's loose ends and tails stay ops of
// the stage around them), as coarsen leaves the rows of a work-item. Iteration t of the new loop runs
// stage s of row t - s for every stage at once, their LOOPs fused into one
// of T iterations:
//
//   prologue   t = 0 .. D-2       stages 0..t
//   steady     t = D-1 .. K-1     every stage (a LOOP of K - D + 1 iterations)
//   epilogue   t = K .. K+D-2     stages t-K+1 .. D-1
//
// Why: on a CPU, a row's writing loop is a run of streaming stores while its
// exponentials' loop is arithmetic with memory idle; fused with the next
// rows' loops, each iteration carries arithmetic and memory traffic at once.
//
// Each row still sees exactly its own ops in its own order, so the results
// are the original ones, provided rows only meet through storage that each
// iteration writes before it reads it, and no buffer a row writes is read by
// any row (both checked; such loops are refused). A STORAGE that more than
// one stage uses gets D copies, row r using copy r mod D, so that the rows
// in flight never share one; except a row's accumulators that stage s hands
// to the ops before stage s+1's LOOP, which each iteration reads (the later
// stages' ops first) before the next row writes them: one copy, at constant
// indices, stays in registers. The ops before each stage LOOP belong to that
// stage; those after the last to the last stage. A stage that uses a value
// another stage computed recomputes it where it is index arithmetic from the
// row counter, and otherwise reads it back from a slot per row in flight
// that the computing stage wrote (softmax's row maximum, which the writing
// stage's loose ends use).
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
using ir::Op;
using ir::OpKind;
using ir::ValueId;

constexpr std::int64_t kMaxPipelinedOps = 16384;
constexpr std::uint64_t kMaxReplicatedElements = std::uint64_t{1} << 20;

// What pipeline_rows does to one LOOP, or why it cannot.
struct Plan {
  LoopSite outer;
  std::vector<LoopSite> stages;       // the stage LOOPs, in order
  std::vector<std::vector<ValueId>> recompute;  // per stage: other stages' pure ops it needs, in order
  std::vector<std::vector<ValueId>> carried_in;  // per stage: other stages' values from memory it reads back
  // Copies of what crosses stages: a row's data lives from its first stage
  // to its last, so span + 1 rows share none (slot = row mod copies).
  struct Copies {
    std::uint64_t elements = 0;  // a copy's (a carried value: its lanes)
    std::int64_t copies = 0;
  };
  std::map<ValueId, Copies> replicated;  // STORAGE used inside several stages' LOOPs
  std::map<ValueId, Copies> carried;     // values carried from their stage to later ones
  std::set<std::int64_t> copy_counts;    // every `copies` above
  std::string why_not;                // "" when it fits
};

bool allowed_in_body(OpKind kind) {
  switch (kind) {
    case OpKind::Const: case OpKind::Load: case OpKind::Store: case OpKind::Prefetch: case OpKind::Loop:
    case OpKind::EndLoop: case OpKind::If: case OpKind::EndIf: case OpKind::Unary: case OpKind::Binary:
    case OpKind::Cast: case OpKind::Mad: case OpKind::Select: case OpKind::Broadcast: case OpKind::Insert:
    case OpKind::Extract:
      return true;
    default:
      return false;
  }
}

bool is_memory_access(const Op& op) {
  return op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::Prefetch;
}

Plan refuse(std::string why) {
  Plan plan;
  plan.why_not = std::move(why);
  return plan;
}

Plan plan_at(const Kernel& kernel, const std::vector<LoopSite>& sites, std::int64_t position) {
  if (position < 0 || position >= static_cast<std::int64_t>(sites.size()))
    return refuse("the kernel has no LOOP number " + std::to_string(position) + " (counting from 0)");
  Plan plan;
  plan.outer = sites[static_cast<std::size_t>(position)];
  const LoopSite& outer = plan.outer;
  if (!outer.count) return refuse("the loop count must be a constant");
  // The stage LOOPs: of the LOOPs directly in the body (not inside an IF),
  // those of the constant count most of them share, the longer on a tie (a
  // row's passes; the loose ends and tails of split rows stay with the stage
  // around them).
  std::vector<LoopSite> children;
  int depth = 0;
  for (ValueId id = outer.loop + 1; id < outer.end; ++id) {
    const Op& op = kernel[id];
    if (!allowed_in_body(op.kind)) return refuse("op %" + std::to_string(id) + " is of a kind the pipeline does not move");
    if (op.kind == OpKind::Loop && depth == 0)
      children.push_back(*std::find_if(sites.begin(), sites.end(), [&](const LoopSite& s) { return s.loop == id; }));
    if (op.kind == OpKind::Loop || op.kind == OpKind::If) ++depth;
    if (op.kind == OpKind::EndLoop || op.kind == OpKind::EndIf) --depth;
  }
  std::map<std::int64_t, int> loops_of_count;
  for (const LoopSite& child : children)
    if (child.count && *child.count > 0) ++loops_of_count[*child.count];
  std::pair<int, std::int64_t> best{0, 0};  // (loops, count): the most loops, then the longest
  for (const auto& [trips, loops] : loops_of_count) best = std::max(best, std::pair{loops, trips});
  for (const LoopSite& child : children)
    if (child.count == best.second && best.first > 0) plan.stages.push_back(child);
  const auto d = static_cast<std::int64_t>(plan.stages.size());
  if (d < 2) return refuse("the loop body holds no two LOOPs of one constant count (stages)");
  if (*outer.count < d) return refuse("the loop runs fewer iterations than it has stages");

  // Each op's stage: the ops before stage LOOP s (after s-1) and in it are
  // stage s; those after the last, the last stage's.
  std::vector<int> stage_of(kernel.size(), -1);
  int stage = 0;
  for (ValueId id = outer.loop + 1; id < outer.end; ++id) {
    stage_of[id] = stage;
    if (id == plan.stages[static_cast<std::size_t>(stage)].end && stage + 1 < d) ++stage;
  }

  // Memory: no buffer both written and read in the body (the rows' order of
  // accesses changes); storage written before it is read in each iteration.
  std::set<ValueId> loaded, stored;
  struct StorageUse {
    std::set<int> stages;    // the stages that access it
    std::set<int> past_pre;  // those that access it in or after their LOOP
  };
  std::map<ValueId, StorageUse> storage_use;
  std::set<ValueId> storage_seen;
  for (ValueId id = outer.loop + 1; id < outer.end; ++id) {
    const Op& op = kernel[id];
    if (!is_memory_access(op)) continue;
    const ValueId memory = op.src[0];
    const Op& declared = kernel[memory];
    if (declared.kind == OpKind::Param) {
      (op.kind == OpKind::Store ? stored : loaded).insert(memory);
      continue;
    }
    if (declared.scope() != ir::Scope::Register)
      return refuse("op %" + std::to_string(id) + " uses LOCAL storage, which the group's threads share");
    if (storage_seen.insert(memory).second && op.kind != OpKind::Store)
      return refuse("storage %" + std::to_string(memory) + " is read before it is written in an iteration (it would carry values from one row to the next)");
    const int stage_id = stage_of[id];
    const LoopSite& own = plan.stages[static_cast<std::size_t>(stage_id)];
    StorageUse& use = storage_use[memory];
    use.stages.insert(stage_id);
    if (id > own.loop) use.past_pre.insert(stage_id);  // in the stage's LOOP, or after the last one
  }
  for (ValueId memory : stored)
    if (loaded.count(memory)) return refuse("buffer %" + std::to_string(memory) + " is both read and written in the loop");
  for (const auto& [memory, use] : storage_use) {
    // One copy serves a row's accumulators that stage s leaves for stage s+1
    // to read before its LOOP: iterations run the stages' leading ops last
    // stage first, so row r's read precedes row r+1's first write.
    if (use.stages.size() < 2) continue;
    if (use.stages.size() == 2 && *use.stages.rbegin() == *use.stages.begin() + 1 &&
        !use.past_pre.count(*use.stages.rbegin()))
      continue;
    const std::uint64_t elements = kernel[memory].imm;
    const std::int64_t copies = *use.stages.rbegin() - *use.stages.begin() + 1;
    if (elements * static_cast<std::uint64_t>(copies) > kMaxReplicatedElements)
      return refuse("storage %" + std::to_string(memory) + " is too large to keep a copy per row in flight");
    plan.replicated[memory] = {elements, copies};
    plan.copy_counts.insert(copies);
  }

  // Values that cross stages: recomputed from the row counter where pure
  // (index arithmetic), else carried (a row's statistic: stored by its stage
  // in a slot per row in flight, read back by the later stage).
  std::vector<bool> from_memory(kernel.size(), false);  // a value of the body that depends on a load
  for (ValueId id = outer.loop + 1; id < outer.end; ++id) {
    from_memory[id] = kernel[id].has_result() && !is_pure_value(kernel[id]);
    for (ValueId v : kernel[id].operands())
      if (v > outer.loop && v < outer.end && from_memory[v]) from_memory[id] = true;
  }
  plan.recompute.resize(static_cast<std::size_t>(d));
  plan.carried_in.resize(static_cast<std::size_t>(d));
  for (int s = 0; s < d; ++s) {
    std::set<ValueId> needed, carried;
    std::vector<ValueId> pending;
    for (ValueId id = outer.loop + 1; id < outer.end; ++id) {
      if (stage_of[id] != s) continue;
      for (ValueId v : kernel[id].operands())
        if (v != outer.loop && v > outer.loop && v < outer.end && stage_of[v] != s) pending.push_back(v);
    }
    while (!pending.empty()) {
      const ValueId v = pending.back();
      pending.pop_back();
      if (needed.count(v) || carried.count(v)) continue;
      if (from_memory[v]) {
        if (kernel[v].dtype == ir::DType::Bool)
          return refuse("stage " + std::to_string(s) + " uses %" + std::to_string(v) +
                        ", a comparison an earlier stage makes from memory (only numbers are carried)");
        carried.insert(v);
        continue;
      }
      needed.insert(v);
      for (ValueId w : kernel[v].operands())
        if (w != outer.loop && w > outer.loop && w < outer.end) pending.push_back(w);
    }
    plan.recompute[static_cast<std::size_t>(s)].assign(needed.begin(), needed.end());
    plan.carried_in[static_cast<std::size_t>(s)].assign(carried.begin(), carried.end());
    for (ValueId v : carried) {
      Plan::Copies& slots = plan.carried[v];
      slots.elements = kernel[v].lanes;
      slots.copies = std::max<std::int64_t>(slots.copies, s - stage_of[v] + 1);
    }
  }
  for (const auto& [v, slots] : plan.carried) plan.copy_counts.insert(slots.copies);
  const std::int64_t body = static_cast<std::int64_t>(outer.end - outer.loop);
  if (body * (2 * d - 1) > kMaxPipelinedOps)
    return refuse("the pipelined loop would exceed " + std::to_string(kMaxPipelinedOps) + " ops");
  return plan;
}

// REGISTER bytes a thread holds once the plan's copies are made, and the
// device's limit for them.
std::string over_register_budget(const Kernel& kernel, const Plan& plan, const DeviceInfo& device) {
  std::uint64_t bytes = storage_bytes(kernel, ir::Scope::Register);
  for (const auto& [memory, copies] : plan.replicated)
    bytes += copies.elements * static_cast<std::uint64_t>(copies.copies - 1) * ir::dtype_bytes(kernel[memory].dtype);
  for (const auto& [value, copies] : plan.carried)
    bytes += copies.elements * static_cast<std::uint64_t>(copies.copies) * ir::dtype_bytes(kernel[value].dtype);
  const std::uint64_t limit = max_register_bytes(device);
  if (bytes <= limit) return "";
  return "a copy per row in flight needs " + std::to_string(bytes) + " REGISTER bytes a thread; the device allows " +
         std::to_string(limit);
}

// Emits the pipelined loop in place of plan.outer.
class Emitter {
 public:
  Emitter(ir::Rewriter& rw, const Plan& plan) : rw_(rw), plan_(plan), b_(rw.out()) {}

  void emit() {
    const auto d = static_cast<std::int64_t>(plan_.stages.size());
    // A slot per row in flight for each carried value, declared in front of the loop.
    for (const auto& [v, slots] : plan_.carried)
      carry_[v] = b_.storage(ir::Scope::Register, rw_.old()[v].dtype, slots.elements * static_cast<std::uint64_t>(slots.copies));
    const std::int64_t k = *plan_.outer.count;
    for (std::int64_t t = 0; t + 1 < d; ++t) iteration(stage_range(0, t + 1), [&](std::int64_t s) { return b_.constant_i64(t - s); });
    const ir::Value steady = b_.loop(k - d + 1);
    iteration(stage_range(0, d), [&](std::int64_t s) { return s == d - 1 ? steady : b_.add(steady, b_.constant_i64(d - 1 - s)); });
    b_.end_loop(steady);
    for (std::int64_t t = k; t + 1 < k + d; ++t)
      iteration(stage_range(t - k + 1, d), [&](std::int64_t s) { return b_.constant_i64(t - s); });
  }

 private:
  // Stages first .. end - 1.
  static std::vector<std::int64_t> stage_range(std::int64_t first, std::int64_t end) {
    std::vector<std::int64_t> stages;
    for (std::int64_t s = first; s < end; ++s) stages.push_back(s);
    return stages;
  }

  // One iteration t: each active stage's ops before its LOOP, the fused
  // LOOP, then (when the last stage is active) the ops after the last LOOP.
  template <class RowOf>
  void iteration(const std::vector<std::int64_t>& active, RowOf&& row_of) {
    const auto d = static_cast<std::int64_t>(plan_.stages.size());
    const Kernel& old = rw_.old();
    std::map<std::int64_t, std::vector<ValueId>> overrides;
    Slots slots;
    // The last stage (the oldest row) first: see the one-copy rule in plan_at.
    for (auto it = active.rbegin(); it != active.rend(); ++it) {
      const std::int64_t s = *it;
      auto& ov = overrides[s];
      ov.assign(old.size(), ir::kNoValue);
      const ir::Value row = row_of(s);
      ov[plan_.outer.loop] = row.id;
      for (std::int64_t copies : plan_.copy_counts) slots[{s, copies}] = b_.mod(row, b_.constant_i64(copies));
      for (ValueId v : plan_.carried_in[static_cast<std::size_t>(s)])
        ov[v] = b_.load(carry_.at(v), offset(slots, s, plan_.carried.at(v)), old[v].lanes).id;
      for (ValueId v : plan_.recompute[static_cast<std::size_t>(s)]) clone(v, v + 1, s, ov, slots);
      const ValueId first = s == 0 ? plan_.outer.loop + 1 : plan_.stages[static_cast<std::size_t>(s) - 1].end + 1;
      clone(first, plan_.stages[static_cast<std::size_t>(s)].loop, s, ov, slots);
    }
    const ir::Value fused = b_.loop(*plan_.stages.front().count);
    for (auto it = active.rbegin(); it != active.rend(); ++it) {
      const std::int64_t s = *it;
      const LoopSite& stage = plan_.stages[static_cast<std::size_t>(s)];
      overrides[s][stage.loop] = fused.id;
      clone(stage.loop + 1, stage.end, s, overrides[s], slots);
    }
    b_.end_loop(fused);
    if (active.back() == d - 1) clone(plan_.stages.back().end + 1, plan_.outer.end, d - 1, overrides[d - 1], slots);
  }

  // Per (stage, copies): the stage's row mod copies.
  using Slots = std::map<std::pair<std::int64_t, std::int64_t>, ir::Value>;

  // Where the stage's row's copy starts.
  ir::Value offset(const Slots& slots, std::int64_t stage, const Plan::Copies& copies) {
    return b_.mul(slots.at({stage, copies.copies}), b_.constant_i64(static_cast<std::int64_t>(copies.elements)));
  }

  // clone_ops, with each access to a replicated STORAGE moved to its row's
  // copy, and each carried value stored to its row's slot.
  void clone(ValueId first, ValueId last, std::int64_t stage, std::vector<ValueId>& ov, const Slots& slots) {
    const Kernel& old = rw_.old();
    auto mapped = [&](ValueId v) { return ov[v] != ir::kNoValue ? ov[v] : rw_.map(v).id; };
    for (ValueId id = first; id < last; ++id) {
      Op op = old[id];
      std::optional<ir::Value> index;
      if (is_memory_access(op))
        if (const auto copy = plan_.replicated.find(op.src[0]); copy != plan_.replicated.end())
          index = b_.add(ir::Value{mapped(op.src[1])}, offset(slots, stage, copy->second));
      for (ValueId& v : op.operands()) v = mapped(v);
      if (index) op.src[1] = index->id;
      ov[id] = b_.append(op).id;
      if (const auto carry = carry_.find(id); carry != carry_.end())
        b_.store(carry->second, offset(slots, stage, plan_.carried.at(id)), ir::Value{ov[id]});
    }
  }

  ir::Rewriter& rw_;
  const Plan& plan_;
  ir::Builder& b_;
  std::map<ValueId, ir::Value> carry_;  // carried value -> its slots
};

class PipelineRows final : public Optimization {
 public:
  std::string_view name() const override { return "pipeline_rows"; }
  std::string_view description() const override {
    return "run a LOOP's stage LOOPs (a row's reductions and writing) for D consecutive rows at once, fused";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    // A CPU schedule: on a device with LOCAL threads a row is the group's.
    if (!is_valid(kernel) || device.max_local_threads > 1 || has_local_index(kernel)) return steps;
    const std::vector<LoopSite> sites = loop_sites(kernel);
    for (std::size_t position = 0; position < sites.size(); ++position)
      if (const Plan plan = plan_at(kernel, sites, static_cast<std::int64_t>(position));
          plan.why_not.empty() && over_register_budget(kernel, plan, device).empty())
        steps.push_back(make_step(name(), {{"loop", static_cast<std::int64_t>(position)}}));
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"loop"}));
    if (has_local_index(kernel)) return step_error(step, "the kernel has LOCAL threads (a row is the group's, not a thread's)");
    const Plan plan = plan_at(kernel, loop_sites(kernel), params[0]);
    if (!plan.why_not.empty()) return step_error(step, plan.why_not);
    if (const std::string why = over_register_budget(kernel, plan, device); !why.empty()) return step_error(step, why);

    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      if (const auto copy = plan.replicated.find(id); copy != plan.replicated.end()) {
        const Op& op = kernel[id];
        rw.replace(id, rw.out().storage(op.scope(), op.dtype, copy->second.elements * static_cast<std::uint64_t>(copy->second.copies)));
        return true;
      }
      if (id != plan.outer.loop) return false;
      Emitter(rw, plan).emit();
      drop_range(rw, plan.outer.loop, plan.outer.end);
      return true;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& pipeline_rows() {
  static const PipelineRows instance;
  return instance;
}

}  // namespace kiln::passes::opts
