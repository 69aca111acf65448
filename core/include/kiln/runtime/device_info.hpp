// kiln/runtime/device_info.hpp - what the core knows of a device: a C++
// mirror of kiln_device_info, read once when the plugin loads.
#pragma once

#include <kiln/plugin.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

enum class DeviceKind { Unknown, Cpu, Gpu, Accelerator, Virtual };

// "cpu", "gpu", "accelerator", "virtual", "unknown"
std::string_view device_kind_name(DeviceKind kind);

// REGISTER storage per thread past which a kernel is refused before compile
// on a device whose plugin gives no max_register_bytes: 64 KiB, far past any
// register file (what is stored beyond it spills to memory) and within the
// stack of any host thread the C plugin's OpenMP runs on.
inline constexpr std::uint64_t kDefaultMaxRegisterBytes = 64 * 1024;

struct DeviceInfo {
  std::string id;        // "<plugin>:<index>", e.g. "c:0"
  std::string plugin;    // the plugin's name
  std::uint32_t index = 0;  // the plugin's device index

  std::string name;
  std::string vendor;
  std::string driver_version;
  std::string pci_bus_id;
  DeviceKind kind = DeviceKind::Unknown;
  std::uint32_t flags = 0;  // KILN_DEVICE_*
  std::uint64_t memory_bytes = 0;
  std::uint64_t local_memory_bytes = 0;
  std::uint64_t register_bytes = 0;      // REGISTER storage budget per thread (the optimizer's)
  // The hard limit on REGISTER storage per thread; 0 from a plugin that does
  // not say becomes kDefaultMaxRegisterBytes.
  std::uint64_t max_register_bytes = 0;
  std::array<std::uint64_t, 3> max_grid_dims{};
  std::array<std::uint32_t, 3> max_local_dims{};
  std::uint32_t max_local_threads = 0;
  std::uint32_t compute_units = 0;
  std::uint32_t warp_size = 0;
  std::uint32_t clock_mhz = 0;
  std::uint32_t vector_width_mask = 0;  // bit n: width n supported
  // What runs where, as ABI 1.1 states it (bit d of a mask: kiln_dtype d),
  // derived from a 1.0 plugin's per-dtype words when it gives no arrays.
  std::array<std::uint32_t, KILN_CAP_SLOTS> op_kind_dtypes{};  // [kiln_op_kind]
  std::array<std::uint32_t, KILN_CAP_SLOTS> unary_dtypes{};    // [kiln_unary_op]
  std::array<std::uint32_t, KILN_CAP_SLOTS> binary_dtypes{};   // [kiln_binary_op]
  std::array<std::uint64_t, KILN_FEATURE_WORDS> features{};    // KILN_FEATURE_* bits
  std::array<std::uint64_t, 3> cache_bytes{};  // L1, L2, L3
  double peak_gflops = 0;
  double memory_bandwidth_gbps = 0;

  bool can_compile() const { return (flags & KILN_DEVICE_CAN_COMPILE) != 0; }
  bool host_memory() const { return (flags & KILN_DEVICE_HOST_MEMORY) != 0; }
  bool native_exp2() const { return (flags & KILN_DEVICE_NATIVE_EXP2) != 0; }
  bool device_timer() const { return (flags & KILN_DEVICE_DEVICE_TIMER) != 0; }
  bool fixed_function() const { return (flags & KILN_DEVICE_FIXED_FUNCTION) != 0; }
  bool survives_timeout() const { return (flags & KILN_DEVICE_SURVIVES_TIMEOUT) != 0; }
  // The supported vector widths, ascending (always includes 1).
  std::vector<std::uint32_t> vector_widths() const;
  bool supports_op_kind(unsigned kind, unsigned dtype) const;
  bool supports_unary(unsigned op, unsigned dtype) const;
  bool supports_binary(unsigned op, unsigned dtype) const;
  bool has_feature(unsigned feature) const;

  // From the ABI struct (strings are read up to their NUL or the array end).
  static DeviceInfo from_abi(const kiln_device_info& info, std::string plugin, std::uint32_t index);
};

}  // namespace kiln
