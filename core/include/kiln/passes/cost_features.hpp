// kiln/passes/cost_features.hpp - what the learned cost model sees of a
// kernel on a device: the analytic model's estimate and its terms, and the
// work it counted (instruction classes, bytes, threads, groups, LOCAL and
// register storage, barriers, code size), each in log space so that kernels
// of any size share one scale (docs/cost-model.md, "The learned model").
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/runtime/device_info.hpp"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace kiln::passes {

// Bumped whenever the list below changes: stored features of another
// version are not trained on (the tuning database keeps the version).
inline constexpr std::uint32_t kCostFeaturesVersion = 11;  // 2: on a CPU, spilled REGISTER arrays are no DRAM traffic and exp costs 20;
                                                         // 3: on a GPU, a smaller group's threads may keep more registers (up to 255);
                                                         // 4: GPU vectors over 16 bytes as 16-byte pieces, lavapipe's barriers;
                                                         // 5: a GPU group alone on its unit pays its barrier phases in turn;
                                                         // 6: global bytes under a thread-varying IF by the share of threads that take it;
                                                         // 7: a GPU load the same in every thread of a group moves its sectors once per group;
                                                         // 8: a GPU thread's neighbouring scalar loads share the sectors they span;
                                                         // 9: a CPU's vector stores at any element index read each line first;
                                                         // 10: and so do its stores of less than a whole vector (scalar ones);
                                                         // 11: a CPU's accesses that together cover their stride stream

// The names, in order; the first is always the analytic estimate,
// log(1 + estimate_cost(...).total_ns).
std::span<const std::string_view> cost_feature_names();

// One value per name, computed with a single count of the kernel's work.
std::vector<double> cost_features(const ir::Kernel& kernel, const DeviceInfo& device,
                                  std::span<const std::int64_t> variables = {});

}  // namespace kiln::passes
