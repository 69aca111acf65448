// kiln tune KERNEL... --device ID [--size N | --m M --n N --k K] [--dtype T]
//           [--budget S] [--seed N] [--allow-tf32] [--force] [--reference ID] [--json]
// Tunes a standard kernel (or a kernel in an IR text file) on a device, or
// finds it in the tuning database, and says what it chose and how fast it is.
// Several kernels, or a folder of .kir files, share one budget
// (kiln/tune/tune_kernels.hpp) and end with a table of them all.
// Progress goes to stderr while it works.
#include "commands.hpp"
#include "input_file.hpp"
#include "option_limits.hpp"

#include <kiln/ir/dtype.hpp>
#include <kiln/ir/text.hpp>
#include <kiln/kernels/library.hpp>
#include <kiln/kernels/run.hpp>
#include <kiln/tune/report.hpp>
#include <kiln/tune/tune_kernels.hpp>
#include <kiln/tune/tuner.hpp>

#include <boost/json.hpp>
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <memory>
#include <sstream>

namespace kiln::cli {

namespace {

struct TuneCommandOptions {
  std::vector<std::string> kernels;  // as given: names, files, folders
  std::string kernel;                // the one being loaded
  std::string device;
  std::int64_t size = 0;
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype = "f32";
  std::vector<double> scalars;
  double budget_s = 0;
  std::int64_t seed = -1;
  bool force = false;
  bool allow_tf32 = false;
  bool json = false;
  bool quiet = false;
  std::string db;
  std::string reference;
};

template <class T>
T check(kiln::Result<T> result) {
  if (!result) fail(result.error());
  return std::move(result).value();
}

// What to tune: the kernel, its launch arguments and a name for people.
struct Subject {
  std::string name;
  kiln::ir::Kernel kernel;
  std::optional<std::vector<kiln::kernels::ArgSpec>> args;
  double tolerance = 0;
};

bool is_standard_name(const std::string& name) {
  for (std::string_view known : kiln::kernels::standard_kernel_names())
    if (known == name) return true;
  return false;
}

Subject load_subject(const TuneCommandOptions& o) {
  Subject s;
  if (is_standard_name(o.kernel)) {
    const std::int64_t base = o.size > 0 ? o.size : 1024;
    kiln::kernels::KernelSize size{o.m > 0 ? o.m : base, o.n > 0 ? o.n : base, o.k > 0 ? o.k : base};
    const std::optional<kiln::ir::DType> dtype = kiln::ir::dtype_from_name(o.dtype);
    if (!dtype) throw CommandFailed("unknown dtype '" + o.dtype + "'");
    kiln::kernels::StandardKernel standard = check(kiln::kernels::make_standard_kernel(o.kernel, size, *dtype));
    s.name = o.kernel;
    s.kernel = std::move(standard.kernel);
    s.args = std::move(standard.args);
    // The library's tolerance is against an exact reference; the untuned
    // kernel on the device carries rounding error of its own.
    // (--allow-tf32: the tuner widens it to tf32's rounding, candidate_bench.cpp.)
    s.tolerance = 2 * standard.tolerance;
    return s;
  }
  std::error_code ec;
  if (!std::filesystem::exists(o.kernel, ec))
    throw CommandFailed("'" + o.kernel + "' is neither a standard kernel (" + [] {
      std::string names;
      for (std::string_view n : kiln::kernels::standard_kernel_names()) names += (names.empty() ? "" : ", ") + std::string(n);
      return names;
    }() + ") nor a readable IR file");
  const std::string text = read_input_file(o.kernel, kMaxIrFileBytes);
  kiln::Result<kiln::ir::Kernel> kernel = kiln::ir::parse(text);
  if (!kernel) {
    kiln::Error e = std::move(kernel).error();
    e.message = o.kernel + ":" + e.message;  // the parser's message starts with LINE:COL
    fail(e);
  }
  s.name = o.kernel;
  s.kernel = std::move(kernel).value();
  s.args = check(kiln::kernels::args_of(s.kernel, o.scalars));
  return s;
}

std::string format_ns(std::uint64_t ns) {
  if (ns == 0) return "-";
  if (ns < 10'000) return fmt::format("{} ns", ns);
  if (ns < 10'000'000) return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
  return fmt::format("{:.2f} ms", static_cast<double>(ns) / 1e6);
}

void print_progress(const kiln::tune::TuneProgress& p) {
  using Phase = kiln::tune::TuneProgress::Phase;
  if (p.phase == Phase::Search) {
    fmt::print(stderr, "tune: searching (budget {:g} s; set-up took {:.2f} s)\n", p.budget_s, p.times.setup_s);
  } else if (p.phase == Phase::Measure && p.last != nullptr) {
    const kiln::tune::CandidateRecord& r = *p.last;
    fmt::print(stderr, "tune: [{}/{}] {:<10} {:>10}  best {:>10}  {:.0f} s left  {}\n", p.measured, p.planned,
               kiln::tune::candidate_status_name(r.status), format_ns(r.median_ns), format_ns(p.best_ns),
               std::max(0.0, p.budget_s - p.elapsed_s), r.sequence.empty() ? "(untuned)" : r.sequence);
  } else if (p.phase == Phase::Retime && p.last != nullptr) {
    const kiln::tune::CandidateRecord& r = *p.last;
    fmt::print(stderr, "tune: re-timed {:<8} {:>10}  best {:>10}  {:.0f} s left  ({} runs) {}\n",
               kiln::tune::candidate_status_name(r.status), format_ns(r.median_ns), format_ns(p.best_ns),
               std::max(0.0, p.budget_s - p.elapsed_s), r.runs, r.sequence.empty() ? "(untuned)" : r.sequence);
  }
  std::fflush(stderr);
}

// The same kernel, untuned, timed on another device (e.g. cblas:0 for a
// matmul): the yardstick the tuned kernel is compared against.
std::uint64_t time_on_reference(const kiln::Runtime& runtime, const std::string& id, const Subject& subject,
                                const kiln::tune::AutotuneSettings& settings) {
  const kiln::Device device = check(runtime.device(id));
  const kiln::Program program = check(device.compile(subject.kernel));
  const std::vector<kiln::kernels::ArgSpec> args = subject.args.value();
  check(kiln::kernels::check_buffers_fit(args, subject.name, 1, &device));
  const std::vector<kiln::kernels::HostBuffer> inputs = kiln::kernels::make_input_buffers(args, 1);
  std::vector<kiln::Buffer> buffers;
  buffers.reserve(args.size());
  std::vector<kiln::LaunchArg> launch;
  std::size_t next_input = 0;
  for (const kiln::kernels::ArgSpec& arg : args) {
    if (arg.role == kiln::kernels::ArgRole::Scalar) {
      launch.push_back(kiln::LaunchArg::scalar(arg.dtype, arg.scalar_bits));
      continue;
    }
    buffers.push_back(check(device.allocate(std::max<std::uint64_t>(1, arg.elements * kiln::ir::dtype_bytes(arg.dtype)))));
    if (arg.role == kiln::kernels::ArgRole::Input) check(buffers.back().write(inputs[next_input++].data()));
    launch.push_back(kiln::LaunchArg::buffer(buffers.back()));
  }
  kiln::TimedLaunchOptions timing;
  timing.warmups = std::max(1u, settings.warmups);
  timing.repeats = settings.repeats;
  const kiln::Timing t = check(device.timed_launch(program, launch, timing));
  return kiln::tune::resolved_statistic(settings.statistic, device.info()) == kiln::tune::TimingStatistic::Min
             ? t.min_ns
             : t.median_ns;
}

// The command line's settings over the config's.
kiln::tune::TuneOptions tune_options(const kiln::Runtime& runtime, const TuneCommandOptions& o) {
  kiln::tune::TuneOptions options = kiln::tune::options_from(runtime.config());
  if (o.budget_s > 0) options.settings.budget_s = o.budget_s;
  if (o.allow_tf32) options.settings.allow_tf32 = true;
  if (o.seed >= 0) options.settings.seed = static_cast<std::uint64_t>(o.seed);
  if (!o.db.empty()) options.db_path = o.db;
  options.force = o.force;
  return options;
}

// The kernels named: standard names and files as given, a folder's *.kir
// files in name order.
std::vector<std::string> expand_kernels(const std::vector<std::string>& given) {
  std::vector<std::string> kernels;
  for (const std::string& item : given) {
    std::error_code ec;
    if (!is_standard_name(item) && std::filesystem::is_directory(item, ec)) {
      std::vector<std::string> files;
      for (const auto& entry : std::filesystem::directory_iterator(item, ec))
        if (entry.path().extension() == ".kir" && entry.is_regular_file(ec)) files.push_back(entry.path().string());
      if (files.empty()) throw CommandFailed("'" + item + "' is a folder without .kir files");
      std::sort(files.begin(), files.end());
      kernels.insert(kernels.end(), files.begin(), files.end());
    } else {
      kernels.push_back(item);
    }
  }
  return kernels;
}

std::string dtype_suffix(const TuneCommandOptions& o) {
  return std::string(kiln::ir::dtype_name(kiln::ir::dtype_from_name(o.dtype).value_or(kiln::ir::DType::F32)));
}

// Several kernels under one budget: a line per kernel while it works, then a table.
void run_many(const kiln::Device& device, const kiln::tune::TuneOptions& options, const TuneCommandOptions& o,
              const std::vector<std::string>& names) {
  std::vector<kiln::tune::KernelTask> tasks;
  for (const std::string& name : names) {
    TuneCommandOptions one = o;
    one.kernel = name;
    Subject subject = load_subject(one);
    const std::string label = is_standard_name(name) ? name + " " + dtype_suffix(o) : name;
    tasks.push_back({label, std::move(subject.kernel), std::move(subject.args), subject.tolerance});
  }
  auto progress = [&](const kiln::tune::TaskProgress& p) {
    if (o.quiet) return;
    if (p.index == p.total)
      fmt::print(stderr, "tune: done, {:.1f} s of {:.0f} s\n", p.elapsed_s, p.total_budget_s);
    else
      fmt::print(stderr, "tune: [{}/{}] {} (its share {:.1f} s; {:.1f} s of {:.0f} s used)\n", p.index + 1, p.total,
                 p.name, p.budget_s, p.elapsed_s, p.total_budget_s);
    std::fflush(stderr);
  };
  const auto began = std::chrono::steady_clock::now();
  const std::vector<kiln::tune::KernelTaskOutcome> outcomes = kiln::tune::tune_kernels(device, tasks, options, progress);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  bool failed = false;
  if (o.json) {
    boost::json::array rows;
    for (const kiln::tune::KernelTaskOutcome& r : outcomes) {
      boost::json::object row{{"kernel", r.name},       {"from_cache", r.from_database}, {"untuned_ns", r.untuned_ns},
                              {"baseline_ns", r.baseline_ns}, {"best_ns", r.best_ns},   {"sequence", r.sequence},
                              {"budget_s", r.budget_s}, {"seconds", r.seconds}};
      if (r.error) row["error"] = r.error->to_string();
      failed = failed || r.error.has_value();
      rows.push_back(std::move(row));
    }
    fmt::print("{}\n", boost::json::serialize(boost::json::object{{"device", device.id()},
                                                                  {"budget_s", options.settings.budget_s},
                                                                  {"seconds", seconds},
                                                                  {"kernels", std::move(rows)}}));
  } else {
    fmt::print("{:<28} {:>10} {:>10} {:>8} {:>7} {:>7}  {}\n", "kernel", "untuned", "tuned", "speed-up", "share",
               "took", "source");
    for (const kiln::tune::KernelTaskOutcome& r : outcomes) {
      std::string name = r.name.size() > 28 ? "..." + r.name.substr(r.name.size() - 25) : r.name;
      if (r.error) {
        failed = true;
        fmt::print("{:<28} error: {}\n", name, r.error->to_string());
        continue;
      }
      const std::uint64_t untuned = r.baseline_ns > 0 ? r.baseline_ns : r.untuned_ns;
      const double speedup = r.best_ns > 0 && untuned > 0 ? static_cast<double>(untuned) / static_cast<double>(r.best_ns) : 0;
      fmt::print("{:<28} {:>10} {:>10} {:>7.2f}x {:>6.1f}s {:>6.1f}s  {}\n", name, format_ns(untuned),
                 format_ns(r.best_ns), speedup, r.budget_s, r.seconds, r.from_database ? "database" : "tuned");
    }
    fmt::print("{} kernels on {} in {:.1f} s (budget {:.0f} s)\n", outcomes.size(), device.id(), seconds,
               options.settings.budget_s);
  }
  if (failed) throw CommandFailed("some kernels could not be tuned (their rows say why)");
}

void run(const GlobalOptions& global, const TuneCommandOptions& given) {
  // The budget of one kernel covers the command: opening the runtime (the
  // plugins' probes) and making the kernel are charged to it.
  const double started_at = kiln::tune::steady_clock_seconds();
  const kiln::Runtime runtime = open_runtime(global, {given.device, given.reference.empty() ? given.device : given.reference});
  const kiln::Device device = check(runtime.device(given.device));
  const std::vector<std::string> names = expand_kernels(given.kernels);
  // Asking for a tuning overrides a config that turns tuning off.
  kiln::CompileOptions compile{.mode = kiln::CompileMode::Tuned, .tune_on_miss = true,
                               .tuning = tune_options(runtime, given)};
  kiln::tune::TuneOptions& options = compile.tuning;
  if (names.size() > 1 || given.kernels.size() > 1) {
    if (!given.reference.empty()) throw CommandFailed("--reference times one kernel: give one KERNEL with it");
    run_many(device, options, given, names);
    return;
  }
  TuneCommandOptions o = given;
  o.kernel = names.front();
  const Subject subject = load_subject(o);
  options.started_at = started_at;
  options.args = subject.args;
  options.tolerance = subject.tolerance;
  options.kernel_name = subject.name + " " + dtype_suffix(o);
  if (!o.quiet) options.on_progress = print_progress;

  const kiln::Program tuned = check(device.compile(subject.kernel, compile));
  // Asked to tune, a fallback (no candidate finished within the budget) is
  // this command's failure; a host's Device::compile keeps the program.
  if (!tuned.compile_report().tuned_now && !tuned.compile_report().from_database)
    throw CommandFailed(tuned.compile_report().fallback_reason);
  kiln::tune::TuneReport report = kiln::tune::make_tune_report(tuned.compile_report(), subject.name, device.id());
  if (!o.reference.empty())
    report.reference = kiln::tune::TuneReport::Reference{o.reference,
                                                         time_on_reference(runtime, o.reference, subject, options.settings)};
  for (const std::string& w : runtime.warnings()) report.warnings.push_back(w);

  if (o.json) {
    fmt::print("{}", kiln::tune::tune_report_json(report));
    return;
  }
  for (const std::string& w : report.warnings) fmt::print(stderr, "warning: {}\n", w);
  fmt::print("kernel    {} ({})\n", subject.name, report.kernel_hash);
  fmt::print("device    {} ({})\n", device.id(), device.info().name);
  fmt::print("sequence  {}\n", report.sequence.empty() ? "(untuned)" : report.sequence);
  fmt::print("time      {} ({} of the runs, {} timer)\n", format_ns(report.best_ns), report.statistic, report.timer);
  // An untuned kernel cut short by its time limit (the budget caps it) has
  // no time: say what is known, a lower bound.
  const kiln::tune::CandidateRecord* untuned = nullptr;
  if (const auto& record = tuned.compile_report().record)
    for (const kiln::tune::CandidateRecord& r : record->candidates)
      if (r.sequence.empty()) untuned = &r;
  if (report.baseline_ns == 0 && untuned != nullptr && untuned->status != kiln::tune::CandidateStatus::Measured) {
    fmt::print("untuned   not timed ({}): {}\n", kiln::tune::candidate_status_name(untuned->status), untuned->error);
    fmt::print("speed-up  - (the untuned kernel was cut short: slower than its limit)\n");
  } else {
    fmt::print("untuned   {}\n", format_ns(report.baseline_ns));
    fmt::print("speed-up  {:.2f}x\n", report.speedup);
  }
  if (report.reference)
    fmt::print("reference {} on {}: tuned runs at {:.2f}x of its speed\n", format_ns(report.reference->ns),
               report.reference->device,
               report.best_ns > 0 ? static_cast<double>(report.reference->ns) / static_cast<double>(report.best_ns) : 0.0);
  if (report.from_cache)
    fmt::print("from the tuning database (nothing launched; {:.2f} s)\n", report.tune_seconds);
  else
    fmt::print("{} candidates measured in {:.1f} s (set-up {:.1f} s, search {:.1f} s, compile {:.1f} s, measure {:.1f} s)\n",
               report.candidates_measured, report.tune_seconds, report.times.setup_s, report.times.search_s,
               report.times.compile_s, report.times.measure_s);
}

}  // namespace

void add_tune_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* command = app.add_subcommand("tune", "Tune a kernel on a device (or find it in the tuning database)");
  auto o = std::make_shared<TuneCommandOptions>();
  command->add_option("KERNEL", o->kernels,
                      "A standard kernel name (matmul, exp-chain, ...), an IR text file, or a folder of .kir files; "
                      "several share one --budget")
      ->required();
  command->add_option("--device", o->device, "Device id, e.g. c:0")->required();
  command->add_option("--size", o->size, "Size of every dimension the kernel has (default 1024)");
  command->add_option("--m", o->m, "Rows (row kernels, matmul)");
  command->add_option("--n", o->n, "Elements (elementwise) or columns");
  command->add_option("--k", o->k, "Inner dimension (matmul)");
  command->add_option("--dtype", o->dtype, "Element type of a standard kernel (default f32)");
  command->add_option("--scalar", o->scalars, "Values of an IR file's var params, in slot order");
  command->add_option("--budget", o->budget_s, "Seconds for tuning (default: the config's autotune.budget_s)")
      ->check(kBudgetSeconds);
  command->add_option("--seed", o->seed, "Seed of the search (default: the config's autotune.seed)");
  command->add_option("--db", o->db, "Tuning database file (default: the config's tuning_db)");
  command->add_option("--reference", o->reference, "Also time the untuned kernel on this device (e.g. cblas:0)");
  command->add_flag("--allow-tf32", o->allow_tf32,
                    "Let f32 matrix products run on tf32 matrix units (inputs rounded to 10 mantissa bits; "
                    "default: the config's autotune.allow_tf32, else exact f32)");
  command->add_flag("--force", o->force, "Tune even when the database has the kernel (the result replaces it)");
  command->add_flag("--quiet", o->quiet, "No progress lines");
  command->add_flag("--json", o->json,
                    "Print one JSON object: kernel, device, baseline_ns, best_ns, speedup, sequence, "
                    "candidates_measured, from_cache, tune_seconds (then extras)");
  command->callback([&global, o] { run(global, *o); });
}

}  // namespace kiln::cli
