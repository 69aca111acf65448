// persistent_groups(axis, per_unit): the grid axis runs as at most
// compute_units * per_unit work-groups (one wave on the device), each doing
// its share of the old groups in a LOOP: group g does g, g + G, g + 2G, ...
// (G the new count), the indexes past the old length skipped.
//
// It is pad + coarsen (strided) with the factor taken from the device:
// F = ceil(L / (compute_units * per_unit)), the axis padded to a multiple of
// F where it is not one, then coarsened by F, which leaves ceil(L / F)
// groups. What it is for: work a group does once and every row reuses. A row
// kernel's group is otherwise started for every row, and whatever it copies
// at its start (stage_input: rmsnorm's weights) crosses the memory once a row;
// in groups that stay, once a group. One wave also leaves no last partial wave.
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::Scope;

// Groups an SM to try: one (a group holding a whole row in registers fills
// an SM), two.
constexpr std::int64_t kPerUnit[] = {1, 2};

class PersistentGroups final : public Optimization {
 public:
  std::string_view name() const override { return "persistent_groups"; }
  std::string_view description() const override {
    return "the grid axis runs as at most compute_units * per_unit groups, each looping over its share (strided)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    // Only where groups have threads (a CPU's work-items are its loop
    // iterations already) and a group does enough to be worth keeping.
    if (!is_valid(kernel) || device.max_local_threads <= 1 || device.compute_units == 0 || !has_local_index(kernel))
      return steps;
    for (std::uint32_t axis = 0; axis < KILN_MAX_AXES; ++axis) {
      const auto group = find_index(kernel, Scope::Group, axis);
      if (!group) continue;
      const GroupLength length = group_length(kernel, *group);
      for (std::int64_t per_unit : kPerUnit)
        if (length.value && *length.value >= 4 * per_unit * device.compute_units)
          steps.push_back(make_step(name(), {{"axis", axis}, {"per_unit", per_unit}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"axis", "per_unit"}));
    const std::int64_t axis = params[0], per_unit = params[1];
    if (axis < 0 || axis >= static_cast<std::int64_t>(KILN_MAX_AXES)) return step_error(step, "axis must be 0, 1 or 2");
    if (per_unit < 1) return step_error(step, "per_unit must be at least 1");
    if (device.compute_units == 0) return step_error(step, "the device does not report its compute units");
    const auto group = find_index(kernel, Scope::Group, static_cast<std::uint32_t>(axis));
    if (!group) return step_error(step, "the kernel has no GROUP index on axis " + std::to_string(axis));
    const GroupLength length = group_length(kernel, *group);
    if (!length.value) return step_error(step, "the axis length is dynamic (the loop's count must be a constant)");
    const std::int64_t groups = per_unit * device.compute_units;
    const std::int64_t factor = (*length.value + groups - 1) / groups;
    if (factor < 2)
      return step_error(step, "the axis has " + std::to_string(*length.value) + " groups, not more than " +
                                  std::to_string(groups) + " (compute units x per_unit)");
    // Each inner step's error names the inner step; say which step made it.
    const auto inner = [&](const Result<Kernel>& result) -> Result<Kernel> {
      if (result) return result;
      return step_error(step, result.error().message);
    };
    Kernel padded = kernel;
    if (*length.value % factor != 0) {
      Result<Kernel> p = inner(pad().apply(kernel, make_step("pad", {{"axis", axis}, {"multiple", factor}}), device));
      if (!p) return p;
      padded = std::move(*p);
    }
    return inner(coarsen().apply(padded, make_step("coarsen", {{"axis", axis}, {"factor", factor}, {"mode", 1}}), device));
  }
};

}  // namespace

const Optimization& persistent_groups() {
  static const PersistentGroups instance;
  return instance;
}

}  // namespace kiln::passes::opts
