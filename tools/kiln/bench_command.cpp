// kiln bench [--device ID ...] [--kernels LIST] [--size N | --m --n --k]
//            [--dtype T] [--budget S | --tuned] [--repeats N] [--json] [--quick]
// Tunes (or takes from the tuning database) and times the standard kernels
// on the chosen devices, and sets each rate against an anchor measured in
// the same run (bench_anchors.hpp). docs/bench.md describes the output.
#include "bench_anchors.hpp"
#include "commands.hpp"
#include "option_limits.hpp"

#include <kiln/compile_options.hpp>
#include <kiln/ir/dtype.hpp>
#include <kiln/kernels/run.hpp>
#include <kiln/tune/tuner.hpp>

#include <boost/json.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace kiln::cli {

namespace {

struct BenchSettings {
  std::vector<std::string> devices;  // empty: every loaded device but dummy's
  std::vector<std::string> kernels;  // empty: kDefaultKernels (quick: kQuickKernels)
  std::optional<std::int64_t> size, m, n, k;
  std::string dtype = "f32";
  std::optional<double> budget_s;  // empty: the config's (quick: kQuickBudget)
  bool tuned_only = false;         // --tuned: the database only
  std::optional<unsigned> repeats;  // empty: 5 (quick: 2)
  std::string db;
  bool json = false;
  bool quick = false;
};

const std::vector<std::string> kDefaultKernels = {"add",          "exp-chain",      "sum-rows",     "softmax-rows",
                                                  "layernorm-rows", "rmsnorm-rows", "transpose",    "matmul"};
const std::vector<std::string> kQuickKernels = {"add", "sum-rows", "matmul"};
constexpr double kQuickBudget = 0.5;

// The sizes of a full run (large enough to leave the caches of a CPU) and of
// a quick one (milliseconds each).
kernels::KernelSize default_size(const std::string& kernel, bool quick) {
  if (kernel == "matmul" || kernel == "matmul-bt") return quick ? kernels::KernelSize{64, 64, 64} : kernels::KernelSize{1024, 1024, 1024};
  if (kernel == "add" || kernel == "add-dyn" || kernel == "exp-chain")
    return {1, quick ? std::int64_t{1} << 16 : std::int64_t{1} << 24, 1};
  if (kernel == "transpose" || kernel == "sum-rows" || kernel == "max-rows")
    return quick ? kernels::KernelSize{128, 256, 1} : kernels::KernelSize{2048, 2048, 1};
  return quick ? kernels::KernelSize{64, 512, 1} : kernels::KernelSize{1024, 4096, 1};
}

struct Row {
  std::string kernel;
  std::string dtype;
  std::string device;
  std::optional<kernels::StandardKernel> standard;  // set once the kernel was made
  enum class Status { Ok, Skipped, Failed } status = Status::Ok;
  std::string reason;  // skipped or failed: why
  std::uint64_t time_ns = 0;
  double rate = 0;
  std::string unit;
  std::string tuning;  // "database", "tuned", "heuristic"
  std::string sequence;
  double tune_seconds = 0;
  std::string tuning_note;  // why the heuristic program ran
  AnchorRate anchor;
  std::optional<double> ratio;
};

std::string_view status_name(Row::Status s) {
  return s == Row::Status::Ok ? "ok" : s == Row::Status::Skipped ? "skipped" : "failed";
}

Row skipped_device(const std::string& device, const std::string& reason) {
  Row row;
  row.device = device;
  row.status = Row::Status::Skipped;
  row.reason = reason;
  return row;
}

bool is_matmul(const std::string& kernel) { return kernel.rfind("matmul", 0) == 0; }

// The devices to benchmark, and a skipped row's reason for each one asked
// for (or, by default, each plugin) that is not there.
std::vector<kiln::Device> pick_devices(const kiln::Runtime& runtime, const BenchSettings& s, std::vector<Row>& rows) {
  std::vector<kiln::Device> devices;
  if (!s.devices.empty()) {
    for (const std::string& id : s.devices) {
      kiln::Result<kiln::Device> device = runtime.device(id);
      if (device) devices.push_back(std::move(device).value());
      else rows.push_back(skipped_device(id, device.error().message));
    }
    return devices;
  }
  for (const kiln::PluginRecord& p : runtime.plugins()) {
    if (p.name == "dummy") continue;  // simulated timings: only when asked for by --device
    if (p.status != kiln::PluginStatus::Loaded) {
      rows.push_back(skipped_device(p.name, fmt::format("plugin {}: {}", kiln::plugin_status_name(p.status), p.reason)));
      continue;
    }
    for (const kiln::DeviceInfo& d : p.devices) {
      kiln::Result<kiln::Device> device = runtime.device(d.id);
      if (device) devices.push_back(std::move(device).value());
      else rows.push_back(skipped_device(d.id, device.error().message));
    }
  }
  return devices;
}

kiln::Result<kiln::Program> compile_for_bench(const kiln::Runtime& runtime, const kiln::Device& device,
                                              const kernels::StandardKernel& kernel, const BenchSettings& s) {
  kiln::CompileOptions options{.mode = kiln::CompileMode::Tuned, .tune_on_miss = !s.tuned_only,
                               .tuning = kiln::tune::options_from(runtime.config())};
  if (s.budget_s) options.tuning.settings.budget_s = *s.budget_s;
  else if (s.quick) options.tuning.settings.budget_s = kQuickBudget;
  if (!s.db.empty()) options.tuning.db_path = s.db;
  options.tuning.args = kernel.args;
  options.tuning.tolerance = 2 * kernel.tolerance;  // as kiln tune: the untuned kernel rounds too
  options.tuning.kernel_name = kernel.name + " " + std::string(ir::dtype_name(kernel.dtype));
  if (!s.tuned_only)
    options.tuning.on_progress = [&](const kiln::tune::TuneProgress& p) {
      if (p.phase == kiln::tune::TuneProgress::Phase::Search)
        fmt::print(stderr, "bench: {} on {}: tuning (budget {:g} s)\n", kernel.name, device.id(), p.budget_s);
      // A candidate past its time limit loses the device where a run cannot
      // be cancelled (OpenCL, Vulkan, CUDA): every later row then fails
      // with "the device is lost", so the one that lost it is named here.
      if (p.phase == kiln::tune::TuneProgress::Phase::Measure && p.last != nullptr &&
          p.last->status == kiln::tune::CandidateStatus::TimedOut)
        fmt::print(stderr, "bench: {} on {}: candidate '{}' timed out: {}\n", kernel.name, device.id(),
                   p.last->sequence.empty() ? "(untuned)" : p.last->sequence, p.last->error);
    };
  return device.compile(kernel.kernel, options);
}

void bench_one(const kiln::Runtime& runtime, const kiln::Device& device, Row& row, const BenchSettings& s,
               BenchAnchors& anchors, unsigned repeats) {
  const kernels::StandardKernel& kernel = *row.standard;
  fmt::print(stderr, "bench: {} {} [{}] on {}\n", row.kernel, row.dtype, kernels::size_text(kernel), row.device);
  std::fflush(stderr);
  // A fixed-function device (cblas:0 runs matrix products only) that refuses
  // the kernel as it stands is a skip, found before a tuning is tried; any
  // other compile error is a failure.
  if (device.info().fixed_function())
    if (kiln::Result<kiln::Program> plain = device.compile(kernel.kernel); !plain) {
      row.status = Row::Status::Skipped;
      row.reason = plain.error().message;
      return;
    }
  kiln::Result<kiln::Program> program = compile_for_bench(runtime, device, kernel, s);
  if (!program) {
    row.status = Row::Status::Failed;
    row.reason = program.error().message;
    return;
  }
  const kiln::CompileReport& compiled = program->compile_report();
  row.tuning = compiled.from_database ? "database" : compiled.tuned_now ? "tuned" : "heuristic";
  row.sequence = compiled.sequence;
  row.tune_seconds = compiled.seconds;
  row.tuning_note = compiled.fallback_reason;
  kernels::RunOptions options;
  options.timing.warmups = 1;
  options.timing.repeats = repeats;
  kiln::Result<kernels::RunReport> report = kernels::run_standard_kernel(device, kernel, *program, options);
  if (!report) {
    row.status = Row::Status::Failed;
    row.reason = report.error().message;
    return;
  }
  if (!report->ok) {
    row.status = Row::Status::Failed;
    row.reason = fmt::format("wrong result: max relative error {:.3g} in output {} (tolerance {:.3g})",
                             report->max_rel_err, report->worst_output, report->tolerance);
    return;
  }
  row.time_ns = report->timing ? report->timing->min_ns : 0;  // best of the timed launches
  if (row.time_ns == 0) {
    row.status = Row::Status::Failed;
    row.reason = "the device reported no time";
    return;
  }
  const bool matmul = is_matmul(row.kernel);
  row.unit = matmul ? "GFLOP/s" : "GB/s";
  row.rate = (matmul ? kernel.flops : kernel.bytes) / static_cast<double>(row.time_ns);
  row.anchor = anchors.anchor_for(device, kernel, matmul);
  if (row.anchor.absent_reason.empty() && row.anchor.rate > 0 && std::isfinite(row.anchor.rate))
    row.ratio = row.rate / row.anchor.rate;
  else if (row.anchor.absent_reason.empty())
    row.anchor.absent_reason = "the anchor measured no rate";
}

boost::json::object row_json(const Row& row) {
  boost::json::object o;
  o["kernel"] = row.kernel;
  o["dtype"] = row.dtype;
  o["device"] = row.device;
  o["status"] = status_name(row.status);
  if (row.standard) {
    boost::json::object size;
    const kernels::KernelDims dims = kernels::kernel_dims(*row.standard);
    if (dims.m) size["m"] = row.standard->size.m;
    if (dims.n) size["n"] = row.standard->size.n;
    if (dims.k) size["k"] = row.standard->size.k;
    o["size"] = std::move(size);
  }
  if (row.status != Row::Status::Ok) {
    o["reason"] = row.reason;
    return o;
  }
  o["time_ns"] = row.time_ns;
  o["rate"] = row.rate;
  o["unit"] = row.unit;
  o["tuning"] = {{"source", row.tuning}, {"sequence", row.sequence}, {"seconds", row.tune_seconds},
                 {"note", row.tuning_note}};
  boost::json::object anchor;
  if (row.ratio) {
    anchor["name"] = row.anchor.name;
    anchor["rate"] = row.anchor.rate;
  } else {
    anchor["name"] = nullptr;
    anchor["absent_reason"] = row.anchor.absent_reason;
  }
  o["anchor"] = std::move(anchor);
  o["ratio"] = row.ratio ? boost::json::value(*row.ratio) : boost::json::value(nullptr);
  return o;
}

std::string short_time(std::uint64_t ns) {
  const double v = static_cast<double>(ns);
  if (ns >= 1'000'000'000) return fmt::format("{:.2f} s", v * 1e-9);
  if (ns >= 1'000'000) return fmt::format("{:.2f} ms", v * 1e-6);
  return fmt::format("{:.1f} us", v * 1e-3);
}

// Three significant digits at most, and no exponent.
std::string short_rate(double rate) {
  return fmt::format("{:.{}f}", rate, rate >= 100 ? 0 : rate >= 10 ? 1 : rate >= 1 ? 2 : 3);
}

// 80 columns: 14 + 9 + 9 + 13 + 16 + 6 + 7 and the spaces between.
void print_table(const std::vector<Row>& rows, const BenchSettings& s, unsigned repeats) {
  fmt::print("{:<14} {:<9} {:>9} {:>13} {:>16} {:>6} {:<7}\n", "KERNEL", "DEVICE", "TIME", "RATE", "ANCHOR", "RATIO",
             "TUNING");
  std::vector<std::string> notes;
  for (const Row& row : rows) {
    if (row.status != Row::Status::Ok) {
      fmt::print("{:<14} {:<9} {}\n", row.kernel.empty() ? "-" : row.kernel, row.device, status_name(row.status));
      notes.push_back(fmt::format("{}{}: {}: {}", row.kernel.empty() ? "" : row.kernel + " on ", row.device,
                                  status_name(row.status), row.reason));
      continue;
    }
    const std::string rate = short_rate(row.rate) + (row.unit == "GB/s" ? " GB/s" : " GF/s");
    const std::string anchor =
        row.ratio ? (row.anchor.name == "cblas:0" ? "cblas" : row.anchor.name) + " " + short_rate(row.anchor.rate)
                  : "no anchor";
    const std::string ratio = row.ratio ? fmt::format("{:.2f}", *row.ratio) : "-";
    const std::string tuning = row.tuning == "database" ? "db" : row.tuning == "tuned" ? "tuned" : "untuned";
    fmt::print("{:<14} {:<9} {:>9} {:>13} {:>16} {:>6} {:<7}\n", row.kernel, row.device, short_time(row.time_ns), rate,
               anchor, ratio, tuning);
    if (!row.ratio) notes.push_back(fmt::format("{} on {}: no anchor: {}", row.kernel, row.device, row.anchor.absent_reason));
    if (!row.tuning_note.empty()) notes.push_back(fmt::format("{} on {}: untuned: {}", row.kernel, row.device, row.tuning_note));
  }
  fmt::print("\ndtype {}; time: best of {} launches; RATIO = RATE / ANCHOR (same run, same unit)\n", s.dtype, repeats);
  std::string sizes;
  for (const Row& row : rows)
    if (row.standard && sizes.find(row.kernel + " ") == std::string::npos)
      sizes += fmt::format("{}{} {}", sizes.empty() ? "" : "; ", row.kernel, kernels::size_text(*row.standard));
  if (!sizes.empty()) fmt::print("sizes: {}\n", sizes);
  for (const std::string& note : notes) fmt::print("note: {}\n", note);
}

void run(const GlobalOptions& global, const BenchSettings& s) {
  const std::optional<ir::DType> dtype = ir::dtype_from_name(s.dtype);
  if (!dtype) throw CommandFailed("--dtype " + s.dtype + ": not a dtype (f32, f16, bf16, f64, i32, i64, ...)");
  const std::vector<std::string>& names = !s.kernels.empty() ? s.kernels : s.quick ? kQuickKernels : kDefaultKernels;
  for (const std::string& name : names) {
    const auto known = kernels::standard_kernel_names();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (std::string_view n : known) list += (list.empty() ? "" : ", ") + std::string(n);
      throw CommandFailed("--kernels: '" + name + "' is not a standard kernel (" + list + ")");
    }
  }
  const unsigned repeats = s.repeats.value_or(s.quick ? 2u : 5u);
  const kiln::Runtime runtime = open_runtime(global);
  std::vector<Row> rows;
  const std::vector<kiln::Device> devices = pick_devices(runtime, s, rows);
  BenchAnchors anchors(runtime, s.quick, repeats);
  for (const std::string& name : names) {
    kernels::KernelSize size = default_size(name, s.quick);
    if (s.size) size = {*s.size, *s.size, *s.size};
    size = {s.m.value_or(size.m), s.n.value_or(size.n), s.k.value_or(size.k)};
    kiln::Result<kernels::StandardKernel> kernel = kernels::make_standard_kernel(name, size, *dtype);
    for (const kiln::Device& device : devices) {
      Row row;
      row.kernel = name;
      row.dtype = s.dtype;
      row.device = device.id();
      if (!kernel) {
        row.status = kernel.error().code == kiln::ErrorCode::Unsupported ? Row::Status::Skipped : Row::Status::Failed;
        row.reason = kernel.error().message;
      } else {
        row.standard = *kernel;
        bench_one(runtime, device, row, s, anchors, repeats);
      }
      rows.push_back(std::move(row));
    }
  }
  if (s.json) {
    boost::json::array out;
    for (const Row& row : rows) out.push_back(row_json(row));
    boost::json::object top{{"schema", "kiln-bench/1"}, {"dtype", s.dtype}, {"repeats", repeats}, {"quick", s.quick}};
    top["rows"] = std::move(out);
    fmt::print("{}\n", boost::json::serialize(top));
  } else {
    print_table(rows, s, repeats);
  }
  std::fflush(stdout);
  const auto failed = std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.status == Row::Status::Failed; });
  if (failed > 0) throw CommandFailed(fmt::format("bench: {} row{} failed (see the table)", failed, failed == 1 ? "" : "s"));
}

}  // namespace

