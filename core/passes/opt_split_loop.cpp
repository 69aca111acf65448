// split_loop(loop, factor): the loop-th LOOP (program order) of constant
// count n, n a multiple of factor, becomes an outer LOOP of n/factor and an
// inner LOOP of factor iterations; the old counter is outer * factor + inner.
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
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"loop", "factor"}));
    const std::int64_t factor = params[1];
    KILN_TRY_ASSIGN(const auto site, step_counted_loop(step, kernel, params[0]));
    const std::int64_t n = *site.count;
    if (factor < 2 || factor >= n) return step_error(step, "factor must be in 2.." + std::to_string(n - 1));
    if (n % factor != 0) return step_error(step, "the count " + std::to_string(n) + " is not a multiple of " + std::to_string(factor));

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
