// Device::compile, the one way to compile a kernel (kiln/compile_options.hpp).
// Defined here rather than in runtime/device.cpp: Heuristic and Tuned run the
// passes and read the tuning database, which the runtime does not depend on
// (docs/architecture.md). Frozen is Device::compile_exactly.
#include "tune/compile_paths.hpp"

#include "ir/op_trace.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/tune/heuristic.hpp"
#include "lowering_memo.hpp"

#include <array>
#include <chrono>
#include <exception>
#include <memory>

namespace kiln {

namespace {

constexpr std::array<std::pair<CompileMode, std::string_view>, 3> kModeNames = {{
    {CompileMode::Heuristic, "heuristic"},
    {CompileMode::Tuned, "tuned"},
    {CompileMode::Frozen, "frozen"},
}};

}  // namespace

std::string_view compile_mode_name(CompileMode mode) {
  for (const auto& [m, name] : kModeNames)
    if (m == mode) return name;
  return "unknown";
}

std::optional<CompileMode> compile_mode_from_name(std::string_view name) {
  for (const auto& [m, n] : kModeNames)
    if (n == name) return m;
  return std::nullopt;
}

CompileOptions tuned_compile_options(const Config& config) {
  CompileOptions options;
  options.tuning.settings = config.autotune.settings;
  options.tuning.db_path = config.tuning_db;
  switch (config.autotune.settings.mode) {
    case tune::TuneMode::Off: options.mode = CompileMode::Heuristic; break;
    case tune::TuneMode::DbOnly: options.mode = CompileMode::Tuned; break;
    case tune::TuneMode::Tune:
      options.mode = CompileMode::Tuned;
      options.tune_on_miss = true;
      break;
  }
  return options;
}

Result<Program> Device::compile(const ir::Kernel& kernel, const CompileOptions& options) const {
  if (!valid()) {
    Error e = make_error(ErrorCode::InvalidArgument, "compile: no device (an empty Device)");
    e.function = "compile";
    return e;
  }
  // Every mode refuses an invalid kernel the same way, naming its op, before
  // any pass sees it.
  if (Result<void> verified = ir::verify(kernel); !verified.ok()) {
    Error error = std::move(verified).error();
    error.function = "compile";
    return error;
  }
  const auto start = std::chrono::steady_clock::now();
  auto report = std::make_shared<CompileReport>();
  report->requested = options.mode;
  Result<Program> program = [&]() -> Result<Program> {
    try {
      switch (options.mode) {
        case CompileMode::Frozen:
          report->used = CompileMode::Frozen;
          report->kernel = kernel;
          return compile_exactly(kernel, options.bounds.value_or(bounds_));
        case CompileMode::Heuristic: return tune::detail::compile_heuristic(*this, kernel, options.bounds, *report);
        case CompileMode::Tuned: return tune::detail::compile_tuned(*this, kernel, options, *report);
      }
      return make_error(ErrorCode::InvalidArgument,
                        "compile: mode " + std::to_string(static_cast<int>(options.mode)) + " is not a CompileMode");
    } catch (const std::exception& e) {
      return make_error(ErrorCode::Internal, std::string("compile: internal error (an exception): ") + e.what());
    }
  }();
  if (!program) return program;
  report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  program->report_ = std::move(report);
  return program;
}

namespace tune::detail {

Result<HeuristicLowering> heuristic_lowering(const ir::Kernel& kernel, const DeviceInfo& device) {
  // The recipes share their first steps: lowered through one memo, each
  // prefix once (lowering_memo.hpp).
  KILN_TRY_ASSIGN(HeuristicSchedule schedule,
                  heuristic_schedule(kernel, device, with_lowering_memo(default_search_space())));
  HeuristicLowering out;
  out.sequence = std::move(schedule.sequence);
  out.kernel = std::move(schedule.lowered);
  return out;
}

Result<Program> compile_heuristic(const Device& device, const ir::Kernel& kernel,
                                  std::optional<passes::BoundsPolicy> bounds, CompileReport& report) {
  KILN_TRY_ASSIGN(HeuristicLowering lowered, heuristic_lowering(kernel, device.info()));
  Result<Program> program = device.compile(lowered.kernel, {.mode = CompileMode::Frozen, .bounds = bounds});
  if (!program) return ir::trace_to_given(std::move(program).error(), kernel, lowered.kernel);
  report.used = CompileMode::Heuristic;
  report.sequence = passes::to_string(lowered.sequence);
  report.kernel = std::move(lowered.kernel);
  return program;
}

}  // namespace tune::detail

}  // namespace kiln
