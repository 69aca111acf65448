// compile: checks the kernel against the device, emits GLSL with the SDK's
// C-family emitter (its GLSL dialect), compiles it to SPIR-V with glslang and
// builds the pipeline.
#include "compile.hpp"

#include "glsl_compiler.hpp"
#include "pipeline.hpp"
#include "vulkan.hpp"

#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/launch_args.hpp>
#include <kiln/sdk/plugin_entry.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <span>

namespace kiln::vulkan {

kiln_error* compile(kiln_compile_args* raw) {
  return sdk::guard_compile(raw, [&] {
    auto args = sdk::read_args(raw);
    Device& device = to_device(args.device, "compile: device");
    const std::span<const kiln_op> ops = sdk::kernel_ops(args.kernel);
    if (ops.empty()) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "compile: the kernel is empty");
    check_device_support(ops, device.caps());
    sdk::EmittedKernel glsl = sdk::emit_c_family(ops, sdk::glsl_dialect());
    KernelInterface iface = read_interface(glsl.shape, device.caps().limits);
    const std::vector<std::uint32_t> spirv = compile_glsl_to_spirv(glsl.source);
    auto program = std::make_unique<Program>(device, std::move(glsl.source), std::move(iface), spirv);
    args.program = to_handle(program.release());
    args.failed_op = -1;
    sdk::write_args(raw, args);
  });
}

kiln_error* program_source(kiln_program_source_args* raw) {
  return sdk::answer_program_source(raw, "program_source", [](kiln_program* program) {
    return sdk::ProgramText{"glsl", reinterpret_cast<const Program*>(program)->glsl()};
  });
}

void program_release(kiln_program* program) { delete reinterpret_cast<Program*>(program); }

const sdk::CompileFunctions kCompileFunctions = {compile, program_source, program_release};

}  // namespace kiln::vulkan
