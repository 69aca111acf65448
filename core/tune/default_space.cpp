// kiln's own search space: the passes library's optimizations, always-on
// pipeline, step application, cost model and lowering.
#include "kiln/passes/cost.hpp"
#include "kiln/passes/pipeline.hpp"
#include "kiln/tune/search_space.hpp"

namespace kiln::tune {

const SearchSpace& default_search_space() {
  static const SearchSpace space = [] {
    SearchSpace s;
    s.optimizations = passes::optimizations();
    s.normalize = [](const ir::Kernel& k, const DeviceInfo& d) { return passes::normalize(k, d); };
    s.apply = [](const ir::Kernel& k, const passes::OptStep& step, const DeviceInfo& d) {
      return passes::apply_sequence(k, {step}, d);
    };
    s.cost = [](const ir::Kernel& k, const DeviceInfo& d) { return passes::estimate_cost(k, d).total_ns; };
    s.lower = [](const ir::Kernel& k, const passes::OptSequence& seq, const DeviceInfo& d) {
      return passes::optimize(k, seq, d);
    };
    s.version = search_space_version(s.optimizations);
    return s;
  }();
  return space;
}

}  // namespace kiln::tune
