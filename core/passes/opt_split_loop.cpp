// split_loop(loop, factor[, tail]): the loop-th LOOP (program order) of
// constant count n becomes an outer LOOP of n/factor and an inner LOOP of
// factor iterations; the old counter is outer * factor + inner. n must be a
// multiple of factor, unless tail = 1: then the n % factor last iterations
// follow as a LOOP of their own (counter (n/factor) * factor + t), as
// lane_reduce leaves its remainder, so a row of odd length keeps the blocks
// the reductions' lane partials have (row_cache matches them; the CPU
// recipes for such rows). Configs list divisors, without tail.
// Iterations run in the same order, so the results are unchanged. Dynamic
// counts are not split (configs skip them).
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::ValueId;

constexpr std::int64_t kFactors[] = {8, 16, 4, 2};

class SplitLoop final : public Optimization {
 public:
  std::string_view name() const override { return "split_loop"; }
  std::string_view description() const override {
    return "split a constant LOOP of n into n/factor x factor nested LOOPs";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo&) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    const std::vector<LoopSite> sites = loop_sites(kernel);
    for (std::size_t position = 0; position < sites.size(); ++position) {
      const std::optional<std::int64_t> n = sites[position].count;
      if (!n) continue;  // dynamic counts are never enumerated
      for (std::int64_t factor : kFactors)
        if (factor < *n && *n % factor == 0)
          steps.push_back(make_step(name(), {{"loop", static_cast<std::int64_t>(position)}, {"factor", factor}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY(known_params(step, {"loop", "factor", "tail"}));
    KILN_TRY_ASSIGN(const std::int64_t loop_number, require_param(step, "loop"));
    KILN_TRY_ASSIGN(const std::int64_t factor, require_param(step, "factor"));
    KILN_TRY_ASSIGN(const bool tail_allowed, flag_param(step, "tail"));
    KILN_TRY_ASSIGN(const auto site, step_counted_loop(step, kernel, loop_number));
    const std::int64_t n = *site.count;
    if (factor < 2 || factor > n / 2) return step_error(step, "factor must be in 2.." + std::to_string(n / 2));
    if (n % factor != 0 && !tail_allowed)
      return step_error(step, "the count " + std::to_string(n) + " is not a multiple of " + std::to_string(factor) +
                                  " (tail=1 runs the rest in a loop of its own)");

    ir::Value outer, inner;
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      ir::Builder& b = rw.out();
      if (id == site.loop) {
        outer = b.loop(n / factor);
        inner = b.loop(factor);
        rw.replace(id, b.add(b.mul(outer, b.constant_i64(factor)), inner));
        return true;
      }
      if (id == site.end) {
        b.end_loop(inner);
        b.end_loop(outer);
        if (n % factor != 0) {  // the last iterations, in order
          const ir::Value tail = b.loop(n % factor);
          std::vector<ValueId> overrides(kernel.size(), ir::kNoValue);
          overrides[site.loop] = b.add(b.constant_i64(n / factor * factor), tail).id;
          clone_ops(rw, site.loop + 1, site.end, overrides);
          b.end_loop(tail);
        }
        rw.drop(id);
        return true;
      }
      return false;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& split_loop() {
  static const SplitLoop instance;
  return instance;
}

}  // namespace kiln::passes::opts
