// lane_reduce(loop, lanes): a reduction LOOP (opt_tiled_reduce_match.hpp's
// reduction: every store an accumulation into REGISTER storage) keeps
// `lanes` interleaved partial results instead of one: iteration
// i * lanes + k folds into partial k. The loop becomes
//
//   partial_a[0..lanes) = identity                  (per accumulator a)
//   loop i < count / lanes:
//     `lanes` copies of the body (counter i * lanes + k), copy k reading
//     partial_a[k]; then every copy's final value stored to partial_a[k]
//   acc_a = acc_a OP tree(partial_a[0..lanes))      (pairwise)
//   loop t < count % lanes: the body as it was      (counter base + t)
//
// Why: a single accumulator is one dependent chain (a float add every 4
// cycles on a CPU), far below memory bandwidth; `lanes` chains run in
// parallel, and because the partials sit side by side with their stores
// after all the copies' loads, `vectorize` turns them into one vector
// accumulator (AVX-512: 16 f32 lanes) with vector loads of the row. It is
// tiled_reduce for one thread: floating-point sums and products are
// reassociated (the lanes' order, then the tree's); max and min are exact.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "opt_tiled_reduce_match.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <algorithm>
#include <map>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::OpKind;
using ir::Value;
using ir::ValueId;

constexpr std::string_view kName = "lane_reduce";
constexpr std::int64_t kMaxLanes = 64;
constexpr std::int64_t kMaxCopiedOps = 4096;  // lanes x body, as unroll bounds it

// Why the loop cannot take lane partials ("" when it can).
std::string unsuitable(const ir::Blocks& blocks, ValueId loop, const reduce::SplittableLoop& found) {
  if (found.accumulators.empty()) return "the loop does not accumulate (a parallel loop has no partials to keep)";
  for (const reduce::Accumulator& a : found.accumulators) {
    if (!reduce::identity_bits(a.op, a.dtype)) return "bool accumulators have no identity to start the partials from";
    // One read of the accumulator per iteration, directly in the loop body:
    // the copies' stores can then wait until every copy has read its
    // partial (the shape vectorize groups).
    if (a.loads.size() != 1) return "an accumulator is read more than once per iteration (normalize first)";
    for (ValueId id : a.loads)
      if (blocks.parent[id] != loop) return "an accumulation sits under an IF or inner LOOP of the loop";
    for (ValueId id : a.stores)
      if (blocks.parent[id] != loop) return "an accumulation sits under an IF or inner LOOP of the loop";
    for (ValueId id : a.stores)
      if (id < a.loads.front()) return "an accumulator is stored before it is read";
  }
  return "";
}

