// c:0, the one device: its DeviceInfo, from the machine and the compiler's target.
#include "c.hpp"

#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/host_cpu.hpp>
#include <kiln/sdk/host_memory.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/single_device.hpp>

#include <algorithm>
#include <climits>

namespace kiln::cplugin {

kiln_device_info describe_device(const Settings& settings) {
  const sdk::HostCpu cpu = sdk::read_host_cpu();
  const Compiler& cc = settings.compiler;
  kiln_device_info info{};
  info.struct_size = sizeof info;
  sdk::copy_string(info.name, cpu.name.empty() ? "CPU" : cpu.name);
  sdk::copy_string(info.vendor, cpu.vendor);
  sdk::copy_string(info.driver_version, cc.version);
  info.kind = KILN_DEVICE_KIND_CPU;
  // An isolated timed launch past its limit kills the worker, not the device.
  info.flags = KILN_DEVICE_CAN_COMPILE | KILN_DEVICE_HOST_MEMORY | KILN_DEVICE_SURVIVES_TIMEOUT;
  info.memory_bytes = sdk::host_total_bytes();
  // LOCAL storage is per group and one thread runs a group: it lives on that
  // thread's stack (2 MiB at least, below), next to REGISTER storage's
  // 512 KiB. Up to the L2, at most 1 MiB: what a packed matrix product
  // (pack_tile) keeps per thread, its blocks sized to L1 and L2 by the step.
  info.local_memory_bytes = std::max<std::uint64_t>(cpu.cache_bytes[0], std::min<std::uint64_t>(cpu.cache_bytes[1], 1024 * 1024));
  info.register_bytes = std::uint64_t{cc.vector_bytes} * cc.vector_registers;
  // REGISTER storage is a local array on the stack of an OpenMP thread,
  // whose stack is 2 MiB at least (libgomp's default): a quarter of it.
  info.max_register_bytes = 512 * 1024;
  for (auto& dim : info.max_grid_dims) dim = INT_MAX;
  // LOCAL axes are not offered: a BARRIER between threads of one group would
  // need the kernel split into phases around it (or real threads per group);
  // one thread per group keeps the generated C a plain loop nest.
  info.max_local_dims[0] = info.max_local_dims[1] = info.max_local_dims[2] = 1;
  info.max_local_threads = 1;
  info.compute_units = cpu.cores;
  info.warp_size = 1;
  info.clock_mhz = cpu.clock_mhz;
  // Every vector_size width works, but only widths that fit a native
  // register are worth offering to the autotuner (counted in f32 lanes).
  info.vector_widths = 1u << 1;
  for (unsigned lanes = 2; lanes <= 16; lanes *= 2)
    if (lanes * 4 <= std::max(cc.vector_bytes, 8u)) info.vector_widths |= 1u << lanes;
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt) sdk::set_c_family_caps(info, sdk::c_dialect(), dt);
  for (int level = 0; level < 3; ++level) info.cache_bytes[level] = cpu.cache_bytes[level];
  // What the processor has, said whatever the compiler targets; DOT_BF16
  // only where both the CPU (cpuid) and the compiler's target have it, so
  // that it compiles to VDPBF16PS (the portable C form is exact but slow).
  if (cpu.avx512_bf16) sdk::set_feature(info, KILN_FEATURE_CPU_AVX512_BF16);
  if (cpu.amx_bf16) sdk::set_feature(info, KILN_FEATURE_CPU_AMX_BF16);
  if (cpu.avx512_bf16 && cc.avx512_bf16) sdk::set_dot_bf16(info);
  // PREFETCH is __builtin_prefetch, which GCC and Clang have on every target
  // (a no-op where the processor has no prefetch instruction).
  sdk::set_prefetch(info);
  // Vector loads and stores at any element index: the C dialect moves
  // vectors with memcpy and unaligned intrinsics (loadu/storeu; the
  // streaming store checks its address), so rows of odd length vectorize.
  sdk::set_unaligned_vectors(info);
  // Estimated f32 peak: threads x clock x f32 lanes per register x 2 flops
  // per FMA x 2 FMA pipes (x86 cores with AVX2/AVX-512 and recent Arm cores
  // have two; the cost model only needs the order of magnitude).
  const double units = std::min<double>(settings.threads, cpu.cores);
  const double lanes = cc.vector_bytes / 4.0;
  info.peak_gflops = units * cpu.clock_mhz / 1000.0 * std::max(lanes, 1.0) * (cc.fma ? 2.0 : 1.0) * 2.0;
  info.memory_bandwidth_gbps = settings.memory_bandwidth_gbps;
  return info;
}

namespace {
const kiln_device_info& info_of_the_device() { return state().info; }
}  // namespace

const sdk::DeviceFunctions kDeviceFunctions = sdk::single_host_device<info_of_the_device>();

}  // namespace kiln::cplugin
