#include "tuning_deadline.hpp"

#include <algorithm>
#include <cmath>

namespace kiln::tune::detail {

double TuningDeadline::left(double now) const { return std::max(0.0, deadline() - now); }

void TuningDeadline::measured(double seconds, bool ran) {
  if (!ran) return;
  if (cheapest_measure_s_ < 0 || seconds < cheapest_measure_s_) cheapest_measure_s_ = seconds;
}

namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace

double TuningDeadline::next_needs(bool needs_compile) const {
  double need = std::max(0.0, cheapest_measure_s_);
  if (needs_compile) need += median(compile_waits_);
  return need;
}

bool TuningDeadline::compile_fits(double now) const {
  const double longest_compile =
      compile_durations_.empty() ? 0.0 : *std::max_element(compile_durations_.begin(), compile_durations_.end());
  return now + std::max(0.0, cheapest_measure_s_) + std::max(median(compile_waits_), longest_compile) <= deadline();
}

double TuningDeadline::run_cap_s(double now) const {
  return std::max({left(now) / 2, budget_s_ * kMinRunCapShare, kMinRunCapSeconds});
}

std::uint64_t TuningDeadline::run_timeout_ns(std::uint64_t rule_ns, bool survives_timeout, double now) const {
  if (rule_ns == 0 || !survives_timeout) return rule_ns;
  return std::min(rule_ns, static_cast<std::uint64_t>(std::ceil(run_cap_s(now) * 1e9)));
}

}  // namespace kiln::tune::detail
