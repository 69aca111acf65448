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
  std::optional<double> best;
  for (const Compile& c : compiles_) {
    const double ratio = std::max(1.0, static_cast<double>(weight.ops) / static_cast<double>(c.ops));
    const double predicted = c.seconds * (weight.superlinear ? ratio * ratio : ratio);
    best = std::min(best.value_or(predicted), predicted);
  }
  return best.value_or(0);
}

std::optional<std::string> CompileForecast::refuses(const CompileWeight& weight, Clock::time_point now) const {
  const double predicted = predict_s(weight);
  const double left = std::chrono::duration<double>(deadline_ - now).count();
  if (predicted <= 0 || predicted <= left) return std::nullopt;
  return "not compiled: a kernel of compile weight " + std::to_string(weight.ops) + " is expected to compile for about " +
         std::to_string(predicted) + " s (the compile so far that says least, scaled by the size" +
         (weight.superlinear ? "'s square" : "") + " where this kernel is larger), and " + std::to_string(std::max(0.0, left)) +
         " s were left before the budget's deadline";
}

}  // namespace kiln::tune::detail
