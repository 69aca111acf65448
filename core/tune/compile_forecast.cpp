#include "compile_forecast.hpp"

#include <kiln/sdk/wire.hpp>

#include <algorithm>

namespace kiln::tune::detail {

std::size_t compile_weight(const ir::Kernel& kernel) {
  std::size_t weight = kernel.size();
  for (ir::ValueId id = 0; id < kernel.size(); ++id)
    if (kernel[id].kind == ir::OpKind::Wgmma) weight += sdk::wgmma_register_elements(kernel[id].attr, kernel[id].code);
  return weight;
}

void CompileForecast::took(std::size_t ops, double seconds) {
  std::lock_guard lock(mutex_);
  if (seconds > slowest_s_) {
    slowest_s_ = seconds;
    slowest_ops_ = std::max<std::size_t>(ops, 1);
  }
}

double CompileForecast::predict_s(std::size_t ops) const {
  std::lock_guard lock(mutex_);
  if (slowest_ops_ == 0) return 0;
  const double ratio = std::max(1.0, static_cast<double>(ops) / static_cast<double>(slowest_ops_));
  return slowest_s_ * ratio * ratio;
}

std::optional<std::string> CompileForecast::refuses(std::size_t ops, Clock::time_point now) const {
  const double predicted = predict_s(ops);
  const double left = std::chrono::duration<double>(deadline_ - now).count();
  if (predicted <= 0 || predicted <= left) return std::nullopt;
  return "not compiled: a kernel of compile weight " + std::to_string(ops) + " is expected to compile for about " +
         std::to_string(predicted) + " s (the slowest compile so far, scaled by the square of the size), and " +
         std::to_string(std::max(0.0, left)) + " s were left before the budget's deadline";
}

}  // namespace kiln::tune::detail
