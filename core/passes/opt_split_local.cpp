// split_local(axis, factor): a grid axis of L work-groups becomes L/factor
// work-groups of `factor` threads each. The GROUP index g of the axis is
// replaced by g' * factor + l (g' the new GROUP index, l a new LOCAL index
// of length factor), so every thread computes what work-group g computed.
//
// It fits when the length is a multiple of factor (a constant, or a dynamic
// length that pad left as base * multiple), the axis has no LOCAL index yet,
// and the device allows the threads (max_local_dims[axis], max_local_threads
// over all LOCAL axes together). Refused when the kernel has LOCAL storage:
// the work-groups merged into one would share it.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <tuple>
#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::Scope;

constexpr std::size_t kMaxConfigsPerAxis = 8;

// Threads per group already used by LOCAL axes other than `axis`.
std::int64_t other_local_threads(const Kernel& kernel, std::uint32_t axis) {
  std::int64_t threads = 1;
  for (std::uint32_t a = 0; a < KILN_MAX_AXES; ++a) {
    if (a == axis) continue;
    if (const auto local = find_index(kernel, Scope::Local, a))
      threads *= ir::constant_int(kernel, kernel[*local].src[0]).value_or(1);
  }
  return threads;
}

// The largest factor the device allows on `axis` next to the other LOCAL axes.
std::int64_t local_limit(const Kernel& kernel, const DeviceInfo& device, std::uint32_t axis) {
  const std::int64_t per_axis = device.max_local_dims[axis];
  const std::int64_t total = device.max_local_threads / std::max<std::int64_t>(other_local_threads(kernel, axis), 1);
  return std::min(per_axis, total);
}

// Most promising first: powers of two that are multiples of the warp size,
// nearest to 256 first, the smaller of two equally near first (256, 128,
// 512, 64, 1024, 32, ...); then other powers of two, then other warp
// multiples, then the rest, each largest first.
bool better_factor(std::int64_t a, std::int64_t b, std::int64_t warp) {
  auto rank = [warp](std::int64_t f) {
    const bool pow2 = (f & (f - 1)) == 0;
    const bool warp_multiple = f % warp == 0;
    const int klass = pow2 && warp_multiple ? 0 : pow2 ? 1 : warp_multiple ? 2 : 3;
    if (klass != 0) return std::tuple(klass, 0, -f);
    const int log2 = 63 - __builtin_clzll(static_cast<unsigned long long>(f));
    return std::tuple(klass, std::abs(log2 - 8), f);
  };
  return rank(a) < rank(b);
}

class SplitLocal final : public Optimization {
 public:
  std::string_view name() const override { return "split_local"; }
  std::string_view description() const override {
    return "split a grid axis into work-groups of `factor` threads (a GROUP x LOCAL index pair)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    if (device.max_local_threads <= 1 || has_local_storage(kernel)) return steps;
    const std::int64_t warp = std::max<std::int64_t>(device.warp_size, 1);
    for (std::uint32_t axis = 0; axis < KILN_MAX_AXES; ++axis) {
      const auto group = find_index(kernel, Scope::Group, axis);
      if (!group || find_index(kernel, Scope::Local, axis)) continue;
      const GroupLength length = group_length(kernel, *group);
      const std::int64_t limit = local_limit(kernel, device, axis);
      // Dynamic lengths are never enumerated: only pad's base * multiple
      // form has known divisors (those of the multiple).
      std::vector<std::int64_t> factors;
      if (length.value) factors = divisors(*length.value, 2, limit);
      else if (length.base != ir::kNoValue) factors = divisors(length.multiple, 2, limit);
      std::sort(factors.begin(), factors.end(), [warp](auto a, auto b) { return better_factor(a, b, warp); });
      if (factors.size() > kMaxConfigsPerAxis) factors.resize(kMaxConfigsPerAxis);
      for (std::int64_t f : factors) steps.push_back(make_step(name(), {{"axis", axis}, {"factor", f}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo& device) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"axis", "factor"}));
    const std::int64_t axis = params[0], factor = params[1];
    if (axis < 0 || axis >= static_cast<std::int64_t>(KILN_MAX_AXES)) return step_error(step, "axis must be 0, 1 or 2");
    const auto a = static_cast<std::uint32_t>(axis);
    if (factor < 2) return step_error(step, "factor must be at least 2");
    const auto group = find_index(kernel, Scope::Group, a);
    if (!group) return step_error(step, "the kernel has no GROUP index on axis " + std::to_string(axis));
    if (find_index(kernel, Scope::Local, a)) return step_error(step, "axis " + std::to_string(axis) + " already has a LOCAL index");
    if (has_local_storage(kernel))
      return step_error(step, "the kernel has LOCAL storage, which the merged work-groups would share");
    const GroupLength length = group_length(kernel, *group);
    if (!divides(length, factor))
      return step_error(step, length.value ? "the axis length " + std::to_string(*length.value) + " is not a multiple of " +
                                                 std::to_string(factor)
                                           : "the axis length is dynamic and not a known multiple of the factor (pad it first)");
    const std::int64_t limit = local_limit(kernel, device, a);
    if (factor > limit)
      return step_error(step, "device '" + device.id + "' allows at most " + std::to_string(limit) +
                                  " threads on this axis (max_local_dims " + std::to_string(device.max_local_dims[a]) +
                                  ", max_local_threads " + std::to_string(device.max_local_threads) + ")");

    Kernel out = ir::rewrite(kernel, [&](ir::Rewriter& rw, ir::ValueId id) {
      if (id != *group) return false;
      ir::Builder& b = rw.out();
      const ir::Value groups = emit_divided_length(rw, length, factor);
      const ir::Value g = b.group_index(a, groups);
      const ir::Value l = b.local_index(a, static_cast<std::uint32_t>(factor));
      const ir::Value base = b.mul(g, b.constant_i64(factor));
      rw.replace(id, b.add(base, l));
      return true;
    });
    return checked_output(step, std::move(out));
  }
};

}  // namespace

const Optimization& split_local() {
  static const SplitLocal instance;
  return instance;
}

}  // namespace kiln::passes::opts
