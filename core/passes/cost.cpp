// The cost model's formula (docs/cost-model.md): counted work (cost_counts)
// priced by the device's description.
#include "kiln/passes/cost.hpp"

#include "cost_counts.hpp"

#include <algorithm>
#include <cmath>

namespace kiln::passes {

namespace {

using detail::OpCost;

// Relative price of one instruction of each class (an f32 add is 1).
double price(OpCost c, const DeviceInfo& device) {
  const bool gpu = device.warp_size > 1;
  switch (c) {
    case OpCost::IntDiv: return 20;
    case OpCost::DoubleAlu: return gpu ? 2 : 1;
    case OpCost::FloatSpecial: return 4;
    // exp2 and a multiply, or a libm-style call: on a CPU a vector math
    // library's, about 20 cycles a 16-lane call (libmvec's expf on c:0,
    // BM_MvecExpf: 4.7 G exp/s over 2 cores), else 8.
    case OpCost::ExpLn: return device.native_exp2() ? 2 : device.kind == DeviceKind::Cpu ? 20 : 8;
    case OpCost::Exp2Log2: return device.native_exp2() ? 1 : device.kind == DeviceKind::Cpu ? 20 : 8;
    case OpCost::Move: return 0.5;
    default: return 1;
  }
}

// One core's time to switch between a group's subgroups at a barrier on a
// CPU that runs them in turn (lavapipe; see price_work).
constexpr double kSubgroupSwitchNs = 400;

// Fields a plugin left at 0 get working defaults.
struct Machine {
  double warp, units, clock_hz, lanes_per_s, bandwidth, max_threads_per_unit, local_per_unit, register_file;
  double latency_warps, simd;
};

Machine machine_of(const DeviceInfo& d) {
  Machine m{};
  m.warp = std::max<double>(d.warp_size, 1);
  m.units = std::max<double>(d.compute_units, 1);
  m.clock_hz = (d.clock_mhz > 0 ? d.clock_mhz : 1000) * 1e6;
  m.simd = m.warp > 1 ? 1 : std::max<double>(d.vector_widths().back(), 1);
  // peak_gflops counts an FMA as two flops on every SIMD lane.
  const double peak = d.peak_gflops > 0 ? d.peak_gflops : m.units * m.clock_hz / 1e9 * m.warp * m.simd * 2;
  m.lanes_per_s = peak * 1e9 / 2;
  m.bandwidth = (d.memory_bandwidth_gbps > 0 ? d.memory_bandwidth_gbps : 20) * 1e9;
  m.max_threads_per_unit = m.warp > 1 ? 2.0 * std::max<double>(d.max_local_threads, m.warp) : 1;
  // local_memory_bytes is the most one group may have. Where that is a
  // small share of a unit (48 KB: older GPUs, the presets) a unit holds
  // about two such groups; where a group may opt in to nearly all of it
  // (GPUs of sm_80 and later: 163-227 KB of a 164-228 KB unit) the unit
  // holds one such group, plus the 1 KB per group the driver reserves (as
  // the CUDA dialect's launch bounds count it): a 201 KB row one group per
  // H200 SM, a 110 KB one two.
  const double local_limit = static_cast<double>(d.local_memory_bytes);
  const bool unit_sized = m.warp > 1 && local_limit >= 64 * 1024;
  m.local_per_unit = d.local_memory_bytes == 0 ? 1e300 : unit_sized ? local_limit + 1024 : 2.0 * local_limit;
  m.register_file = d.register_bytes > 0 ? static_cast<double>(d.register_bytes) * std::max<double>(d.max_local_threads, 1) : 1e300;
  m.latency_warps = m.warp > 1 ? 8 : 1;
  return m;
}

// Whether a GPU's group with barriers runs alone on its unit, with no
// other group's work to overlap its phases: a unit gets fewer than two, or
// cannot hold a second (price_work asks only on GPUs: a CPU's group with
// warps, lavapipe's, switches subgroups at each barrier, which barrier_ns
// prices). Registers as ptxas allocated them: the H200's
// register-cached softmax rows at n = 50257 took 64 registers a thread at
// 1024 threads for 54 values of REGISTER storage (one group per SM), about
// 10 registers of live values beside them; 16 (64 bytes) are allowed here,
// not the 128 bytes price_work's occupancy assumes: a 512-thread group
// keeping 34 values a thread (layernorm 16384^2 f32) has room for a second,
// which the larger figure denies by 3% (and would charge it its phases).
bool alone_on_unit(const detail::WorkCounts& w, const Machine& m, double padded_threads, double work_per_unit) {
  if (m.warp <= 1 || w.barriers == 0) return false;
  const bool threads_fit = 2 * padded_threads <= m.max_threads_per_unit;
  const bool local_fits = 2 * w.local_bytes_per_group <= m.local_per_unit;
  const bool registers_fit = 2 * padded_threads * (64 + w.register_bytes_per_thread) <= m.register_file;
  return work_per_unit < 2 || !(threads_fit && local_fits && registers_fit);
}

double launch_overhead_ns(const DeviceInfo& d) {
  switch (d.kind) {
    case DeviceKind::Cpu: return 2000;
    case DeviceKind::Gpu: return 5000;
    default: return 10000;
  }
}

}  // namespace

namespace detail {

double priced_issue(const WorkCounts& w, const DeviceInfo& device) {
  double issue = 0;
  for (std::size_t c = 0; c < kOpCostCount; ++c) issue += w.issues[c] * price(static_cast<OpCost>(c), device);
  issue += 0.5 * w.register_accesses;  // register storage: moves, or stack traffic on CPUs
  issue += w.global_accesses + w.local_accesses;  // address arithmetic and issue of each access
  return issue;
}

// compute_ns and global_memory_ns below, per thread, set equal.
double bytes_per_issue(double threads, const DeviceInfo& device) {
  const Machine m = machine_of(device);
  const double padded_threads = std::ceil(threads / m.warp) * m.warp;
  return padded_threads * m.simd * m.bandwidth / (threads * m.lanes_per_s);
}

}  // namespace detail

CostEstimate estimate_cost(const ir::Kernel& kernel, const DeviceInfo& device, std::span<const std::int64_t> variables) {
  return detail::price_work(detail::count_work(kernel, device, variables), device);
}

namespace detail {

CostEstimate price_work(const WorkCounts& w, const DeviceInfo& device) {
  const Machine m = machine_of(device);
  CostEstimate e;

  // Occupancy: groups resident per unit (threads, LOCAL memory, registers),
  // units kept busy, and warps per unit to hide memory latency.
  const double warps_per_group = std::ceil(w.threads_per_group / m.warp);
  const double padded_threads = warps_per_group * m.warp;
  const double warp_efficiency = w.threads_per_group / padded_threads;
  const double register_per_thread = 128 + w.register_bytes_per_thread;  // ~32 live values + storage
  double resident = std::min(32.0, std::floor(m.max_threads_per_unit / padded_threads));
  if (w.local_bytes_per_group > 0) resident = std::min(resident, std::floor(m.local_per_unit / w.local_bytes_per_group));
  resident = std::min(resident, std::floor(m.register_file / (padded_threads * register_per_thread)));
  resident = std::max(resident, 1.0);
  const double busy_units = std::min(m.units, w.groups);
  const double groups_per_unit = std::min(resident, std::ceil(w.groups / busy_units));
  const double latency_hiding = std::min(1.0, groups_per_unit * warps_per_group / m.latency_warps);
  const double parallel = busy_units / m.units * latency_hiding;
  e.occupancy = parallel * warp_efficiency;

  // Compute: instructions of every thread slot (idle lanes of a partial warp
  // included) at the device's lane rate; SIMD instructions on CPUs.
  const double thread_slots = w.groups * padded_threads;
  e.compute_ns = thread_slots * priced_issue(w, device) * m.simd / (m.lanes_per_s * parallel) * 1e9;

  // Global memory: bytes moved after coalescing; registers beyond the
  // device's budget spill there too on a GPU (local memory is DRAM behind
  // the caches). A CPU's REGISTER array past its vector registers is the
  // thread's stack, in L1/L2 (row_cache keeps at most 256 KiB there): its
  // loads and stores are instructions like any other, counted in `issue`
  // above. Counted as DRAM traffic, softmax's cached exponentials (a 64 KiB
  // row) looked dearer than computing each exp twice, and the heuristic
  // took the kernel that does, 2x slower on c:0.
  // What a thread may keep: register_bytes is a thread's share at the most
  // threads a group may have; a smaller group's threads have more (the
  // register file over its threads, at most 255 registers, less ~32 live
  // values): simt_staged's 128-thread groups hold 128 accumulators a thread
  // without spilling (255 registers on the H200, none spilled), which the
  // register_bytes budget alone took for a spill and the heuristic passed
  // over (45.8 against 41.2 TFLOP/s at 4096^3 f32).
  double moved = w.global_bytes_moved;
  const double thread_budget =
      std::max(static_cast<double>(device.register_bytes), std::min(m.register_file / padded_threads, 1020.0) - 128);
  if (device.kind != DeviceKind::Cpu && device.register_bytes > 0 && w.register_bytes_per_thread > thread_budget)
    moved += w.register_bytes;
  e.global_bytes = moved * w.groups * w.threads_per_group;
  e.global_memory_ns = e.global_bytes / (m.bandwidth * parallel) * 1e9;

  // LOCAL memory: an on-chip store about 8x faster than global memory.
  e.local_memory_ns = w.local_bytes * w.groups * w.threads_per_group / (8 * m.bandwidth * parallel) * 1e9;

  // Barriers: each round of resident groups waits at each barrier.
  const double rounds = std::ceil(w.groups / (busy_units * groups_per_unit));
  e.barrier_ns = w.barriers * rounds * (20 + 2 * warps_per_group) / m.clock_hz * 1e9;
  // A CPU whose groups run as SIMD subgroups (lavapipe: warp 8) runs a
  // group's subgroups in turn on one core and switches between them at
  // every barrier. Measured on lavapipe (2 cores, which it reports as 0
  // units): sum-rows 2048^2 in groups of 64 took 17-20 ms against 5.6-6.5
  // for one thread a row, rmsnorm 4096^2 161 against 92-101 ms: about
  // 0.4 us of one core per subgroup and barrier.
  if (device.kind == DeviceKind::Cpu && m.warp > 1)
    e.barrier_ns = w.barriers * w.groups * warps_per_group * kSubgroupSwitchNs / m.units;

  e.launch_ns = launch_overhead_ns(device);
  e.flops = w.flops * w.groups * w.threads_per_group;
  // Compute and memory overlap (the max), across the resident groups. A
  // group alone on its unit (a GPU's: barriers, and room or work for no
  // second group) overlaps them only within each phase between its
  // barriers: a row's loads, its trees, its writes run in turn, and memory
  // idles while the group computes (phased_bytes, cost_counts.cpp). On the
  // H200 softmax 5342 x 50257 f16 with its row cached in registers at 1024
  // threads, one group per SM, ran at 0.41-0.43x of add, priced as if its
  // compute hid under its loads; blocks of 8 at 512 threads, two groups per
  // SM, at 0.75x. An earlier rule, compute plus memory for every such
  // kernel, also charged pipelined kernels (a staged matrix product's loads
  // and MMAs share each phase) and moved their picks (docs/cost-model.md).
  double busy_ns = std::max(e.compute_ns, e.global_memory_ns);
  if (device.kind == DeviceKind::Gpu && alone_on_unit(w, m, padded_threads, std::ceil(w.groups / busy_units)))
    busy_ns = std::max(busy_ns, w.phased_bytes * w.groups * w.threads_per_group / (m.bandwidth * parallel) * 1e9);
  e.total_ns = e.launch_ns + busy_ns + e.local_memory_ns + e.barrier_ns;
  return e;
}

}  // namespace detail

}  // namespace kiln::passes
