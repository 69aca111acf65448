// compile: checks the kernel against the device, emits GLSL with the SDK's
// C-family emitter (its GLSL dialect), compiles it to SPIR-V with glslang and
// builds the pipeline.
#include "compile.hpp"

#include "glsl_compiler.hpp"
#include "pipeline.hpp"
#include "plugin_state.hpp"

#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/launch_args.hpp>
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
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    if (args.program == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "program_source: program is NULL");
    const Program& program = *reinterpret_cast<Program*>(args.program);
    args.language = "glsl";
    args.text = program.glsl().c_str();
    args.text_len = program.glsl().size();
    sdk::write_args(raw, args);
  });
}

void program_release(kiln_program* program) { delete reinterpret_cast<Program*>(program); }

kiln_error* cache_key(kiln_cache_key_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& device = to_device(args.device, "cache_key: device");
    args.key = device.cache_key().c_str();
    sdk::write_args(raw, args);
  });
}

}  // namespace kiln::vulkan
