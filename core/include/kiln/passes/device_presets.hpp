// kiln/passes/device_presets.hpp - device descriptions to optimize and cost
// kernels for without opening a device: `kiln ir --opt/--configs/--cost`
// without --device, the differential tests and the cost-model tests.
//
//   preset:gpu    GPU-shaped: warp 32, 1024 threads per group (1024,1024,64),
//                 48 KiB LOCAL per group, 80 units, vector widths 2 and 4,
//                 native exp2, 900 GB/s, 20 TFLOP/s
//   preset:h200   what the CUDA plugin reports for an H200 (sm_90): 132 units,
//                 227 KiB LOCAL, 256 register bytes a thread at 1024 threads,
//                 4.8 TB/s, cp.async, mma.sync, wgmma, warp shuffles
//   preset:small  a small GPU-like device: warp 8, 256 threads per group,
//                 16 KiB LOCAL, 4 units, vector width 2, no native exp2
//   preset:cpu    CPU-shaped (like c:0): one thread per group, 8 cores,
//                 vector widths 2..16, 32 KiB L1 as LOCAL, 25 GB/s
#pragma once

#include "kiln/runtime/device_info.hpp"

#include <optional>
#include <span>
#include <string_view>

namespace kiln::passes {

DeviceInfo gpu_preset();
DeviceInfo h200_preset();
DeviceInfo small_preset();
DeviceInfo cpu_preset();

// "preset:gpu", "preset:h200", "preset:small", "preset:cpu" (nullopt for other names).
std::optional<DeviceInfo> device_preset(std::string_view id);
std::span<const std::string_view> device_preset_names();

}  // namespace kiln::passes
