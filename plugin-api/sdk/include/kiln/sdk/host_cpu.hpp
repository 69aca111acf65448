// kiln/sdk/host_cpu.hpp - what the machine says about its CPU, for the
// DeviceInfo of plugins that run on the host (C, CBLAS): read from
// /proc/cpuinfo, sched_getaffinity and /sys/devices/system/cpu. Fields the
// system does not expose are empty or 0, never invented.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace kiln::sdk {

struct HostCpu {
  std::string name;     // "model name" (x86) or "Hardware"/"CPU part" (Arm); "" if unknown
  std::string vendor;   // "vendor_id" (x86) or "CPU implementer" (Arm)
  unsigned cores = 1;   // CPUs this process may run on (sched_getaffinity)
  unsigned clock_mhz = 0;  // cpufreq's maximum when present, else /proc/cpuinfo's "cpu MHz"
  std::array<std::uint64_t, 3> cache_bytes{};  // L1 data (per core), L2, L3, from cpu0's cache/index*
  // x86 "flags" of cpu0 (the kernel's cpuid view): VDPBF16PS, and AMX's
  // bf16 tiles (usable only after arch_prctl(ARCH_REQ_XCOMP_PERM)).
  bool avx512_bf16 = false;
  bool amx_bf16 = false;
};

// Reads the machine once per call (a few small files).
HostCpu read_host_cpu();

}  // namespace kiln::sdk
