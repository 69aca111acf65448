// pad(axis, multiple): a grid axis of length L (constant or dynamic) gets
// ceil(L / multiple) * multiple work-groups, and the kernel body runs only in
// the first L: it is wrapped in IF (g < L), g the axis's GROUP index.
// Awkward sizes then split evenly (1000 -> 1024 = 4 x 256 threads).
//
// Guarding the whole body in one IF is exact (the extra work-groups do
// nothing at all: no load can run out of range, no division meet garbage)
// and costs one branch per thread. The condition is the same for every
// thread of a work-group (a GROUP index), so BARRIERs inside stay legal; a
// later split_local that would make it thread-dependent around a barrier is
// refused by that step. A dynamic length becomes ((L + m - 1) / m) * m,
// which split_local and coarsen recognise as a multiple of m.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <algorithm>
#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::Scope;
using ir::ValueId;

// Multiples worth trying: warp multiples first on devices with threads per
// group; small ones on devices without (to make coarsen and vectorize fit).
std::vector<std::int64_t> candidate_multiples(const DeviceInfo& device) {
  if (device.max_local_threads <= 1) return {16, 8, 4, 32};
  std::vector<std::int64_t> multiples = {32, 64, 128, 256};
  const std::int64_t warp = std::max<std::int64_t>(device.warp_size, 1);
  std::stable_partition(multiples.begin(), multiples.end(), [warp](std::int64_t m) { return m % warp == 0; });
  return multiples;
}

class Pad final : public Optimization {
 public:
  std::string_view name() const override { return "pad"; }
  std::string_view description() const override {
    return "round a grid axis up to a multiple; the body runs under IF (index < original length)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    for (std::uint32_t axis = 0; axis < KILN_MAX_AXES; ++axis) {
      const auto group = find_index(kernel, Scope::Group, axis);
      if (!group) continue;
      const GroupLength length = group_length(kernel, *group);
      for (std::int64_t m : candidate_multiples(device)) {
        // Constant lengths: only when not already a multiple, and at most
        // doubling the work. Dynamic ones: any, unless already padded to it.
        const bool fits = length.value ? *length.value % m != 0 && *length.value >= m : !divides(length, m);
        if (fits) steps.push_back(make_step(name(), {{"axis", axis}, {"multiple", m}}));
      }
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"axis", "multiple"}));
    const std::int64_t axis = params[0], multiple = params[1];
    if (axis < 0 || axis >= static_cast<std::int64_t>(KILN_MAX_AXES)) return step_error(step, "axis must be 0, 1 or 2");
    if (multiple < 2 || multiple > (std::int64_t{1} << 30)) return step_error(step, "multiple must be in 2..2^30");
    const auto group = find_index(kernel, Scope::Group, static_cast<std::uint32_t>(axis));
    if (!group) return step_error(step, "the kernel has no GROUP index on axis " + std::to_string(axis));
    const GroupLength length = group_length(kernel, *group);
    if (divides(length, multiple)) return step_error(step, "the axis length is already a multiple of " + std::to_string(multiple));
    std::int64_t padded = 0;
    if (length.value) {
      if (*length.value < 1) return step_error(step, "the axis is empty");
      if (*length.value > INT64_MAX - multiple) return step_error(step, "the axis length is too large to pad");
      padded = (*length.value + multiple - 1) / multiple * multiple;
      const std::uint64_t max_groups = device.max_grid_dims[static_cast<std::size_t>(axis)];
      if (max_groups != 0 && static_cast<std::uint64_t>(padded) > max_groups)
        return step_error(step, "device '" + device.id + "' allows at most " + std::to_string(max_groups) +
                                    " work-groups on axis " + std::to_string(axis));
    }

    const std::vector<bool> declaration = top_level_declarations(kernel);
    ir::Rewriter rw(kernel);
    ir::Builder& b = rw.out();
    for (ValueId id = 0; id < kernel.size(); ++id) {
      if (!declaration[id]) continue;
      if (id != *group) {
        rw.copy(id);
        continue;
      }
      ir::Value groups;
      if (length.value) {
        groups = b.constant_i64(padded);
      } else {
        const ir::Value m = b.constant_i64(multiple);
        const ir::Value rounded_up = b.add(rw.map(length.op), b.constant_i64(multiple - 1));
        groups = b.mul(b.div(rounded_up, m), m);
      }
      rw.replace(id, b.group_index(static_cast<std::uint32_t>(axis), groups));
    }
    const ir::Value in_range = b.cmplt(rw.map(*group), rw.map(length.op));
    const ValueId guard = b.if_(in_range);
    for (ValueId id = 0; id < kernel.size(); ++id)
      if (!declaration[id]) rw.copy(id);
    b.end_if(guard);
    return checked_output(step, rw.finish());
  }
};

}  // namespace

const Optimization& pad() {
  static const Pad instance;
  return instance;
}

}  // namespace kiln::passes::opts
