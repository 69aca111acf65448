// coarsen(axis, factor, mode): each thread does the work of `factor`
// consecutive work-groups of a grid axis. The axis's length L becomes
// L/factor and the kernel body runs in a LOOP of `factor` iterations, the
// old GROUP index g replaced in iteration j by
//   mode 0 (contiguous): g' * factor + j    (neighbouring elements per thread:
//                                            CPUs, vectorization)
//   mode 1 (strided):    j * (L/factor) + g' (neighbouring threads on
//                                            neighbouring elements: coalescing)
//   mode 2 (contiguous, any length): as mode 0, with ceil(L/factor) work-items
//                                    where factor does not divide L, and
//                                    g = min(g' * factor + j, L - 1)
// A later unroll may unroll the loop.
//
// Mode 2 lets a recipe coarsen rows whatever their count (softmax on 4095
// rows, or 87381 of 768 two a warp) without pad's IF around each row, which
// keeps the rows' loads from being issued together and pipeline_rows from
// fusing them: the last work-item runs group L - 1 again in place of the
// groups past L. That is exact where running a group twice changes nothing:
// no buffer is both read and written (the second run would read the first's
// output); the repeat runs in the same thread, after the first.
//
// Iteration j does exactly what work-group g did, in the same order, so the
// results are those of the original kernel: work-groups never communicate
// (no barrier spans them). PARAMs, STORAGE and INDEX ops (and their length
// expressions) stay in front of the loop. When the kernel has LOCAL storage
// and LOCAL threads, a BARRIER ends each iteration, so that no thread
// overwrites LOCAL data another thread of the group still reads.
#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"
#include "opt_support.hpp"
#include "optimizations.hpp"
#include "structural_support.hpp"

#include <string>

namespace kiln::passes::opts {

namespace {

using ir::Kernel;
using ir::Scope;
using ir::ValueId;

enum Mode : std::int64_t { kContiguous = 0, kStrided = 1, kContiguousAnyLength = 2 };

// Why a group of the kernel cannot run twice with the same results ("" when
// it can): a PARAM both written and read.
std::string why_not_repeatable(const Kernel& kernel) {
  std::vector<bool> stored(kernel.size(), false), read(kernel.size(), false);
  for (const ir::Op& op : kernel.ops)
    for (std::size_t i = 0; i < op.operands().size(); ++i) {
      const ValueId v = op.operands()[i];
      if (kernel[v].kind != ir::OpKind::Param) continue;
      (op.kind == ir::OpKind::Store && i == 0 ? stored : read)[v] = true;
    }
  for (ValueId id = 0; id < kernel.size(); ++id)
    if (stored[id] && read[id])
      return "param %" + std::to_string(id) + " is both read and written, so a group run twice would read its own output";
  return "";
}

constexpr std::int64_t kFactors[] = {4, 8, 2, 16};

class Coarsen final : public Optimization {
 public:
  std::string_view name() const override { return "coarsen"; }
  std::string_view description() const override {
    return "each thread handles `factor` elements of a grid axis in a loop (mode 0 contiguous, 1 strided)";
  }

  std::vector<OptStep> configs(const Kernel& kernel, const DeviceInfo& device) const override {
    std::vector<OptStep> steps;
    if (!is_valid(kernel)) return steps;
    // One thread per group (CPUs): contiguous runs vectorize; GPUs: strided
    // keeps a warp's accesses together.
    const bool gpu_like = device.max_local_threads > 1;
    const std::int64_t modes[] = {gpu_like ? kStrided : kContiguous, gpu_like ? kContiguous : kStrided};
    const bool repeatable = why_not_repeatable(kernel).empty();  // mode 2 fits lengths a factor does not divide
    for (std::uint32_t axis = 0; axis < KILN_MAX_AXES; ++axis) {
      const auto group = find_index(kernel, Scope::Group, axis);
      if (!group) continue;
      const GroupLength length = group_length(kernel, *group);
      for (std::int64_t mode : modes)
        for (std::int64_t factor : kFactors)
          if (divides(length, factor))
            steps.push_back(make_step(name(), {{"axis", axis}, {"factor", factor}, {"mode", mode}}));
      // Lengths a factor does not divide (constant ones, at least twice the
      // factor: the repeats, fewer than the factor, are under half of L).
      if (length.value && repeatable)
        for (std::int64_t factor : kFactors)
          if (!divides(length, factor) && *length.value >= 2 * factor)
            steps.push_back(make_step(name(), {{"axis", axis}, {"factor", factor}, {"mode", kContiguousAnyLength}}));
    }
    return steps;
  }

