// kiln's own search space: the passes library's optimizations, always-on
// pipeline, step application, cost model and lowering.
#include "kiln/passes/cost.hpp"
#include "kiln/passes/pipeline.hpp"
#include "kiln/tune/search_space.hpp"

namespace kiln::passes {
// TEMPORARY (until passes-core's cost model is in main): a weak reference,
// so that libkiln links without it. Without a cost model every candidate
// ranks equal and the search's order decides what is measured (shorter
// sequences first). Remove this declaration when core/passes/cost*.cpp lands.
[[gnu::weak]] CostEstimate estimate_cost(const ir::Kernel& kernel, const DeviceInfo& device,
                                         std::span<const std::int64_t> variables);
}  // namespace kiln::passes

namespace kiln::tune {

const SearchSpace& default_search_space() {
  static const SearchSpace space = [] {
    SearchSpace s;
    s.optimizations = passes::optimizations();
    s.normalize = [](const ir::Kernel& k, const DeviceInfo& d) { return passes::normalize(k, d); };
    s.apply = [](const ir::Kernel& k, const passes::OptStep& step, const DeviceInfo& d) {
      return passes::apply_sequence(k, {step}, d);
    };
    s.cost = [](const ir::Kernel& k, const DeviceInfo& d) {
      if (&passes::estimate_cost == nullptr) return 0.0;
      return passes::estimate_cost(k, d, {}).total_ns;
    };
    s.lower = [](const ir::Kernel& k, const passes::OptSequence& seq, const DeviceInfo& d) {
      return passes::optimize(k, seq, d);
    };
    s.version = search_space_version(s.optimizations);
    return s;
  }();
  return space;
}

}  // namespace kiln::tune
