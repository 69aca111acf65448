// apply_sequence and optimize (optimization.hpp): the tuned part of the
// lowering, checked at every step so that a faulty optimization or pass
// gives an error naming it, never a wrong kernel.
#include "always_on.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/passes/optimization.hpp"
#include "kiln/passes/pipeline.hpp"

#include <string>

namespace kiln::passes {

namespace {

std::string known_names() {
  std::string names;
  for (const Optimization* optimization : optimizations())
    names += (names.empty() ? "" : ", ") + std::string(optimization->name());
  return names.empty() ? "none registered" : names;
}

Error with_step(Error error, std::size_t index, const OptStep& step) {
  error.message = "step " + std::to_string(index + 1) + " `" + step.to_string() + "`: " + error.message;
  if (error.function.empty()) error.function = "optimize";
  return error;
}

}  // namespace

Result<ir::Kernel> apply_sequence(const ir::Kernel& normalized, const OptSequence& sequence, const DeviceInfo& device) {
  ir::Kernel current = normalized;
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    const OptStep& step = sequence[i];
    const Optimization* optimization = find_optimization(step.opt);
    if (optimization == nullptr)
      return with_step(make_error(ErrorCode::NotFound, "unknown optimization '" + step.opt + "' (known: " + known_names() + ")"),
                       i, step);
    Result<ir::Kernel> applied = optimization->apply(current, step, device);
    if (!applied.ok()) return with_step(std::move(applied).error(), i, step);
    if (Result<void> valid = ir::verify(*applied); !valid.ok())
      return with_step(make_error(ErrorCode::Internal, "the optimization produced an invalid kernel (a bug in it): " +
                                                           valid.error().to_string() + "\nkernel before the step:\n" +
                                                           ir::print(current)),
                       i, step);
    KILN_TRY_ASSIGN(current, detail::normalize_checked(*applied, device));
  }
  return current;
}

Result<ir::Kernel> optimize(const ir::Kernel& kernel, const OptSequence& sequence, const DeviceInfo& device) {
  if (Result<void> valid = ir::verify(kernel); !valid.ok()) return std::move(valid).error();
  KILN_TRY_ASSIGN(ir::Kernel normalized, detail::normalize_checked(kernel, device));
  KILN_TRY_ASSIGN(ir::Kernel tuned, apply_sequence(normalized, sequence, device));
  return detail::finalize_checked(tuned, device);
}

}  // namespace kiln::passes