  Result<Kernel> apply(const Kernel& kernel, const OptStep& step, const DeviceInfo&) const override {
    KILN_TRY(check_input(step, kernel));
    KILN_TRY_ASSIGN(const auto params, step_params(step, {"axis", "factor", "mode"}));
    const std::int64_t axis = params[0], factor = params[1], mode = params[2];
    if (axis < 0 || axis >= static_cast<std::int64_t>(KILN_MAX_AXES)) return step_error(step, "axis must be 0, 1 or 2");
    if (factor < 2) return step_error(step, "factor must be at least 2");
    if (mode != kContiguous && mode != kStrided && mode != kContiguousAnyLength)
      return step_error(step, "mode must be 0 (contiguous), 1 (strided) or 2 (contiguous, any length)");
    const auto group = find_index(kernel, Scope::Group, static_cast<std::uint32_t>(axis));
    if (!group) return step_error(step, "the kernel has no GROUP index on axis " + std::to_string(axis));
    const GroupLength length = group_length(kernel, *group);
    const bool ragged = !divides(length, factor);
    if (ragged && mode != kContiguousAnyLength)
      return step_error(step, length.value ? "the axis length " + std::to_string(*length.value) + " is not a multiple of " +
                                                 std::to_string(factor) + " (mode 2 takes any length)"
                                           : "the axis length is dynamic and not a known multiple of the factor (pad it "
                                             "first, or mode 2)");
    if (ragged) {
      if (length.value && *length.value < 1) return step_error(step, "the axis is empty");
      if (const std::string why = why_not_repeatable(kernel); !why.empty()) return step_error(step, why);
    }

    const std::vector<bool> declaration = top_level_declarations(kernel);
    const bool barrier_per_iteration = has_local_storage(kernel) && has_local_index(kernel);
    ir::Rewriter rw(kernel);
    ir::Builder& b = rw.out();
    ir::Value groups;
    ir::Value g;
    ir::Value last;  // L - 1, where the factor does not divide L
    for (ValueId id = 0; id < kernel.size(); ++id) {
      if (!declaration[id]) continue;
      if (id != *group) {
        rw.copy(id);
        continue;
      }
      if (!ragged) {
        groups = emit_divided_length(rw, length, factor);
      } else if (length.value) {
        groups = b.constant_i64((*length.value + factor - 1) / factor);
        last = b.constant_i64(*length.value - 1);
      } else {
        const ir::Value n = rw.map(length.op);
        groups = b.div(b.add(n, b.constant_i64(factor - 1)), b.constant_i64(factor));
        last = b.sub(n, b.constant_i64(1));
      }
      g = b.group_index(static_cast<std::uint32_t>(axis), groups);
      rw.drop(id);  // replaced inside the loop below
    }
    const ir::Value j = b.loop(factor);
    ir::Value element = mode == kStrided ? b.add(b.mul(j, groups), g) : b.add(b.mul(g, b.constant_i64(factor)), j);
    if (ragged) element = b.min(element, last);  // the groups past L repeat group L - 1
    rw.replace(*group, element);
    for (ValueId id = 0; id < kernel.size(); ++id)
      if (!declaration[id]) rw.copy(id);
    if (barrier_per_iteration) b.barrier();
    b.end_loop(j);
    return checked_output(step, rw.finish());
  }
};

}  // namespace

const Optimization& coarsen() {
  static const Coarsen instance;
  return instance;
}

}  // namespace kiln::passes::opts
