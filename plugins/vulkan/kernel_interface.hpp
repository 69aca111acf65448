// kernel_interface.hpp - how a kernel's PARAMs reach the shader: GLOBAL and
// GLOBAL_MUT params become storage buffers (binding = rank among buffer
// params, in slot order), VARIABLE params become push-constant members
// (4-byte words, 8 bytes for 64-bit types, naturally aligned). Codegen
// declares exactly this layout and launch fills it, so both read it here.
#pragma once

#include <kiln/plugin.h>
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

// Reads the PARAM and LOCAL INDEX ops. Throws PluginError naming the op for
// malformed params (INVALID_ARGUMENT) and for push constants beyond the
// device's maxPushConstantsSize (UNSUPPORTED).
KernelInterface read_interface(std::span<const kiln_op> ops, std::uint32_t max_push_constant_bytes);

}  // namespace kiln::vulkan
