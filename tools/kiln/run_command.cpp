// kiln run KERNEL|FILE.kir: one standard kernel, or the kernel of an IR
// file, on one device, checked against its reference (the C++ one of a
// standard kernel, the interpreter for a file) and timed (kiln/kernels/run.hpp
// does the work).
#include "commands.hpp"
#include "ir_file.hpp"
#include "option_limits.hpp"

#include <kiln/ir/dtype.hpp>
#include <kiln/kernels/run.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/compile_options.hpp>
#include <kiln/runtime/device.hpp>

#include <boost/json.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <optional>

namespace kiln::cli {

namespace {

struct RunSettings {
  std::string kernel;
  std::string device;  // empty: the runtime's default device
  std::int64_t size = 256;
  std::optional<std::int64_t> m, n, k;
  std::string dtype = "f32";
  std::uint64_t seed = 1;
  std::uint32_t warmups = 1;
  std::uint32_t repeats = 5;
  bool json = false;
  bool tuned = false;     // the tuned program (the tuning database; tunes when it has none)
  bool allow_tf32 = false;  // --tuned: the record (or tuning) that allows tf32 matrix products
  std::string db;         // tuning database file; empty: the config's
  double budget_s = 0;    // tuning budget when a tuning runs; 0: the config's
  bool no_check = false;  // --no-check: time only (the C++ reference of a large matmul takes a minute)
  std::optional<std::string> opt;  // --opt: this optimization sequence instead (e.g. to time one config)
  std::vector<std::string> scalars;  // --scalar %N=VALUE: the var params of an IR file
  bool shape_given = false;          // --size/--m/--n/--k/--dtype (a standard kernel's, refused for a file)
};

// What `--tuned` used: the sequence and whether it came from the database.
struct TunedUse {
  std::string sequence;
  bool from_cache = false;
  double tune_seconds = 0;
};

// The tuned program of `kernel` (Device::compile with the config's
// autotune settings: in mode `tune` a kernel the database lacks is tuned
// first, within the budget; `db-only` falls back to the heuristic program
// with a warning, `off` never looks).
kiln::Program tuned_program(const kiln::Runtime& runtime, const kiln::Device& device,
                            const kernels::StandardKernel& kernel, const RunSettings& settings) {
  kiln::CompileOptions options = kiln::tuned_compile_options(runtime.config());
  if (settings.budget_s > 0) options.tuning.settings.budget_s = settings.budget_s;
  if (settings.allow_tf32) options.tuning.settings.allow_tf32 = true;
  if (!settings.db.empty()) options.tuning.db_path = settings.db;
  options.tuning.args = kernel.args;
  // As `kiln tune` does for a standard kernel: the same inputs and correctness guard.
  options.tuning.tolerance = 2 * kernel.tolerance;
  options.tuning.kernel_name = kernel.name + " " + std::string(ir::dtype_name(kernel.dtype));
  if (!settings.json)
    options.tuning.on_progress = [](const kiln::tune::TuneProgress& p) {
      if (p.phase == kiln::tune::TuneProgress::Phase::Search)
        fmt::print(stderr, "run: not in the tuning database; tuning first (budget {:.0f} s)\n", p.budget_s);
    };
  kiln::Result<kiln::Program> tuned = device.compile(kernel.kernel, options);
  if (!tuned) fail(tuned.error());
  return std::move(tuned).value();
}

std::string duration(std::uint64_t ns) {
  if (ns >= 1'000'000'000) return fmt::format("{:.3f} s", static_cast<double>(ns) * 1e-9);
  if (ns >= 1'000'000) return fmt::format("{:.3f} ms", static_cast<double>(ns) * 1e-6);
  return fmt::format("{:.3f} us", static_cast<double>(ns) * 1e-3);
}

void print_summary(const kernels::StandardKernel& kernel, const kiln::Device& device,
                   const kernels::RunReport& report) {
  // An IR file declares its own sizes; a standard kernel's are its settings.
  const std::string size = names_ir_file(kernel.name) ? "" : " [" + kernels::size_text(kernel) + "]";
  fmt::print("{} {}{} on {} ({})\n", kernel.name, ir::dtype_name(kernel.dtype), size, report.device, device.info().name);
  if (report.checked)
    fmt::print("  result:  {}, max relative error {:.3g} (tolerance {:.3g}{})\n", report.ok ? "ok" : "WRONG",
               report.max_rel_err, report.tolerance,
               report.worst_output.empty() ? "" : ", output " + report.worst_output);
  else
    fmt::print("  result:  not checked\n");
  if (report.compile_ns > 0) fmt::print("  compile: {}\n", duration(report.compile_ns));
  if (report.timing) {
    const kiln::Timing& t = *report.timing;
    fmt::print("  time:    {} median, {} min ({} runs, {} timer{})\n", duration(t.median_ns), duration(t.min_ns), t.runs,
               kiln::timer_kind_name(t.timer), t.aborted ? ", stopped early" : "");
    fmt::print("  speed:   {:.2f} GFLOP/s, {:.2f} GB/s\n", report.gflops, report.gbps);
  }
}

kiln::Device pick_device(const kiln::Runtime& runtime, const std::string& id) {
  kiln::Result<kiln::Device> device = id.empty() ? runtime.default_device() : runtime.device(id);
  if (!device) fail(device.error());
  return std::move(device).value();
}

// The standard kernel named, or the kernel of the IR file named.
kernels::StandardKernel make_kernel(const RunSettings& settings) {
  if (names_ir_file(settings.kernel)) {
    if (settings.shape_given)
      throw CommandFailed(settings.kernel + ": --size, --m, --n, --k and --dtype are a standard kernel's; an IR file "
                                            "declares its own sizes and dtypes");
    return ir_file_kernel(settings.kernel, settings.scalars);
  }
  if (!settings.scalars.empty()) throw CommandFailed("--scalar is for an IR file; " + settings.kernel + " is a standard kernel");
  const std::optional<ir::DType> dtype = ir::dtype_from_name(settings.dtype);
  if (!dtype) throw CommandFailed("--dtype " + settings.dtype + ": not a dtype (f32, f16, bf16, f64, i32, i64, ...)");
  const kernels::KernelSize size{settings.m.value_or(settings.size), settings.n.value_or(settings.size),
                                 settings.k.value_or(settings.size)};
  kiln::Result<kernels::StandardKernel> kernel = kernels::make_standard_kernel(settings.kernel, size, *dtype);
  if (!kernel) fail(kernel.error());
  // tf32 products carry f16's rounding: the check allows it (docs/autotune.md, "Precision").
  if (settings.allow_tf32) kernel->tolerance = kernel->tf32_tolerance;
  return std::move(kernel).value();
}

void run(const GlobalOptions& global, const RunSettings& settings) {
  const std::optional<kernels::StandardKernel> kernel = make_kernel(settings);
  const char* const reference = names_ir_file(settings.kernel) ? "the interpreter" : "the C++ reference";

  const kiln::Runtime runtime = open_runtime(global, {settings.device});
  const kiln::Device device = pick_device(runtime, settings.device);
  kernels::RunOptions options;
  options.seed = settings.seed;
  options.check = !settings.no_check;
  options.timing.warmups = settings.warmups;
  options.timing.repeats = settings.repeats;
  std::optional<TunedUse> tuned_use;
  kiln::Result<kernels::RunReport> report = [&] {
    if (settings.opt) {  // the given sequence, as a tuning would apply it
      kiln::Result<passes::OptSequence> sequence = passes::parse_sequence(*settings.opt);
      if (!sequence) fail(sequence.error());
      kiln::Result<ir::Kernel> optimized = passes::optimize(kernel->kernel, *sequence, device.info());
      if (!optimized) fail(optimized.error());
      kiln::Result<kiln::Program> program = device.compile(*optimized, {.mode = kiln::CompileMode::Frozen});
      if (!program) fail(program.error());
      tuned_use = TunedUse{passes::to_string(*sequence), false, 0};
      return kernels::run_standard_kernel(device, *kernel, *program, options);
    }
    if (!settings.tuned) return kernels::run_standard_kernel(device, *kernel, options);
    const kiln::Program tuned = tuned_program(runtime, device, *kernel, settings);
    const kiln::CompileReport& compiled = tuned.compile_report();
    for (const std::string& w : compiled.warnings) fmt::print(stderr, "warning: {}\n", w);
    if (!compiled.fallback_reason.empty())
      fmt::print(stderr, "warning: {}; running the heuristic program\n", compiled.fallback_reason);
    tuned_use = TunedUse{compiled.sequence, compiled.from_database, compiled.seconds};
    return kernels::run_standard_kernel(device, *kernel, tuned, options);
  }();

  if (!report) {
    if (settings.json) {
      // Still one JSON object on stdout, so scripts that collect them see the failure.
      kernels::RunReport failed;
      failed.kernel = kernel->name;
      failed.device = device.id();
      failed.dtype = kernel->dtype;
      failed.size = kernel->size;
      failed.dims = kernels::kernel_dims(*kernel);
      failed.tolerance = kernel->tolerance;
      fmt::print("{}\n", kernels::run_report_json(failed, &report.error()));
    }
    fail(report.error());
  }
  if (settings.json) {
    std::string json = kernels::run_report_json(*report);
    if (tuned_use) {  // the tuning fields after the run report's own
      boost::json::object object = boost::json::parse(json).as_object();
      object["sequence"] = tuned_use->sequence;
      object["from_cache"] = tuned_use->from_cache;
      object["tune_seconds"] = tuned_use->tune_seconds;
      json = boost::json::serialize(object);
    }
    fmt::print("{}\n", json);
  } else {
    print_summary(*kernel, device, *report);
    if (tuned_use)
      fmt::print("  tuned:   {} ({})\n", tuned_use->sequence.empty() ? "(untuned)" : tuned_use->sequence,
                 tuned_use->from_cache ? "from the tuning database"
                 : settings.opt         ? std::string("given by --opt")
                                        : fmt::format("tuned now in {:.1f} s", tuned_use->tune_seconds));
  }
  std::fflush(stdout);
  if (!report->ok)
    throw CommandFailed(fmt::format("{} on {}: the result differs from {} (max relative error {:.3g} in "
                                    "output {}, tolerance {:.3g})",
                                    report->kernel, report->device, reference, report->max_rel_err, report->worst_output,
                                    report->tolerance));
}

}  // namespace

void add_run_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* command = app.add_subcommand(
      "run",
      "Run a standard kernel, or any IR file (FILE.kir), on a device: compile, random inputs, check against the C++ "
      "reference (for a file: the interpreter), time");
  auto settings = std::make_shared<RunSettings>();
  std::string kernel_names;
  for (std::string_view name : kernels::standard_kernel_names())
    kernel_names += (kernel_names.empty() ? "" : ", ") + std::string(name);
  command->add_option("kernel", settings->kernel, "The standard kernel (" + kernel_names + ") or an IR text file (.kir)")
      ->required();
  command->add_option("--scalar", settings->scalars,
                      "For an IR file: the value of a var param, %N=VALUE (N its value as printed); repeat for each");
  command->add_option("--device", settings->device,
                      "Device id, e.g. c:0 (default: the first device of the highest-priority loaded plugin that "
                      "can compile)");
  command->add_option("--size", settings->size, "Every dimension the kernel has (n; m and n; m, n and k)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--m", settings->m, "Rows (row kernels, transpose, matmul); overrides --size")
      ->check(CLI::PositiveNumber);
  command->add_option("--n", settings->n, "Elements (elementwise), columns (row kernels, matmul); overrides --size")
      ->check(CLI::PositiveNumber);
  command->add_option("--k", settings->k, "Reduction length of matmul; overrides --size")->check(CLI::PositiveNumber);
  command->add_option("--dtype", settings->dtype, "Element type: f32, f16, bf16, f64, i32, i64 (as the kernel allows)")
      ->capture_default_str();
  command->add_option("--seed", settings->seed, "Seed of the random inputs")->capture_default_str();
  command->add_option("--warmups", settings->warmups, "Untimed runs before the timed ones")
      ->check(CLI::Range(0u, kMaxRepeats))
      ->capture_default_str();
  command->add_option("--repeats", settings->repeats, "Timed runs (the median is reported)")
      ->check(CLI::Range(1u, kMaxRepeats))
      ->capture_default_str();
  command->add_flag("--json", settings->json,
                    "Print one JSON object: kernel, device, ok, max_rel_err, time_ns, gflops, gbps, then details "
                    "(with --tuned also sequence, from_cache, tune_seconds)");
  command->add_flag("--tuned", settings->tuned,
                    "Run the tuned program: from the tuning database, or tuned first (within the config's autotune "
                    "budget) when the database lacks it and autotune.mode is tune");
  command->add_flag("--allow-tf32", settings->allow_tf32,
                    "With --tuned: the tuning that lets f32 matrix products run on tf32 matrix units (kiln tune "
                    "--allow-tf32)");
  command->add_flag("--no-check", settings->no_check,
                    "Do not compare with the C++ reference (in double, on every hardware thread: seconds for a 2048^3 matmul)");
  command->add_option("--opt", settings->opt,
                      "Run the kernel optimized with this sequence (e.g. \"mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2)\") "
                      "instead of untuned or --tuned");
  command->add_option("--db", settings->db, "Tuning database file for --tuned (default: the config's tuning_db)");
  command->add_option("--budget", settings->budget_s, "Tuning budget in seconds for --tuned (default: the config's)")
      ->check(kBudgetSeconds);
  command->callback([&global, settings, command] {
    for (const char* option : {"--size", "--m", "--n", "--k", "--dtype"})
      if (command->count(option) > 0) settings->shape_given = true;
    run(global, *settings);
  });
}

}  // namespace kiln::cli
