// The learned cost model's features: the analytic model's counts and terms
// in log space (cost_features.hpp).
#include "kiln/passes/cost_features.hpp"

#include "cost_counts.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace kiln::passes {

namespace {

constexpr std::array<std::string_view, 28> kNames = {
    "analytic_ns",      "compute_ns",          "global_memory_ns",   "local_memory_ns",     "barrier_ns",
    "occupancy",        "groups",              "threads_per_group",  "int_issues",          "int_div_issues",
    "float_issues",     "double_issues",       "float_special_issues", "exp_ln_issues",     "exp2_log2_issues",
    "convert_issues",   "move_issues",         "control_issues",     "flops",               "global_bytes_moved",
    "global_bytes_used", "global_accesses",    "local_bytes",        "register_bytes",      "barriers_per_group",
    "local_bytes_per_group", "register_bytes_per_thread", "kernel_ops",
};
static_assert(detail::kOpCostCount == 10, "one *_issues feature per OpCost class");

double log_of(double value) { return std::log1p(std::max(value, 0.0)); }

}  // namespace

std::span<const std::string_view> cost_feature_names() { return kNames; }

std::vector<double> cost_features(const ir::Kernel& kernel, const DeviceInfo& device,
                                  std::span<const std::int64_t> variables) {
  const detail::WorkCounts w = detail::count_work(kernel, device, variables);
  const CostEstimate e = detail::price_work(w, device);
  // Per-thread counts times the threads of the launch: what the whole launch does.
  const double threads = w.groups * w.threads_per_group;
  std::vector<double> f;
  f.reserve(kNames.size());
  for (double v : {e.total_ns, e.compute_ns, e.global_memory_ns, e.local_memory_ns, e.barrier_ns}) f.push_back(log_of(v));
  f.push_back(e.occupancy);  // 0..1 already
  f.push_back(log_of(w.groups));
  f.push_back(log_of(w.threads_per_group));
  for (double issues : w.issues) f.push_back(log_of(issues * threads));
  for (double v : {w.flops, w.global_bytes_moved, w.global_bytes_used, w.global_accesses, w.local_bytes, w.register_bytes})
    f.push_back(log_of(v * threads));
  f.push_back(log_of(w.barriers));
  f.push_back(log_of(w.local_bytes_per_group));
  f.push_back(log_of(w.register_bytes_per_thread));
  f.push_back(log_of(static_cast<double>(kernel.size())));
  return f;
}

}  // namespace kiln::passes
