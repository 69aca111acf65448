// online_softmax(loop): the loop-th LOOP, a running maximum M = max(M, v),
// and the next LOOP of the same block and trip count, a sum
// S = S + exp(w - m) of the same values (w equivalent to v, m the maximum
// read back between the loops, S set to zero between them), become one
// loop that keeps both with the sum rescaled whenever the maximum grows:
//
//   mo = M;  mn = max(mo, v);  M = mn
//   S  = mn > -inf ? S * exp(mo - mn) + exp(v - mn) : S
//
// so a row is read once for both statistics instead of twice; with the
// writing loop, softmax makes two passes over memory, whatever the row's
// length (row_cache, which needs the row, or a thread's share of it, to
// fit in registers, makes one). The guard keeps S at 0 while every value
// seen is -inf (masked positions), where the unguarded form gives NaN.
// Rounding differs from the two-loop form (a few ulps per rescaling);
// tests accept kernels::tolerance x 4.
//
// The fused loop is no longer a plain accumulation: tiled_reduce and
// lane_reduce refuse it (splitting it needs a combine of (max, sum) pairs,
// the seam for a subgroup reduction op).
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"
#include "loop_equivalence.hpp"
#include "opt_support.hpp"
#include "opt_tiled_reduce_match.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <algorithm>
#include <limits>

