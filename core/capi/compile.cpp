// compile_kernel: every C API compile and tune reaches the C++ side here
// (see compile.hpp), and kiln_program_compile / kiln_program_* accessors.
#include "capi/compile.hpp"

#include <kiln/ir/verify.hpp>
#include <kiln/kernels/library.hpp>
#include <kiln/kernels/run.hpp>
#include <kiln/tune/tuner.hpp>
#include <kiln/passes/optimization.hpp>

#include <memory>

using kiln::capi::guard;
using kiln::capi::make_status;
using kiln::capi::null_argument;

namespace kiln::capi {

Result<kiln_program_t*> compile_kernel(const kiln_device_t& device, const ir::Kernel& kernel,
                                       const CompileRequest& request) {
  auto handle = std::make_unique<kiln_program_t>();
  handle->device = device.device;
  kiln::CompileOptions options;
  options.tuning = tune::options_from(*device.config);
  if (!request.tuning_db.empty()) options.tuning.db_path = request.tuning_db;
  switch (request.mode) {
    case CompileMode::Frozen: options.mode = kiln::CompileMode::Frozen; break;
    case CompileMode::Heuristic: options.mode = kiln::CompileMode::Heuristic; break;
    case CompileMode::FromDatabase: options.mode = kiln::CompileMode::Tuned; break;
    case CompileMode::TuneNow:
      options.mode = kiln::CompileMode::Tuned;
      options.tune_on_miss = true;
      if (request.budget_s > 0) options.tuning.settings.budget_s = request.budget_s;
      if (request.seed) options.tuning.settings.seed = *request.seed;
      options.tuning.force = request.force;
      options.tuning.kernel_name = request.kernel_name;
      // As `kiln tune` does for an IR file: random inputs from the params.
      KILN_TRY_ASSIGN(options.tuning.args, kernels::args_of(kernel, request.scalars));
      break;
  }
  KILN_TRY_ASSIGN(handle->program, device.device.compile(kernel, options));
  const CompileReport& report = handle->program.compile_report();
  handle->sequence = report.sequence;
  handle->from_database = report.from_database;
  handle->tuned_ns = report.best_ns;
  return handle.release();
}

}  // namespace kiln::capi

extern "C" {

kiln_status_t* kiln_program_compile(const kiln_device_t* device, const kiln_kernel_t* kernel,
                                    const kiln_compile_options_t* options, kiln_program_t** out) {
  constexpr const char* f = "kiln_program_compile";
  return guard(f, [&]() -> kiln_status_t* {
    if (device == nullptr) return null_argument(f, "device");
    if (kernel == nullptr) return null_argument(f, "kernel");
    if (out == nullptr) return null_argument(f, "out");
    kiln::capi::CompileRequest request;
    if (options != nullptr) {
      if (kiln_status_t* s = kiln::capi::check_struct(f, options, options->struct_size,
                                                      KILN_STRUCT_SIZE(kiln_compile_options_t, mode)))
        return s;
      const bool has_db = options->struct_size >= KILN_COMPILE_OPTIONS_T_SIZE;
      switch (options->mode) {
        case KILN_COMPILE_HEURISTIC: request.mode = kiln::capi::CompileMode::Heuristic; break;
        case KILN_COMPILE_TUNED: request.mode = kiln::capi::CompileMode::FromDatabase; break;
        case KILN_COMPILE_FROZEN: request.mode = kiln::capi::CompileMode::Frozen; break;
        default:
          return make_status(KILN_CODE_INVALID_ARGUMENT,
                             std::string(f) + ": mode " + std::to_string(options->mode) + " is not a kiln_compile_mode_t");
      }
      if (has_db && options->tuning_db != nullptr) request.tuning_db = options->tuning_db;
    }
    kiln::Result<kiln_program_t*> program = kiln::capi::compile_kernel(*device, kernel->kernel, request);
    if (!program) return make_status(program.error());
    *out = *program;
    return nullptr;
  });
}

// Destructors are noexcept: they wait for pending work and send a plugin's
// failure to its log, never up.
void kiln_program_free(kiln_program_t* program) { delete program; }

const char* kiln_program_sequence(const kiln_program_t* program) { return program ? program->sequence.c_str() : nullptr; }
int kiln_program_from_database(const kiln_program_t* program) { return program && program->from_database ? 1 : 0; }
uint64_t kiln_program_tuned_ns(const kiln_program_t* program) { return program ? program->tuned_ns : 0; }

kiln_status_t* kiln_program_source(const kiln_program_t* program, const char** language, const char** text) {
  constexpr const char* f = "kiln_program_source";
  return guard(f, [&]() -> kiln_status_t* {
    if (program == nullptr) return null_argument(f, "program");
    if (language == nullptr) return null_argument(f, "language");
    if (text == nullptr) return null_argument(f, "text");
    // The handle caches the text so the pointers stay valid; callers see a const program.
    auto* cached = const_cast<kiln_program_t*>(program);
    std::lock_guard lock(cached->source_mutex);
    if (!cached->source_loaded) {
      kiln::Result<kiln::ProgramSource> source = program->program.source();
      if (!source) return make_status(source.error());
      cached->language = source->language;
      cached->source = source->text;
      cached->source_loaded = true;
    }
    *language = program->language.c_str();
    *text = program->source.c_str();
    return nullptr;
  });
}

}  // extern "C"
