#include "tuning_deadline.hpp"

#include <algorithm>
#include <cmath>

namespace kiln::tune::detail {

double TuningDeadline::left(double now) const { return std::max(0.0, deadline() - now); }

void TuningDeadline::measured(double seconds, bool ran) {
  if (!ran) return;
  if (cheapest_measure_s_ < 0 || seconds < cheapest_measure_s_) cheapest_measure_s_ = seconds;
}

double TuningDeadline::next_needs(bool needs_compile) const {
  double need = std::max(0.0, cheapest_measure_s_);
  if (needs_compile && !compile_waits_.empty()) {
    std::vector<double> waits = compile_waits_;
    const auto middle = waits.begin() + static_cast<std::ptrdiff_t>(waits.size() / 2);
    std::nth_element(waits.begin(), middle, waits.end());
    need += *middle;
  }
  return need;
}

double TuningDeadline::run_cap_s(double now) const {
  return std::max({left(now) / 2, budget_s_ * kMinRunCapShare, kMinRunCapSeconds});
}

std::uint64_t TuningDeadline::run_timeout_ns(std::uint64_t rule_ns, bool survives_timeout, double now) const {
  if (rule_ns == 0 || !survives_timeout) return rule_ns;
  return std::min(rule_ns, static_cast<std::uint64_t>(std::ceil(run_cap_s(now) * 1e9)));
}

}  // namespace kiln::tune::detail
