// kiln run KERNEL: one standard kernel on one device, checked against its
// C++ reference and timed (kiln/kernels/run.hpp does the work).
#include "commands.hpp"

#include <kiln/ir/dtype.hpp>
#include <kiln/kernels/run.hpp>

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
};

std::string duration(std::uint64_t ns) {
  if (ns >= 1'000'000'000) return fmt::format("{:.3f} s", static_cast<double>(ns) * 1e-9);
  if (ns >= 1'000'000) return fmt::format("{:.3f} ms", static_cast<double>(ns) * 1e-6);
  return fmt::format("{:.3f} us", static_cast<double>(ns) * 1e-3);
}

void print_summary(const kernels::StandardKernel& kernel, const kiln::Device& device,
                   const kernels::RunReport& report) {
  fmt::print("{} {} [{}] on {} ({})\n", kernel.name, ir::dtype_name(kernel.dtype), kernels::size_text(kernel), report.device,
             device.info().name);
  if (report.checked)
    fmt::print("  result:  {}, max relative error {:.3g} (tolerance {:.3g}{})\n", report.ok ? "ok" : "WRONG",
               report.max_rel_err, report.tolerance,
               report.worst_output.empty() ? "" : ", output " + report.worst_output);
  else
    fmt::print("  result:  not checked\n");
  fmt::print("  compile: {}\n", duration(report.compile_ns));
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

void run(const GlobalOptions& global, const RunSettings& settings) {
  const std::optional<ir::DType> dtype = ir::dtype_from_name(settings.dtype);
  if (!dtype) throw CommandFailed("--dtype " + settings.dtype + ": not a dtype (f32, f16, bf16, f64, i32, i64, ...)");
  const kernels::KernelSize size{settings.m.value_or(settings.size), settings.n.value_or(settings.size),
                                 settings.k.value_or(settings.size)};
  kiln::Result<kernels::StandardKernel> kernel = kernels::make_standard_kernel(settings.kernel, size, *dtype);
  if (!kernel) fail(kernel.error());

  const kiln::Runtime runtime = open_runtime(global);
  const kiln::Device device = pick_device(runtime, settings.device);
  kernels::RunOptions options;
  options.seed = settings.seed;
  options.timing.warmups = settings.warmups;
  options.timing.repeats = settings.repeats;
  kiln::Result<kernels::RunReport> report = kernels::run_standard_kernel(device, *kernel, options);

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
  if (settings.json) fmt::print("{}\n", kernels::run_report_json(*report));
  else print_summary(*kernel, device, *report);
  std::fflush(stdout);
  if (!report->ok)
    throw CommandFailed(fmt::format("{} on {}: the result differs from the C++ reference (max relative error {:.3g} in "
                                    "output {}, tolerance {:.3g})",
                                    report->kernel, report->device, report->max_rel_err, report->worst_output,
                                    report->tolerance));
}

}  // namespace

void add_run_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* command = app.add_subcommand(
      "run", "Run a standard kernel on a device: compile, random inputs, check against the C++ reference, time");
  auto settings = std::make_shared<RunSettings>();
  std::string kernel_names;
  for (std::string_view name : kernels::standard_kernel_names())
    kernel_names += (kernel_names.empty() ? "" : ", ") + std::string(name);
  command->add_option("kernel", settings->kernel, "The standard kernel: " + kernel_names)->required();
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
  command->add_option("--warmups", settings->warmups, "Untimed runs before the timed ones")->capture_default_str();
  command->add_option("--repeats", settings->repeats, "Timed runs (the median is reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_flag("--json", settings->json,
                    "Print one JSON object: kernel, device, ok, max_rel_err, time_ns, gflops, gbps, then details");
  command->callback([&global, settings] { run(global, *settings); });
}

}  // namespace kiln::cli
