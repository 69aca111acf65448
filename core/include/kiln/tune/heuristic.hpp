// kiln/tune/heuristic.hpp - the schedule a kernel gets without a tuning
// record: what tinygrad's hand-coded optimizations are when BEAM is off.
//
// No launch, no compile: the search space's recipes (and, for a grid axis
// whose length no recipe divides, the same recipes after `pad`), then
// generic bodies (thread splits of a grid axis, a two-axis grid's axis 0
// split with vectors along axis 1 as a transpose wants, row loops reduced
// across the group), each lowered and ranked by the cost model. On a device with
// threads per work-group, a candidate that uses them beats one that does not
// whatever the model says (one thread per group is the worst kernel such a
// device runs; the model underrates threads on CPU OpenCL), except that on
// a CPU whose groups' threads run one after another (PoCL: warp 1; not
// lavapipe, whose groups run as SIMD lanes) a candidate without
// barriers beats one with them (there a barrier costs a loop over the
// group's work-items, and LOCAL tiles save nothing). Deterministic:
// the same kernel and device give the same sequence.
#pragma once

#include <kiln/ir/kernel.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/runtime/device_info.hpp>
#include <kiln/tune/search_space.hpp>

#include <cstddef>

namespace kiln::tune {

struct HeuristicSchedule {
  passes::OptSequence sequence;  // empty: the kernel as given (always-on passes only)
  ir::Kernel lowered;            // space.lower(kernel, sequence, device)
  double cost_ns = 0;            // the cost model's estimate of `lowered`
  std::size_t considered = 0;    // candidate sequences that lowered
};

// Fails only when the kernel itself does not lower (the error of
// space.lower with the empty sequence).
Result<HeuristicSchedule> heuristic_schedule(const ir::Kernel& kernel, const DeviceInfo& device,
                                             const SearchSpace& space = default_search_space());

}  // namespace kiln::tune
