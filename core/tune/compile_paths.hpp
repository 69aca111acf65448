// Internal: the three ways Device::compile makes a program
// (core/tune/device_compile.cpp). In tune/ because Tuned needs the tuning
// database and the search, which sit above the runtime (docs/architecture.md).
#pragma once

#include "kiln/compile_options.hpp"
#include "kiln/passes/optimization.hpp"
#include "kiln/runtime/device.hpp"

namespace kiln::tune::detail {

// The schedule a kernel gets when nothing was measured: the one place that
// choice is made: tune::heuristic_schedule (kiln/tune/heuristic.hpp).
struct HeuristicLowering {
  passes::OptSequence sequence;
  ir::Kernel kernel;  // passes::optimize(given, sequence, device)
};
Result<HeuristicLowering> heuristic_lowering(const ir::Kernel& kernel, const DeviceInfo& device);

// Each fills `report` (all but requested and seconds) and returns the
// program; errors name the op of `kernel` as given.
Result<Program> compile_heuristic(const Device& device, const ir::Kernel& kernel,
                                  std::optional<passes::BoundsPolicy> bounds, CompileReport& report);
Result<Program> compile_tuned(const Device& device, const ir::Kernel& kernel, const CompileOptions& options,
                              CompileReport& report);

}  // namespace kiln::tune::detail