class LaneReduce final : public Optimization {
 public:
  std::string_view name() const override { return kName; }
  std::string_view description() const override {
    return "a reduction LOOP keeps `lanes` interleaved partial accumulators (one vector register after "
           "vectorize), combined by a tree after the loop; reassociates float sums";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    std::vector<std::int64_t> widths;
    for (std::uint32_t w : device.vector_widths())
      if (w > 1) widths.push_back(w);
    std::sort(widths.rbegin(), widths.rend());
    if (widths.empty()) widths = {4};  // independent chains help a scalar device too
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    const std::vector<ValueId> loops = loops_in_order(kernel);
    for (std::size_t number = 0; number < loops.size(); ++number) {
      const ValueId loop = loops[number];
      auto matched = reduce::match_loop(kernel, blocks, loop);
      if (!std::holds_alternative<reduce::SplittableLoop>(matched)) continue;
      if (!unsuitable(blocks, loop, std::get<reduce::SplittableLoop>(matched)).empty()) continue;
      const auto count = ir::constant_int(kernel, kernel[loop].src[0]);
      const auto body = static_cast<std::int64_t>(blocks.end[loop] - loop - 1);
      for (std::int64_t lanes : widths)
        if ((!count || *count >= 2 * lanes) && lanes * body <= kMaxCopiedOps)
          steps.push_back(make_step(kName, {{"loop", static_cast<std::int64_t>(number)}, {"lanes", lanes}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"loop", "lanes"}));
    const std::int64_t lanes = params[1];
    if (lanes < 2 || lanes > kMaxLanes) return step_error(step, "lanes must be in 2.." + std::to_string(kMaxLanes));
    KILN_TRY_ASSIGN(const auto site, step_loop(step, kernel, params[0]));
    const ir::Blocks blocks = ir::analyze_blocks(kernel);
    auto matched = reduce::match_loop(kernel, blocks, site.loop);
    if (std::holds_alternative<std::string>(matched)) return step_error(step, std::get<std::string>(matched));
    const reduce::SplittableLoop& found = std::get<reduce::SplittableLoop>(matched);
    if (std::string why = unsuitable(blocks, site.loop, found); !why.empty()) return step_error(step, why);
    if (lanes * static_cast<std::int64_t>(site.end - site.loop - 1) > kMaxCopiedOps)
      return step_error(step, "the copied body would exceed " + std::to_string(kMaxCopiedOps) + " ops");

    // Per old op: which accumulator it reads (load) or writes (store).
    std::map<ValueId, std::size_t> reads, writes;
    std::vector<ValueId> last_store(found.accumulators.size(), ir::kNoValue);
    for (std::size_t a = 0; a < found.accumulators.size(); ++a) {
      for (ValueId id : found.accumulators[a].loads) reads[id] = a;
      for (ValueId id : found.accumulators[a].stores) {
        writes[id] = a;
        last_store[a] = std::max(last_store[a] == ir::kNoValue ? 0 : last_store[a], id);
      }
    }

    // STORAGE lives outside every LOOP and IF (kernel_ir.h): the partials
    // are declared in front of the first op after the PARAMs, and set to
    // the identity where the loop starts (every time it starts).
    ValueId first_op = 0;
    while (first_op < kernel.size() && kernel[first_op].kind == OpKind::Param) ++first_op;
    std::vector<Value> partials;
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      if (id == first_op)
        for (const reduce::Accumulator& a : found.accumulators)
          partials.push_back(rw.out().storage(ir::Scope::Register, a.dtype, static_cast<std::uint64_t>(lanes)));
      if (id != site.loop) return false;
      ir::Builder& b = rw.out();
      const ir::Op& loop = kernel[site.loop];
      const Value count = rw.map(loop.src[0]);
      const Value width = b.constant_i64(lanes);
      for (std::size_t a = 0; a < partials.size(); ++a) {
        const reduce::Accumulator& acc = found.accumulators[a];
        const Value identity = b.constant_bits(acc.dtype, *reduce::identity_bits(acc.op, acc.dtype));
        for (std::int64_t k = 0; k < lanes; ++k) b.store(partials[a], b.constant_i64(k), identity);
      }
      const auto constant_count = ir::constant_int(kernel, loop.src[0]);
      const Value trips = constant_count ? b.constant_i64(std::max<std::int64_t>(*constant_count, 0) / lanes)
                                         : b.div(count, width);
      const Value i = b.loop(trips);
      const Value base = b.mul(i, width);
      std::vector<std::vector<ValueId>> finals(found.accumulators.size(), std::vector<ValueId>(lanes));
      for (std::int64_t k = 0; k < lanes; ++k) {
        std::vector<ValueId> overrides(kernel.size(), ir::kNoValue);
        overrides[site.loop] = (k == 0 ? base : b.add(base, b.constant_i64(k))).id;
        const Value slot = b.constant_i64(k);
        for (ValueId op = site.loop + 1; op < site.end; ++op) {
          if (auto r = reads.find(op); r != reads.end()) {
            overrides[op] = b.load(partials[r->second], slot).id;
          } else if (auto w = writes.find(op); w != writes.end()) {
            if (op == last_store[w->second]) {
              const ValueId v = kernel[op].src[2];
              finals[w->second][static_cast<std::size_t>(k)] = overrides[v] != ir::kNoValue ? overrides[v] : rw.map(v).id;
            }
          } else {
            clone_ops(rw, op, op + 1, overrides);
          }
        }
      }
      for (std::size_t a = 0; a < partials.size(); ++a)
        for (std::int64_t k = 0; k < lanes; ++k)
          b.store(partials[a], b.constant_i64(k), Value{finals[a][static_cast<std::size_t>(k)]});
      b.end_loop(i);
      // The tree: neighbours at distance 1, 2, 4, ... (pairwise summation).
      for (std::size_t a = 0; a < partials.size(); ++a) {
        const reduce::Accumulator& acc = found.accumulators[a];
        std::vector<Value> values;
        for (std::int64_t k = 0; k < lanes; ++k) values.push_back(b.load(partials[a], b.constant_i64(k)));
        while (values.size() > 1) {
          std::vector<Value> next;
          for (std::size_t v = 0; v + 1 < values.size(); v += 2) next.push_back(b.binary(acc.op, values[v], values[v + 1]));
          if (values.size() % 2 == 1) next.push_back(values.back());
          values = std::move(next);
        }
        const Value index = rw.map(acc.index);
        const Value before = b.load(rw.map(acc.storage), index);
        b.store(rw.map(acc.storage), index, b.binary(acc.op, before, values.front()));
      }
      // The remainder, in order, into the accumulators themselves.
      const bool whole = constant_count && *constant_count % lanes == 0;
      if (!whole) {
        const Value done = b.mul(trips, width);
        const Value rest = constant_count ? b.constant_i64(std::max<std::int64_t>(*constant_count, 0) % lanes)
                                          : b.sub(count, done);
        const Value t = b.loop(rest);
        std::vector<ValueId> overrides(kernel.size(), ir::kNoValue);
        overrides[site.loop] = b.add(done, t).id;
        clone_ops(rw, site.loop + 1, site.end, overrides);
        b.end_loop(t);
      }
      drop_range(rw, site.loop, site.end);
      return true;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& lane_reduce() {
  static const LaneReduce instance;
  return instance;
}

}  // namespace kiln::passes::opts
