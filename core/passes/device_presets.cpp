#include "kiln/passes/device_presets.hpp"

#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/op_rules.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <algorithm>
#include <iterator>

#include <array>
#include <string>

namespace kiln::passes {

namespace {

// `claims`: what the preset claims beyond every ABI 1.0 op (the SDK's
// set_* helpers, as a plugin would call them).
DeviceInfo base(std::string id, std::string name, DeviceKind kind, void (*claims)(kiln_device_info&) = nullptr) {
  DeviceInfo d;
  d.id = std::move(id);
  d.plugin = "preset";
  d.name = std::move(name);
  d.vendor = "kiln";
  d.kind = kind;
  d.flags = KILN_DEVICE_CAN_COMPILE | KILN_DEVICE_HOST_MEMORY;
  d.memory_bytes = 8ull << 30;
  kiln_device_info caps{};
  for (unsigned dt = 1; dt < KILN_DTYPE_COUNT; ++dt) sdk::set_all_ops(caps, dt);
  if (claims != nullptr) claims(caps);
  std::copy(std::begin(caps.op_kind_dtypes), std::end(caps.op_kind_dtypes), d.op_kind_dtypes.begin());
  std::copy(std::begin(caps.unary_dtypes), std::end(caps.unary_dtypes), d.unary_dtypes.begin());
  std::copy(std::begin(caps.binary_dtypes), std::end(caps.binary_dtypes), d.binary_dtypes.begin());
  std::copy(std::begin(caps.features), std::end(caps.features), d.features.begin());
  return d;
}

std::uint32_t widths_mask(std::initializer_list<std::uint32_t> widths) {
  std::uint32_t mask = 1u << 1;
  for (std::uint32_t w : widths) mask |= 1u << w;
  return mask;
}

}  // namespace

DeviceInfo gpu_preset() {
  DeviceInfo d = base("preset:gpu", "GPU-shaped preset", DeviceKind::Gpu);
  d.flags |= KILN_DEVICE_NATIVE_EXP2;
  d.warp_size = 32;
  d.max_local_threads = 1024;
  d.max_local_dims = {1024, 1024, 64};
  d.max_grid_dims = {2147483647, 65535, 65535};
  d.local_memory_bytes = 48 * 1024;
  d.register_bytes = 1024;
  d.compute_units = 80;
  d.clock_mhz = 1500;
  d.vector_width_mask = widths_mask({2, 4});
  d.cache_bytes = {128 * 1024, 6 << 20, 0};
  d.peak_gflops = 20000;
  d.memory_bandwidth_gbps = 900;
  return d;
}

// What the CUDA plugin reports for an H200 (plugins/cuda/device.cpp reads
// these from the driver): sm_90 with 132 SMs at 1980 MHz, 227 KiB of shared
// memory a block may opt in to, 64 Ki registers a block (256 bytes a thread
// at 1024 threads), a 60 MiB L2, HBM3e at 4.8 TB/s, and the claims the
// plugin makes there (the CUDA dialect's ops, mma.sync, cp.async, ldmatrix,
// wgmma, warp shuffles). Built as the plugin builds its kiln_device_info, so
// optimizing for it takes the paths a real H200 takes (the row recipes'
// async copies, the wgmma matmuls) without one.
DeviceInfo h200_preset() {
  kiln_device_info info{};
  sdk::copy_string(info.name, "H200-shaped preset (as the CUDA plugin reports an H200)");
  sdk::copy_string(info.vendor, "kiln");
  info.kind = KILN_DEVICE_KIND_GPU;
  info.flags = KILN_DEVICE_CAN_COMPILE | KILN_DEVICE_DEVICE_TIMER | KILN_DEVICE_NATIVE_EXP2;
  info.memory_bytes = 143771ull << 20;
  info.local_memory_bytes = 232448;
  info.max_local_threads = 1024;
  info.register_bytes = 65536 * 4 / 1024;
  info.max_register_bytes = 512 * 1024;
  info.max_local_dims[0] = 1024;
  info.max_local_dims[1] = 1024;
  info.max_local_dims[2] = 64;
  info.max_grid_dims[0] = 2147483647;
  info.max_grid_dims[1] = 65535;
  info.max_grid_dims[2] = 65535;
  info.compute_units = 132;
  info.warp_size = 32;
  info.clock_mhz = 1980;
  sdk::set_cuda_caps(info, 9, 0, info.warp_size);
  info.cache_bytes[1] = 60ull << 20;
  info.peak_gflops = 132 * 128 * 2.0 * 1.98;  // 128 f32 lanes an SM
  info.memory_bandwidth_gbps = 4800;
  DeviceInfo d = DeviceInfo::from_abi(info, "preset", 0);
  d.id = "preset:h200";
  return d;
}

DeviceInfo small_preset() {
  DeviceInfo d = base("preset:small", "small GPU-like preset", DeviceKind::Gpu);
  d.warp_size = 8;
  d.max_local_threads = 256;
  d.max_local_dims = {256, 256, 64};
  d.max_grid_dims = {65535, 65535, 65535};
  d.local_memory_bytes = 16 * 1024;
  d.register_bytes = 256;
  d.compute_units = 4;
  d.clock_mhz = 800;
  d.vector_width_mask = widths_mask({2});
  d.cache_bytes = {16 * 1024, 512 * 1024, 0};
  d.peak_gflops = 100;
  d.memory_bandwidth_gbps = 30;
  return d;
}

DeviceInfo cpu_preset() {
  // As the C plugin: PREFETCH wherever it loads (prefetch_rows applies),
  // vector accesses at any element index.
  DeviceInfo d = base("preset:cpu", "CPU-shaped preset", DeviceKind::Cpu, [](kiln_device_info& caps) {
    sdk::set_prefetch(caps);
    sdk::set_unaligned_vectors(caps);
  });
  d.warp_size = 1;
  d.max_local_threads = 1;
  d.max_local_dims = {1, 1, 1};
  d.max_grid_dims = {2147483647, 2147483647, 2147483647};
  d.local_memory_bytes = 1 << 20;  // as the C plugin: a group's thread's stack, up to the L2
  d.register_bytes = 2048;
  d.compute_units = 8;
  d.clock_mhz = 3000;
  d.vector_width_mask = widths_mask({2, 4, 8, 16});
  d.cache_bytes = {32 * 1024, 1 << 20, 32 << 20};
  d.peak_gflops = 8 * 3.0 * 16 * 2 * 2;
  d.memory_bandwidth_gbps = 25;
  return d;
}

std::span<const std::string_view> device_preset_names() {
  static constexpr std::array<std::string_view, 4> names = {"preset:gpu", "preset:h200", "preset:small", "preset:cpu"};
  return names;
}

std::optional<DeviceInfo> device_preset(std::string_view id) {
  if (id == "preset:gpu") return gpu_preset();
  if (id == "preset:h200") return h200_preset();
  if (id == "preset:small") return small_preset();
  if (id == "preset:cpu") return cpu_preset();
  return std::nullopt;
}

}  // namespace kiln::passes
