// kernel_interface.hpp - the contract between a kernel and the device: what
// the kernel needs (dtypes, LOCAL storage, threads, push constants, storage
// buffers) checked against what the device has, and how its PARAMs reach the
// shader. The layout is the GLSL dialect's (sdk::glsl_arguments): GLOBAL and
// GLOBAL_MUT params are storage buffers (binding = rank among buffer params,
// in slot order), VARIABLE params push-constant members (4-byte words, 8
// bytes for 64-bit types, naturally aligned). Codegen declares exactly this
// layout and launch fills it.
#pragma once

#include "device.hpp"

#include <kiln/plugin.h>
#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/launch_args.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace kiln::vulkan {

struct ParamBinding {
  std::uint32_t op = 0;     // the PARAM op
  std::uint32_t kind = 0;   // kiln_param_kind
  std::uint32_t dtype = 0;  // element / scalar type
  std::uint32_t binding = 0;       // buffers: descriptor binding
  std::uint32_t push_offset = 0;   // scalars: byte offset in the push constants
  std::uint32_t push_bytes = 0;    // scalars: 4 or 8
};

struct KernelInterface {
  std::vector<ParamBinding> params;  // by slot
  std::vector<sdk::ParamSlot> slots; // by slot: what launch arguments are checked against
  std::uint32_t buffer_count = 0;
  std::uint32_t push_constant_bytes = 0;
  std::array<std::uint32_t, 3> local_size{1, 1, 1};  // LOCAL index lengths
};

// Before codegen: every dtype the ops use is one the device holds and
// computes, and the LOCAL storage fits its shared memory. Throws
// PluginError(UNSUPPORTED) naming the op. Ops are not validated here (the
// emitter does it): fields it does not understand are skipped.
void check_device_support(std::span<const kiln_op> ops, const DeviceCaps& caps);

// After codegen: the interface of the emitted kernel, checked against the
// device's limits (threads per group, push-constant bytes, storage buffers
// per stage). Throws PluginError(UNSUPPORTED), naming the op where one is
// at fault.
KernelInterface read_interface(const sdk::KernelShape& shape, const VkPhysicalDeviceLimits& limits);

}  // namespace kiln::vulkan
