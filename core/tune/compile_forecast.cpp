#include "compile_forecast.hpp"

#include <kiln/sdk/wire.hpp>

#include <algorithm>
#include <optional>

namespace kiln::tune::detail {

CompileWeight compile_weight(const ir::Kernel& kernel) {
  CompileWeight weight{kernel.size(), false};
  for (ir::ValueId id = 0; id < kernel.size(); ++id)
    if (kernel[id].kind == ir::OpKind::Wgmma) {
      weight.ops += sdk::wgmma_register_elements(kernel[id].attr, kernel[id].code);
      weight.superlinear = true;
    }
  return weight;
}

void CompileForecast::took(std::size_t ops, double seconds) {
  std::lock_guard lock(mutex_);
  compiles_.push_back({std::max<std::size_t>(ops, 1), seconds});
}

double CompileForecast::predict_s(const CompileWeight& weight) const {
  std::lock_guard lock(mutex_);
  if (compiles_.empty()) return 0;
  Compile largest = compiles_.front();
  double slowest_s = 0;
  for (const Compile& c : compiles_) {
    slowest_s = std::max(slowest_s, c.seconds);
    if (c.ops > largest.ops || (c.ops == largest.ops && c.seconds > largest.seconds)) largest = c;
  }
  std::optional<double> fixed_s;
  for (const Compile& c : compiles_)
    if (c.ops < largest.ops) fixed_s = std::min(fixed_s.value_or(c.seconds), c.seconds);
  const double fixed = std::min(fixed_s.value_or(0), largest.seconds);
  const double ratio = std::max(1.0, static_cast<double>(weight.ops) / static_cast<double>(largest.ops));
  const double growth = weight.superlinear ? ratio * ratio : ratio;
  return std::max(slowest_s, fixed + (largest.seconds - fixed) * growth);
}

std::optional<std::string> CompileForecast::refuses(const CompileWeight& weight, Clock::time_point now) const {
  const double predicted = predict_s(weight);
  const double left = std::chrono::duration<double>(deadline_ - now).count();
  if (predicted <= 0 || predicted <= left) return std::nullopt;
  return "not compiled: a kernel of compile weight " + std::to_string(weight.ops) + " is expected to compile for about " +
         std::to_string(predicted) + " s (the largest compile so far, its time above the fastest scaled by the size" +
         (weight.superlinear ? "'s square" : "") + "), and " + std::to_string(std::max(0.0, left)) +
         " s were left before the budget's deadline";
}

}  // namespace kiln::tune::detail
