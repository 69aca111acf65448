// glsl_codegen.hpp - a wire kernel as a GLSL 450 compute shader.
//
// One statement per op, op i defining `v<i>`, as in the SDK's C-family
// emitter, with GLSL's own spelling: constructors for casts, exact literals
// without hex floats, SSBO blocks for buffers, push constants for scalars,
// `shared` arrays at global scope for LOCAL storage. Semantics follow
// kernel_ir.h: f16/bf16 are 16-bit patterns in memory and floats in
// registers, rounded to nearest even in software after every op (bit-equal
// to kiln/sdk/half.hpp); BOOL is one byte in memory; integer ops wrap;
// signed MOD is the C remainder; float MOD is fmod; shifts are mod width.
#pragma once

#include "device.hpp"
#include "kernel_interface.hpp"

#include <span>
#include <string>

namespace kiln::vulkan {

// Throws PluginError(UNSUPPORTED) naming the op for a dtype or op the device
// (caps) or GLSL lacks, PluginError(INVALID_ARGUMENT) for a malformed kernel.
std::string emit_glsl(std::span<const kiln_op> ops, const KernelInterface& iface, const DeviceCaps& caps);

// Helper functions the generated code may call (kiln_f32_to_f16, ...), in
// the order they must be declared, for those named in `used`.
std::string glsl_helpers(bool halves, bool pow, bool fmod_f32, bool fmod_f64);

}  // namespace kiln::vulkan
