// compile.hpp - the ABI's compile functions: wire kernel -> GLSL -> SPIR-V
// -> compute pipeline.
#pragma once

#include <kiln/plugin.h>

namespace kiln::vulkan {

kiln_error* compile(kiln_compile_args* args);
kiln_error* program_source(kiln_program_source_args* args);
void program_release(kiln_program* program);

}  // namespace kiln::vulkan
