// CUDA C++ -> device code with NVRTC, for one compute capability. Needs no
// GPU and no driver, so it is tested on machines without either.
#pragma once

#include "nvrtc_api.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kiln::cuda {

struct NvrtcOptions {
  std::vector<std::string> include_dirs;  // for cuda_fp16.h / cuda_bf16.h
  std::vector<std::string> extra;         // more NVRTC flags (the "nvrtc_options" option)
  bool force_ptx = false;                 // PTX + driver JIT even when NVRTC knows the arch
};

// The toolkit include folder found at configure time (if any) first.
std::vector<std::string> default_include_dirs();

struct DeviceCode {
  std::vector<char> image;  // CUBIN, or NUL-terminated PTX
  bool is_cubin = false;
  std::string target;       // "sm_90", or "compute_90" for PTX
  std::string log;          // NVRTC's messages (warnings), possibly empty
};

// Every flag compile_cuda passes for this target, in order: also the part of
// the program cache key that the compiler's behaviour depends on.
std::vector<std::string> nvrtc_flags(const std::string& target, const NvrtcOptions& options);

// The target for a device of compute capability major.minor: "sm_XY" when
// NVRTC can emit its machine code (and PTX is not forced), else PTX for the
// newest "compute_XY" NVRTC knows that is not newer than the device.
std::string nvrtc_target(const NvrtcApi& nvrtc, int major, int minor, bool force_ptx);

// Compiles `source` (one extern "C" __global__ kernel, or more). Throws
// PluginError(COMPILE_FAILED) with NVRTC's log and the flags on failure.
// `arch_specific`: the source uses instructions of the architecture's "a"
// variant (wgmma: sm_90a), so the target is that variant's.
DeviceCode compile_cuda(const NvrtcApi& nvrtc, std::string_view source, int major, int minor,
                        const NvrtcOptions& options, bool arch_specific = false);

}  // namespace kiln::cuda