void add_bench_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* command = app.add_subcommand(
      "bench", "Tune (or take from the tuning database) and time the standard kernels on devices, each against an "
               "anchor measured in the same run (docs/bench.md)");
  auto s = std::make_shared<BenchSettings>();
  command->add_option("--device", s->devices,
                      "Device ids, repeatable (default: every loaded device but the dummy plugin's)");
  std::string all;
  for (const std::string& k : kDefaultKernels) all += (all.empty() ? "" : ",") + k;
  command->add_option("--kernels", s->kernels, "Comma-separated standard kernels (default: " + all + ")")
      ->delimiter(',');
  command->add_option("--size", s->size, "Every dimension of every kernel (default: per kernel, docs/bench.md)")
      ->check(CLI::PositiveNumber);
  command->add_option("--m", s->m, "Rows (row kernels, transpose, matmul); overrides --size")->check(CLI::PositiveNumber);
  command->add_option("--n", s->n, "Elements (elementwise), columns (row kernels, matmul); overrides --size")
      ->check(CLI::PositiveNumber);
  command->add_option("--k", s->k, "Reduction length of matmul; overrides --size")->check(CLI::PositiveNumber);
  command->add_option("--dtype", s->dtype, "Element type (kernels that lack it are skipped)")->capture_default_str();
  CLI::Option* budget = command->add_option("--budget", s->budget_s,
                                            "Tuning budget in seconds per kernel and device when the database lacks "
                                            "the kernel (default: the config's; --quick: 0.5)")
                            ->check(kBudgetSeconds);
  command->add_flag("--tuned", s->tuned_only,
                    "Take programs from the tuning database only; without a record, the untuned heuristic program "
                    "(the row says so)")
      ->excludes(budget);
  command->add_option("--repeats", s->repeats, "Timed launches per kernel, the best is kept (default 5; --quick 2)")
      ->check(CLI::Range(1u, kMaxRepeats));
  command->add_option("--db", s->db, "Tuning database file (default: the config's tuning_db)");
  command->add_flag("--json", s->json, "Print one JSON object (schema kiln-bench/1, docs/bench.md) instead of a table");
  command->add_flag("--quick", s->quick,
                    "Small sizes, a 0.5 s budget, 2 repeats, kernels add,sum-rows,matmul (the CTest `bench` run)");
  command->callback([&global, s] { run(global, *s); });
}

}  // namespace kiln::cli
