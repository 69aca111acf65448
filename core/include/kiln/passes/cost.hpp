// kiln/passes/cost.hpp - the cost model: an estimate of a kernel's run time
// on a device from counted work, used to rank candidates before measuring
// (measurement decides). The formula is documented in docs/cost-model.md.
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/runtime/device_info.hpp"

#include <cstdint>
#include <span>

namespace kiln::passes {

struct CostEstimate {
  double total_ns = 0;
  // The terms it is made of (see docs/cost-model.md).
  double launch_ns = 0;
  double compute_ns = 0;
  double global_memory_ns = 0;
  double local_memory_ns = 0;
  double barrier_ns = 0;
  double occupancy = 0;           // fraction of the device's threads kept busy (0..1)
  double flops = 0;               // floating-point ops counted (MAD counts 2, exp 1)
  double global_bytes = 0;        // bytes moved to/from global memory, after coalescing
};

// `variables`: values of VARIABLE params by slot (dynamic lengths); a
// length that cannot be evaluated is assumed to be 1024 (documented).
CostEstimate estimate_cost(const ir::Kernel& kernel, const DeviceInfo& device,
                           std::span<const std::int64_t> variables = {});

}  // namespace kiln::passes
