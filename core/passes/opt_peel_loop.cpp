// peel_loop(loop, count): the loop-th LOOP (program order), of constant
// count n > count >= 1, becomes a LOOP of its first `count` iterations and
// a LOOP of the other n - count (counter count + j). Same iterations, same
// order, so the results are unchanged. A negative count counts from the
// end: count=-1 keeps all but the last iteration in the first LOOP (the
// second, of count 1, becomes straight code).
//
// Why: row_cache keeps what a producer LOOP loads for the later LOOPs of
// the same count. Peeling each of a row kernel's per-thread loops (after
// tiled_reduce) at the same `count` lets it keep part of a thread's share of
// the row on chip and read the rest again (from L2): an f32 row of 50257
// elements (201 KB) cached whole allows one group per SM on the H200, half
// of it two. And count=-1 after tiled_reduce: a thread's loop over its
// share, `ceil(blocks / threads)` iterations, needs its `j < count` guard
// only in the last one; without it the first part's loads are no longer
// under an IF, so unrolling it lets each thread have several loads in
// flight (ptxas does not move a load above an IF).
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::ValueId;

class PeelLoop final : public Optimization {
 public:
  std::string_view name() const override { return "peel_loop"; }
  std::string_view description() const override {
    return "split a constant LOOP into a LOOP of its first `count` iterations and one of the rest";
  }

  // Halves: the form that lets row_cache keep about half of a row.
  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo&) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    const std::vector<LoopSite> sites = loop_sites(kernel);
    for (std::size_t position = 0; position < sites.size(); ++position) {
      const std::optional<std::int64_t> n = sites[position].count;
      if (n && *n >= 3)
        steps.push_back(make_step(name(), {{"loop", static_cast<std::int64_t>(position)}, {"count", *n / 2}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"loop", "count"}));
    KILN_TRY_ASSIGN(const auto site, step_counted_loop(step, kernel, params[0]));
    const std::int64_t n = *site.count;
    // count < 0 counts from the end: -1 peels all but the last iteration.
    const std::int64_t count = params[1] < 0 ? n + params[1] : params[1];
    if (count < 1 || count >= n)
      return step_error(step, "count must be in 1.." + std::to_string(n - 1) + " or -" + std::to_string(n - 1) + "..-1");

    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      if (id != site.loop) return false;
      ir::Builder& b = rw.out();
      std::vector<ValueId> overrides(kernel.size(), ir::kNoValue);
      const ir::Value first = b.loop(count);
      overrides[site.loop] = first.id;
      clone_ops(rw, site.loop + 1, site.end, overrides);
      b.end_loop(first);
      const ir::Value rest = b.loop(n - count);
      overrides[site.loop] = b.add(rest, b.constant_i64(count)).id;
      clone_ops(rw, site.loop + 1, site.end, overrides);
      b.end_loop(rest);
      drop_range(rw, site.loop, site.end);
      return true;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& peel_loop() {
  static const PeelLoop instance;
  return instance;
}

}  // namespace kiln::passes::opts
