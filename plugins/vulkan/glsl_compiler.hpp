// glsl_compiler.hpp - GLSL compute shader -> SPIR-V with glslang (linked
// statically, so the plugin needs no shader compiler installed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::vulkan {

// Compiles for Vulkan 1.1 / SPIR-V 1.3 (what every device the plugin
// accepts consumes). Throws PluginError(COMPILE_FAILED) with glslang's log
// and the numbered source. Safe to call from several threads at once.
std::vector<std::uint32_t> compile_glsl_to_spirv(const std::string& source);

// "glslang <version>", for the cache key.
std::string glslang_identity();

}  // namespace kiln::vulkan
