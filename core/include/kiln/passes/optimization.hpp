// kiln/passes/optimization.hpp - tunable optimizations: each an enumerable
// space of variants (configs) over a kernel and a device, and an apply.
//
// A step names an optimization and its parameters in a small, stable text
// form, e.g. `split_local(axis=0,factor=256)`; a sequence is steps joined by
// "; ". Parameters identify what they act on by properties that survive
// normalization (a grid axis number, the n-th LOOP in program order, ...),
// never by op index, so the text form is what the tuning database stores and
// replays: applying the same sequence to the same normalized kernel always
// gives the same kernel (the same hash).
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/result.hpp"
#include "kiln/runtime/device_info.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::passes {

struct OptStep {
  std::string opt;                                           // optimization name
  std::vector<std::pair<std::string, std::int64_t>> params;  // in the optimization's order

  std::int64_t param(std::string_view key, std::int64_t fallback = 0) const;
  std::string to_string() const;                      // "name(k=v,k=v)"
  static Result<OptStep> parse(std::string_view text);  // errors name the column
  bool operator==(const OptStep&) const = default;
};

using OptSequence = std::vector<OptStep>;
std::string to_string(const OptSequence& sequence);  // steps joined by "; " ("" when empty)
Result<OptSequence> parse_sequence(std::string_view text);

class Optimization {
 public:
  virtual ~Optimization() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;

  // Every variant that applies to `kernel` (normalized) on `device`, most
  // promising first. Finite and fast on any kernel: dynamic lengths are
  // skipped or handled, never looped over.
  virtual std::vector<OptStep> configs(const ir::Kernel& kernel, const DeviceInfo& device) const = 0;

  // Applies one variant. An error (ErrorCode::InvalidArgument) when the step
  // does not fit the kernel; never a crash, never a wrong kernel.
  virtual Result<ir::Kernel> apply(const ir::Kernel& kernel, const OptStep& step,
                                   const DeviceInfo& device) const = 0;
};

// Every tunable optimization, in a stable order.
const std::vector<const Optimization*>& optimizations();
const Optimization* find_optimization(std::string_view name);

// Applies `sequence` to a normalized kernel, normalizing after each step.
Result<ir::Kernel> apply_sequence(const ir::Kernel& normalized, const OptSequence& sequence,
                                  const DeviceInfo& device);

// The whole lowering for a launch: normalize, apply_sequence, finalize,
// verify. What the autotuner measures and what it replays.
Result<ir::Kernel> optimize(const ir::Kernel& kernel, const OptSequence& sequence, const DeviceInfo& device);

}  // namespace kiln::passes
