// The dummy device's timing model: a deterministic time for one run of a
// kernel, from what the interpreter counted (kiln/sdk/interpreter.hpp) and
// the device's configuration. docs/dummy.md writes out the formula and why
// each term is there.
#pragma once

#include "dummy.hpp"

namespace kiln::dummy {

struct ModelTime {
  double resident_groups = 0;     // per compute unit (occupancy)
  double parallel_fraction = 0;   // of the device's throughput the launch can use
  double issue_slots = 0;         // warp instructions, weighted by cost
  double global_bytes = 0;        // moved to/from memory (whole sectors)
  double compute_ns = 0;
  double memory_ns = 0;
  double barrier_ns = 0;
  double launch_ns = 0;
  double total_ns = 0;
};

ModelTime model_time(const sdk::ExecStats& stats, const DeviceConfig& device);

// The factor a simulated sample is multiplied by: 1 + noise * z, with z a
// standard normal drawn from (seed, kernel hash, run index) alone; at least 0.05.
double noise_factor(double noise, std::uint64_t seed, std::uint64_t kernel_hash, std::uint64_t run);

}  // namespace kiln::dummy
