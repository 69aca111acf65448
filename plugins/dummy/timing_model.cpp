#include "timing_model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kiln::dummy {

namespace {

// Issue slots one warp instruction of each op class takes (an f32 add: 1).
double issue_cost(sdk::OpClass c, const DeviceConfig& device) {
  const bool native_exp2 = (device.info.flags & KILN_DEVICE_NATIVE_EXP2) != 0;
  switch (c) {
    case sdk::OpClass::IntDiv: return 8;
    case sdk::OpClass::DoubleAlu: return device.model.f64_cost;
    case sdk::OpClass::FloatSpecial: return 4;
    case sdk::OpClass::ExpLn: return native_exp2 ? 2 : 4;     // exp2 plus a multiply
    case sdk::OpClass::Exp2Log2: return native_exp2 ? 1 : 4;
    default: return 1;
  }
}

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

ModelTime model_time(const sdk::ExecStats& s, const DeviceConfig& device) {
  const kiln_device_info& info = device.info;
  const ModelParams& m = device.model;
  const double warp = info.warp_size;
  const double units = info.compute_units;
  const double groups = static_cast<double>(std::max<std::uint64_t>(s.groups, 1));
  const double warps_per_group = std::ceil(static_cast<double>(std::max<std::uint64_t>(s.threads_per_group, 1)) / warp);

  // Occupancy: groups resident on one unit at once, limited by threads,
  // group slots, LOCAL memory and the register file.
  const double threads_per_group = warps_per_group * warp;
  double resident = std::min<double>(m.max_groups_per_unit, std::floor(m.max_threads_per_unit / threads_per_group));
  if (s.local_bytes_per_group > 0)
    resident = std::min(resident, std::floor(static_cast<double>(m.local_memory_per_unit) / s.local_bytes_per_group));
  const double register_bytes_per_thread = 128.0 + s.register_bytes_per_thread;  // 32 registers of values + storage
  resident = std::min(resident, std::floor(m.register_file_bytes / (threads_per_group * register_bytes_per_thread)));
  resident = std::max(resident, 1.0);

  // Parallelism the launch offers: busy units, and warps per unit to hide latency.
  const double busy_units = std::min(units, groups);
  const double groups_per_unit = std::min(resident, std::ceil(groups / busy_units));
  const double warps_per_unit = groups_per_unit * warps_per_group;
  const double parallel = busy_units / units * std::min(1.0, warps_per_unit / m.latency_warps);

  ModelTime t;
  t.resident_groups = resident;
  t.parallel_fraction = parallel;
  for (std::size_t c = 0; c < sdk::kOpClassCount; ++c)
    t.issue_slots += static_cast<double>(s.warp_ops[c]) * issue_cost(static_cast<sdk::OpClass>(c), device);
  for (const sdk::MemoryStats& space : s.memory) t.issue_slots += static_cast<double>(space.warp_accesses);

  // Global traffic in whole sectors: strided access moves more bytes than it uses.
  t.global_bytes = static_cast<double>(s.global().sectors) * m.sector_bytes;
  if (s.register_bytes_per_thread > info.register_bytes)  // spilled to memory
    t.global_bytes += static_cast<double>(s.registers().load_bytes + s.registers().store_bytes);

  const double warp_instructions_per_s = info.peak_gflops * 1e9 / (2.0 * warp);  // an FMA is 2 flops
  t.compute_ns = t.issue_slots / (warp_instructions_per_s * parallel) * 1e9;
  t.memory_ns = t.global_bytes / (info.memory_bandwidth_gbps * 1e9 * parallel) * 1e9;
  t.barrier_ns = static_cast<double>(s.barriers) * m.barrier_cycles / (info.clock_mhz * 1e6) /
                 (busy_units * groups_per_unit) * 1e9;
  t.launch_ns = m.launch_overhead_ns;
  t.total_ns = t.launch_ns + std::max(t.compute_ns, t.memory_ns) + t.barrier_ns;
  return t;
}

double noise_factor(double noise, std::uint64_t seed, std::uint64_t kernel_hash, std::uint64_t run) {
  if (noise == 0) return 1.0;
  const std::uint64_t a = splitmix(seed ^ splitmix(kernel_hash ^ splitmix(run)));
  const std::uint64_t b = splitmix(a);
  const double u1 = (static_cast<double>(a >> 11) + 0.5) * 0x1p-53;  // (0, 1)
  const double u2 = static_cast<double>(b >> 11) * 0x1p-53;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);  // Box-Muller
  return std::max(0.05, 1.0 + noise * z);
}

}  // namespace kiln::dummy