namespace kiln::passes::opts {

namespace {

using ir::BinaryOp;
using ir::Kernel;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

constexpr std::string_view kName = "online_softmax";

struct Fusion {
  ValueId max_loop = ir::kNoValue, sum_loop = ir::kNoValue;
  reduce::Accumulator max_acc, sum_acc;
  ValueId max_value = ir::kNoValue;  // v in the max loop
  ValueId sum_init = ir::kNoValue;   // `store S[c], 0` between the loops
};

// The single accumulator of `loop` with op `op`, read once and stored once
// directly in the loop body, or why not.
std::variant<reduce::Accumulator, std::string> single_accumulator(const Kernel& kernel, const ir::Blocks& blocks,
                                                                  ValueId loop, BinaryOp op, const char* what) {
  auto matched = reduce::match_loop(kernel, blocks, loop);
  if (std::holds_alternative<std::string>(matched)) return std::get<std::string>(matched);
  const reduce::SplittableLoop& found = std::get<reduce::SplittableLoop>(matched);
  if (found.accumulators.size() != 1 || found.accumulators[0].op != op || !ir::is_float(found.accumulators[0].dtype))
    return std::string("the ") + what + " loop does not keep exactly one float " +
           (op == BinaryOp::Max ? "maximum" : "sum");
  const reduce::Accumulator& a = found.accumulators[0];
  if (a.loads.size() != 1 || a.stores.size() != 1 || blocks.parent[a.loads[0]] != loop || blocks.parent[a.stores[0]] != loop)
    return std::string("the ") + what + " loop's accumulator is not read and written once, directly in the loop";
  const ir::Op& value = kernel[kernel[a.stores[0]].src[2]];
  if (value.kind != OpKind::Binary || value.binary() != op || (value.src[0] != a.loads[0] && value.src[1] != a.loads[0]))
    return std::string("the ") + what + " loop's update is not `acc OP value`";
  return a;
}

bool same_element(const Kernel& kernel, ValueId a, ValueId b) {
  if (a == b) return true;
  const auto ca = ir::constant_int(kernel, a), cb = ir::constant_int(kernel, b);
  return ca && cb && *ca == *cb;
}

std::variant<Fusion, std::string> match(const Kernel& kernel, const ir::Blocks& blocks, ValueId max_loop) {
  Fusion f;
  f.max_loop = max_loop;
  auto max_acc = single_accumulator(kernel, blocks, max_loop, BinaryOp::Max, "first");
  if (std::holds_alternative<std::string>(max_acc)) return std::get<std::string>(max_acc);
  f.max_acc = std::get<reduce::Accumulator>(max_acc);
  const ir::Op& update = kernel[kernel[f.max_acc.stores[0]].src[2]];
  f.max_value = update.src[0] == f.max_acc.loads[0] ? update.src[1] : update.src[0];
  // Between the loops: reads of the maximum, pure values, STORAGE, and the
  // sum's initial store.
  std::vector<ValueId> max_reads;
  ValueId id = blocks.end[max_loop] + 1;
  for (; id < kernel.size() && kernel[id].kind != OpKind::Loop; ++id) {
    const ir::Op& op = kernel[id];
    if (blocks.parent[id] != blocks.parent[max_loop] || op.kind == OpKind::If || op.kind == OpKind::Barrier ||
        op.kind == OpKind::EndLoop || op.kind == OpKind::EndIf)
      return std::string("no second loop follows in the same block");
    if (op.kind == OpKind::Load && op.src[0] == f.max_acc.storage && same_element(kernel, op.src[1], f.max_acc.index))
      max_reads.push_back(id);
    else if (op.kind == OpKind::Store) {
      if (kernel[op.src[0]].kind != OpKind::Storage || f.sum_init != ir::kNoValue || op.src[0] == f.max_acc.storage)
        return std::string("something between the loops stores other than the sum's start");
      f.sum_init = id;
    } else if (op.kind == OpKind::Load) {
      return std::string("something between the loops reads memory other than the maximum");
    }
  }
  if (id >= kernel.size() || kernel[id].src[0] != kernel[max_loop].src[0])
    return std::string("the next loop does not have the same trip count");
  f.sum_loop = id;
  auto sum_acc = single_accumulator(kernel, blocks, f.sum_loop, BinaryOp::Add, "second");
  if (std::holds_alternative<std::string>(sum_acc)) return std::get<std::string>(sum_acc);
  f.sum_acc = std::get<reduce::Accumulator>(sum_acc);
  if (f.sum_acc.storage == f.max_acc.storage) return std::string("the two loops accumulate into the same storage");
  if (f.sum_init == ir::kNoValue || kernel[f.sum_init].src[0] != f.sum_acc.storage ||
      !same_element(kernel, kernel[f.sum_init].src[1], f.sum_acc.index))
    return std::string("the sum is not set between the loops");
  const ir::Op& init = kernel[kernel[f.sum_init].src[2]];
  if (init.kind != OpKind::Const || ir::decode_double(init.dtype, init.imm) != 0.0)
    return std::string("the sum does not start from 0");
  if (f.sum_acc.index > max_loop && kernel[f.sum_acc.index].kind != OpKind::Const)
    return std::string("the sum's element index is computed after the first loop");
  // The sum's update: S + exp(w - m), w the first loop's value, m a read of the maximum.
  const ir::Op& add = kernel[kernel[f.sum_acc.stores[0]].src[2]];
  const ValueId term = add.src[0] == f.sum_acc.loads[0] ? add.src[1] : add.src[0];
  const ir::Op& exp = kernel[term];
  if (exp.kind != OpKind::Unary || exp.unary() != ir::UnaryOp::Exp)
    return std::string("the second loop does not sum exp(value - maximum)");
  const ir::Op& sub = kernel[exp.src[0]];
  if (sub.kind != OpKind::Binary || sub.binary() != BinaryOp::Sub ||
      std::find(max_reads.begin(), max_reads.end(), sub.src[1]) == max_reads.end())
    return std::string("the second loop does not sum exp(value - maximum)");
  LoopEquivalence same(kernel, blocks, max_loop, f.sum_loop);
  if (!same(f.max_value, sub.src[0])) return std::string("the second loop sums other values than the first maximises");
  // The sum loop's body must do nothing else that is seen after it: its
  // only store is the accumulation (match_loop), so the rest is pure or loads.
  return f;
}

class OnlineSoftmax final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "fuses a running-maximum LOOP and the next LOOP's sum of exp(value - maximum) into one loop that "
           "rescales the sum as the maximum grows (online softmax: one read of the row for both)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo&) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    const std::vector<ValueId> loops = loops_in_order(kernel);
    for (std::size_t number = 0; number < loops.size(); ++number)
      if (std::holds_alternative<Fusion>(match(kernel, blocks, loops[number])))
        steps.push_back(make_step(kName, {{"loop", static_cast<std::int64_t>(number)}}));
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"loop"}));
    KILN_TRY_ASSIGN(const auto site, step_loop(step, kernel, params[0]));
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    auto matched = match(kernel, blocks, site.loop);
    if (std::holds_alternative<std::string>(matched)) return step_error(step, std::get<std::string>(matched));
    const Fusion& f = std::get<Fusion>(matched);
    const ir::DType dtype = f.sum_acc.dtype;

    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      ir::Builder& b = rw.out();
      if (id == f.sum_init || (id > f.max_loop && id == f.sum_acc.storage)) {
        rw.drop(id);  // emitted before the fused loop
        return true;
      }
      if (id >= f.sum_loop && id <= blocks.end[f.sum_loop]) {
        rw.drop(id);
        return true;
      }
      if (id != f.max_loop) return false;
      // The sum's storage and its start, before the fused loop.
      if (f.sum_acc.storage > f.max_loop) rw.replace(f.sum_acc.storage, rw.copy(f.sum_acc.storage));
      const Value sum = rw.map(f.sum_acc.storage), sum_at = rw.map(f.sum_acc.index);
      b.store(sum, sum_at, rw.map(kernel[f.sum_init].src[2]));
      rw.copy(f.max_loop);
      for (ValueId op = f.max_loop + 1; op < blocks.end[f.max_loop]; ++op) {
        if (op == f.max_acc.stores[0]) continue;
        if (kernel[op].kind == OpKind::Binary && op == kernel[f.max_acc.stores[0]].src[2]) continue;
        rw.copy(op);
      }
      const Value v = rw.map(f.max_value), before = rw.map(f.max_acc.loads[0]);
      const Value grown = b.max(before, v);
      b.store(rw.map(f.max_acc.storage), rw.map(f.max_acc.index), grown);
      const Value partial = b.load(sum, sum_at);
      const Value rescaled = b.add(b.mul(partial, b.exp(b.sub(before, grown))), b.exp(b.sub(v, grown)));
      const Value minus_inf = b.constant(dtype, -std::numeric_limits<double>::infinity());
      b.store(sum, sum_at, b.select(b.cmpgt(grown, minus_inf), rescaled, partial));
      drop_range(rw, f.max_acc.stores[0], f.max_acc.stores[0]);
      if (!rw.handled(kernel[f.max_acc.stores[0]].src[2])) rw.drop(kernel[f.max_acc.stores[0]].src[2]);
      b.end_loop(rw.map(f.max_loop));
      rw.drop(blocks.end[f.max_loop]);
      return true;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& online_softmax() {
  static const OnlineSoftmax instance;
  return instance;
}

}  // namespace kiln::passes::opts
