// merge_loops(loop): the loop-th LOOP (program order), of constant count a,
// and the LOOP perfectly nested in it, of constant count b, become one LOOP
// of a * b iterations t with outer counter t / b and inner counter t % b
// (normalize may simplify the div/mod). Iterations keep their order, so the
// results are unchanged. Pure ops between the two LOOPs (arithmetic only)
// move into the merged loop and run b times as often: their values are the
// same. Used to make a whole row one loop for tiled reductions.
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::ValueId;

// A nest merge_loops accepts at `position`, or why not.
struct Nest {
  LoopSite outer, inner;
  std::string why_not;  // "" when it fits
};

Nest nest_at(const Kernel& kernel, const std::vector<LoopSite>& sites, std::int64_t position) {
  Nest nest;
  if (position < 0 || position >= static_cast<std::int64_t>(sites.size()))
    return {{}, {}, "the kernel has no LOOP number " + std::to_string(position) + " (counting from 0)"};
  nest.outer = sites[static_cast<std::size_t>(position)];
  const auto inner = perfectly_nested_loop(kernel, sites, static_cast<std::size_t>(position));
  if (!inner) return {{}, {}, "the loop does not hold exactly one nested LOOP (a perfect nest)"};
  nest.inner = *inner;
  const auto a = nest.outer.count, b = nest.inner.count;
  if (!a || !b) return {{}, {}, "both loop counts must be constants"};
  std::int64_t product = 0;
  if (*a < 1 || *b < 1 || __builtin_mul_overflow(*a, *b, &product)) return {{}, {}, "the loop counts must be positive and their product fit i64"};
  return nest;
}

class MergeLoops final : public Optimization {
 public:
  std::string_view name() const override { return "merge_loops"; }
  std::string_view description() const override {
    return "merge a perfect nest of two constant LOOPs into one LOOP of their product";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo&) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    const std::vector<LoopSite> sites = loop_sites(kernel);
    for (std::size_t position = 0; position < sites.size(); ++position)
      if (nest_at(kernel, sites, static_cast<std::int64_t>(position)).why_not.empty())
        steps.push_back(make_step(name(), {{"loop", static_cast<std::int64_t>(position)}}));
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"loop"}));
    const Nest nest = nest_at(kernel, loop_sites(kernel), params[0]);
    if (!nest.why_not.empty()) return step_error(step, nest.why_not);
    const std::int64_t inner_count = *nest.inner.count;

    ir::Value merged;
    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ValueId id) {
      ir::Builder& b = rw.out();
      if (id == nest.outer.loop) {
        merged = b.loop(*nest.outer.count * inner_count);
        const ir::Value b_count = b.constant_i64(inner_count);
        rw.replace(id, b.div(merged, b_count));
        rw.replace(nest.inner.loop, b.mod(merged, b_count));
        return true;
      }
      if (id == nest.inner.end) {
        rw.drop(id);
        return true;
      }
      if (id == nest.outer.end) {
        b.end_loop(merged);
        rw.drop(id);
        return true;
      }
      return false;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& merge_loops() {
  static const MergeLoops instance;
  return instance;
}

}  // namespace kiln::passes::opts
