// unroll(loop, factor): the loop-th LOOP (program order), of constant count
// n, is unrolled
//   factor = 0: fully (n <= 64): n copies of the body, the counter a
//               constant in each;
//   factor = f (2 <= f < n): a LOOP of n / f iterations holding f copies
//               (counter i * f + k in copy k), then n % f copies after it
//               for the remainder (counter (n / f) * f + r).
// The copies run in the original iteration order, so loads and stores
// (REGISTER accumulators included) happen exactly as before. The unrolled
// body is bounded (kMaxUnrolledOps ops) so no step can blow a kernel up.
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::ValueId;

constexpr std::int64_t kMaxFullUnroll = 64;
constexpr std::int64_t kMaxUnrolledOps = 4096;
constexpr std::int64_t kFactors[] = {4, 8, 2, 16};

std::int64_t body_ops(const LoopSite& site) { return static_cast<std::int64_t>(site.end - site.loop - 1); }

class Unroll final : public Optimization {
 public:
  std::string_view name() const override { return "unroll"; }
  std::string_view description() const override {
    return "unroll a constant LOOP by `factor` (remainder after it), or fully with factor=0 (count <= 64)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo&) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    const std::vector<LoopSite> sites = loop_sites(kernel);
    for (std::size_t position = 0; position < sites.size(); ++position) {
      const LoopSite& site = sites[position];
      if (!site.count || *site.count < 2) continue;  // dynamic counts are never enumerated
      const auto loop = static_cast<std::int64_t>(position);
      const std::int64_t n = *site.count;
      if (n <= kMaxFullUnroll && n * body_ops(site) <= kMaxUnrolledOps)
        steps.push_back(make_step(name(), {{"loop", loop}, {"factor", 0}}));
      for (std::int64_t factor : kFactors)
        if (factor < n && factor * body_ops(site) <= kMaxUnrolledOps)
          steps.push_back(make_step(name(), {{"loop", loop}, {"factor", factor}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"loop", "factor"}));
    const std::int64_t factor = params[1];
    KILN_TRY_ASSIGN(const auto site, step_counted_loop(step, kernel, params[0]));
    const std::int64_t n = *site.count;
    if (n < 1) return step_error(step, "the loop never runs");
    const bool full = factor == 0;
    if (full && n > kMaxFullUnroll)
      return step_error(step, "full unrolling takes counts up to " + std::to_string(kMaxFullUnroll) + ", this one is " + std::to_string(n));
    if (!full && (factor < 2 || factor >= n))
      return step_error(step, "factor must be 0 (full) or in 2.." + std::to_string(n - 1));
    const std::int64_t copies = full ? n : factor + n % factor;
    if (copies * body_ops(site) > kMaxUnrolledOps)
      return step_error(step, "the unrolled body would exceed " + std::to_string(kMaxUnrolledOps) + " ops");

    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      if (id != site.loop) return false;
      ir::Builder& b = rw.out();
      std::vector<ValueId> overrides(kernel.size(), ir::kNoValue);
      auto copy_body = [&](ir::Value counter) {
        overrides[site.loop] = counter.id;
        clone_ops(rw, site.loop + 1, site.end, overrides);
      };
      const std::int64_t steps = full ? 0 : n / factor;
      if (!full) {
        const ir::Value i = b.loop(steps);
        const ir::Value base = b.mul(i, b.constant_i64(factor));
        for (std::int64_t k = 0; k < factor; ++k) copy_body(k == 0 ? base : b.add(base, b.constant_i64(k)));
        b.end_loop(i);
      }
      for (std::int64_t r = steps * std::max<std::int64_t>(factor, 1); r < n; ++r) copy_body(b.constant_i64(r));
      drop_range(rw, site.loop, site.end);
      return true;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& unroll() {
  static const Unroll instance;
  return instance;
}

}  // namespace kiln::passes::opts
