// kiln/passes/pipeline.hpp - the always-on passes and the lowering pipeline,
// written in one place as lists of named steps.
//
//   normalize(k)  = the always-on passes, repeated until the kernel stops
//                   changing (at most kMaxNormalizeRounds rounds)
//   optimize(k, seq) = normalize -> for each step: apply + normalize
//                   -> finalize (fuse multiply-add, exp/ln <-> exp2/log2 for
//                   the device, normalize) -> verify
//
// Every pass preserves results exactly as the reference interpreter defines
// them (floating-point reassociation excepted where a pass says so: FMA
// fusion and reassociate change rounding, within the tolerances tests use).
// Passes are deterministic: the same kernel in gives the same kernel out.
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/result.hpp"
#include "kiln/runtime/device_info.hpp"

#include <string_view>
#include <vector>

namespace kiln::passes {

// One always-on pass: a pure function from kernel to kernel. `run` expects a
// kernel that passes ir::verify and returns one that does (the differential
// tests check it); normalize, finalize and optimize check their input, so
// call ir::verify first only when running a single pass yourself.
struct Pass {
  std::string_view name;
  ir::Kernel (*run)(const ir::Kernel& kernel, const DeviceInfo& device);
};

// The always-on passes in pipeline order (DCE last).
const std::vector<Pass>& always_on_passes();
// The passes finalize runs after the tuned sequence, in order.
const std::vector<Pass>& finalize_passes();

inline constexpr int kMaxNormalizeRounds = 8;

// A kernel that fails ir::verify comes back unchanged (optimize reports why).
ir::Kernel normalize(const ir::Kernel& kernel, const DeviceInfo& device);
ir::Kernel finalize(const ir::Kernel& kernel, const DeviceInfo& device);

// Looks a pass up by name (for `kiln ir --pass NAME` and tests).
const Pass* find_pass(std::string_view name);

}  // namespace kiln::passes
