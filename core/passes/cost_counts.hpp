// What one launch of a kernel does, counted from its ops (internal to
// libkiln): the cost model's inputs (cost.cpp turns them into time; the
// formula is in docs/cost-model.md).
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/passes/cost.hpp"
#include "kiln/runtime/device_info.hpp"

#include <array>
#include <cstdint>
#include <span>

namespace kiln::passes::detail {

// The trip count or grid length assumed where it cannot be evaluated.
inline constexpr double kUnknownLength = 1024;

// Arithmetic classes, priced differently (cost.cpp).
enum class OpCost : std::uint8_t { IntAlu, IntDiv, FloatAlu, DoubleAlu, FloatSpecial, ExpLn, Exp2Log2, Convert, Move, Control, Count };
inline constexpr std::size_t kOpCostCount = static_cast<std::size_t>(OpCost::Count);

struct WorkCounts {
  // The grid.
  double groups = 1;
  std::array<double, 3> local = {1, 1, 1};
  double threads_per_group = 1;

  // Per thread (summed over loop trip counts; an IF's instructions count as
  // taken, the global bytes of its body by the share of threads that take
  // it where its condition decides that: cost_counts.cpp, taken_share).
  std::array<double, kOpCostCount> lane_ops{};  // per class, vector ops per lane
  std::array<double, kOpCostCount> issues{};    // per class, in device SIMD slots (see cost.cpp)
  double flops = 0;                             // floating-point lanes (MAD two, exp one)
  double global_bytes_used = 0;                 // bytes the accesses ask for
  double global_bytes_moved = 0;                // after coalescing: what memory really moves
  double global_accesses = 0;
  double local_bytes = 0;
  double local_accesses = 0;
  double register_bytes = 0;
  double register_accesses = 0;
  double barriers = 0;                          // barrier crossings per thread (= per group)
  // The thread's barrier phases each as the longer of its compute and its
  // global traffic, summed, in bytes (an instruction as the bytes memory
  // moves in its time, bytes_per_issue): what one group alone on a unit
  // takes, its phases in turn (cost.cpp).
  double phased_bytes = 0;

  // Storage of the kernel.
  double local_bytes_per_group = 0;
  double register_bytes_per_thread = 0;
};

// Instructions of one thread, priced by class (cost.cpp's prices): what
// the compute term counts.
double priced_issue(const WorkCounts& work, const DeviceInfo& device);

// Bytes of global traffic a thread's share of memory moves in the time its
// share of the unit issues one priced instruction, for a group of `threads`
// threads (compute and memory terms on one scale).
double bytes_per_issue(double threads, const DeviceInfo& device);

// `variables`: VARIABLE param values by slot.
WorkCounts count_work(const ir::Kernel& kernel, const DeviceInfo& device, std::span<const std::int64_t> variables);

// The formula: counted work priced by the device (estimate_cost is
// count_work then this; the learned model's features need both).
CostEstimate price_work(const WorkCounts& work, const DeviceInfo& device);

}  // namespace kiln::passes::detail
