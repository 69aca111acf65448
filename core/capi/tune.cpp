// kiln_kernel_tune: the autotuner from C (through compile_kernel).
#include "capi/compile.hpp"

using kiln::capi::guard;
using kiln::capi::make_status;
using kiln::capi::null_argument;

extern "C" {

kiln_status_t* kiln_kernel_tune(const kiln_device_t* device, const kiln_kernel_t* kernel,
                                const kiln_tune_options_t* options, kiln_program_t** out) {
  constexpr const char* f = "kiln_kernel_tune";
  return guard(f, [&]() -> kiln_status_t* {
    if (device == nullptr) return null_argument(f, "device");
    if (kernel == nullptr) return null_argument(f, "kernel");
    if (out == nullptr) return null_argument(f, "out");
    kiln::capi::CompileRequest request;
    request.mode = kiln::capi::CompileMode::TuneNow;
    if (options != nullptr) {
      if (kiln_status_t* s = kiln::capi::check_struct(f, options, options->struct_size, KILN_TUNE_OPTIONS_T_SIZE))
        return s;
      if (!(options->budget_s <= 86400))  // also refuses NaN
        return make_status(KILN_CODE_INVALID_ARGUMENT, std::string(f) + ": budget_s must be at most 86400 seconds");
      if (options->scalars == nullptr && options->n_scalars > 0) return null_argument(f, "options->scalars");
      request.budget_s = options->budget_s;
      request.seed = options->seed;
      request.force = options->force != 0;
      if (options->n_scalars > 0) request.scalars.assign(options->scalars, options->scalars + options->n_scalars);
      if (options->kernel_name != nullptr) request.kernel_name = options->kernel_name;
      if (options->tuning_db != nullptr) request.tuning_db = options->tuning_db;
    }
    kiln::Result<kiln_program_t*> program = kiln::capi::compile_kernel(*device, kernel->kernel, request);
    if (!program) return make_status(program.error());
    *out = *program;
    return nullptr;
  });
}

}  // extern "C"
