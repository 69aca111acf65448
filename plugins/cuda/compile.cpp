// Compile: CUDA C++ (cuda_source) -> NVRTC for the device's exact
// architecture (CUBIN; PTX + driver JIT only for a device newer than NVRTC)
// -> a module in the device's context.
#include "cuda.hpp"

#include <kiln/sdk/plugin_entry.hpp>
#include "cuda_source.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <algorithm>
#include <utility>

namespace kiln::cuda {

namespace {

void release(Program* p) {
  if (p == nullptr) return;
  if (p->module != nullptr && p->device->open && !p->device->lost) {  // lost: it may still run
    if (cu().cuCtxPushCurrent(p->device->context) == CUDA_SUCCESS) {
      cu().cuModuleUnload(p->module);
      CUcontext popped = nullptr;
      cu().cuCtxPopCurrent(&popped);
    }
  }
  delete p;
}

using ProgramPtr = std::unique_ptr<Program, decltype(&release)>;

// Loads CUBIN or PTX into the current context; the JIT's error log goes into
// the message (PTX only has one).
CUmodule load_module(const DeviceCode& code) {
  char log[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(static_cast<std::uintptr_t>(sizeof(log)))};
  CUmodule module = nullptr;
  const CUresult result = cu().cuModuleLoadDataEx(&module, code.image.data(), 2, options, values);
  if (result != CUDA_SUCCESS) {
    try {
      check_cu(result, "cuModuleLoadDataEx(" + code.target + ")", KILN_STATUS_COMPILE_FAILED);
    } catch (const sdk::PluginError& e) {
      sdk::fail(e.status(), std::string(e.what()) + (log[0] != '\0' ? std::string("\n") + log : ""));
    }
  }
  return module;
}

}  // namespace

kiln_error* compile(kiln_compile_args* raw) {
  return sdk::guard_compile(raw, [&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "compile");
    const std::span<const kiln_op> ops = sdk::kernel_ops(args.kernel);
    ProgramPtr p(new Program(&d), &release);
    p->params = sdk::collect_params(ops);
    CudaSource source = emit_cuda(ops);
    p->source = std::move(source.text);
    const bool wgmma = std::any_of(ops.begin(), ops.end(), [](const kiln_op& op) { return op.kind == KILN_OP_WGMMA; });
    const DeviceCode code = compile_cuda(state().nvrtc, p->source, d.cc_major, d.cc_minor, state().settings.nvrtc, wgmma);
    p->target = code.target;
    ContextScope scope(d.context);
    p->module = load_module(code);
    check_cu(cu().cuModuleGetFunction(&p->function, p->module, kCudaKernelName), "cuModuleGetFunction",
             KILN_STATUS_COMPILE_FAILED);
    // Past 48 KiB a function must opt in to its dynamic shared memory (up to
    // the device's local_memory_bytes, the opt-in limit; the host checked it).
    if (source.dynamic_shared_bytes > 0) {
      p->dynamic_shared_bytes = static_cast<unsigned>(source.dynamic_shared_bytes);
      check_cu(cu().cuFuncSetAttribute(p->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       static_cast<int>(p->dynamic_shared_bytes)),
               "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", KILN_STATUS_COMPILE_FAILED);
    }
    args.program = reinterpret_cast<kiln_program*>(p.release());
    sdk::write_args(raw, args);
  });
}

kiln_error* program_source(kiln_program_source_args* raw) {
  return sdk::answer_program_source(raw, "program_source", [](kiln_program* program) {
    return sdk::ProgramText{"cuda", as_program(program)->source};
  });
}

void program_release(kiln_program* program) { release(as_program(program)); }

const sdk::CompileFunctions kCompileFunctions = {compile, program_source, program_release};

}  // namespace kiln::cuda
