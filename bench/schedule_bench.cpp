// Untuned, heuristic and (optionally) tuned schedules of the standard
// kernels, side by side on every device that compiles (issue: good kernels
// without tuning). Each program is checked against the kernel's C++
// reference before it is timed; a row says when a check failed.
//
//   build/bin/schedule_bench [--devices c:0,opencl:0] [--kernels add,matmul] [--tune SECONDS] [--json]
//
// --tune runs `kiln tune`'s search (no database) with that budget per
// kernel and adds its time and the heuristic's ratio to it. Sizes are the
// CPU-sized ones below (KILN_BENCH_SCALE=4 multiplies the elementwise and
// row counts, e.g. for a GPU).
#include <kiln/kernels/library.hpp>
#include <kiln/kernels/run.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/runtime.hpp>
#include <kiln/tune/heuristic.hpp>
#include <kiln/tune/tuner.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using namespace kiln;

namespace {

struct Case {
  std::string kernel;
  kernels::KernelSize size;
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<Case> cases(std::int64_t scale) {
  return {
      {"add", {.n = (std::int64_t{1} << 22) * scale}},
      {"exp-chain", {.n = 1000003 * scale}},
      {"sum-rows", {.m = 1024 * scale, .n = 1024}},
      {"softmax-rows", {.m = 256 * scale, .n = 4096}},
      {"layernorm-rows", {.m = 256 * scale, .n = 4096}},
      {"rmsnorm-rows", {.m = 256 * scale, .n = 4096}},
      {"transpose", {.m = 1024 * scale, .n = 1024}},
      {"matmul", {.m = 512, .n = 512, .k = 512}},
  };
}

struct Measured {
  double ms = 0;  // median; 0 when it failed
  std::string note;
};

Measured run(const Device& device, const kernels::StandardKernel& k, const Program& program) {
  kernels::RunOptions options;
  options.timing.warmups = 1;
  options.timing.repeats = 5;
  Result<kernels::RunReport> report = kernels::run_standard_kernel(device, k, program, options);
  if (!report) return {0, "run: " + report.error().message};
  if (!report->ok) return {0, "wrong result (rel err " + std::to_string(report->max_rel_err) + ")"};
  return {static_cast<double>(report->time_ns()) / 1e6, ""};
}

Measured run(const Device& device, const kernels::StandardKernel& k, const Result<Program>& program) {
  if (!program) return {0, "compile: " + program.error().message};
  return run(device, k, *program);
}

Result<Program> compile(const Device& device, const Result<ir::Kernel>& lowered) {
  if (!lowered) return lowered.error();
  return device.compile(*lowered, {.mode = CompileMode::Frozen});
}

std::string ratio(double a, double b) {
  if (a <= 0 || b <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", a / b);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> device_ids, kernel_names;
  double tune_budget = 0;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--devices" && i + 1 < argc) device_ids = split(argv[++i]);
    else if (arg == "--kernels" && i + 1 < argc) kernel_names = split(argv[++i]);
    else if (arg == "--tune" && i + 1 < argc) tune_budget = std::atof(argv[++i]);
    else if (arg == "--json") json = true;
    else {
      std::fprintf(stderr, "usage: %s [--devices A,B] [--kernels A,B] [--tune SECONDS] [--json]\n", argv[0]);
      return 2;
    }
  }
  Result<Runtime> runtime = Runtime::open();
  if (!runtime) {
    std::fprintf(stderr, "schedule_bench: %s\n", runtime.error().to_string().c_str());
    return 1;
  }
  if (device_ids.empty())
    for (const DeviceInfo& info : runtime->devices())
      if (info.can_compile()) device_ids.push_back(info.id);
  const char* scale_text = std::getenv("KILN_BENCH_SCALE");
  const std::int64_t scale = scale_text != nullptr ? std::max<std::int64_t>(1, std::atoll(scale_text)) : 1;

  if (!json)
    std::printf("%-15s %-10s %10s %10s %7s %10s %7s  %s\n", "kernel", "device", "untuned", "heuristic", "speedup",
                tune_budget > 0 ? "tuned" : "", tune_budget > 0 ? "h/tuned" : "", "heuristic sequence (choice ms)");
  for (const std::string& id : device_ids) {
    Result<Device> device = runtime->device(id);
    if (!device) {
      std::fprintf(stderr, "schedule_bench: %s\n", device.error().to_string().c_str());
      continue;
    }
    for (const Case& c : cases(scale)) {
      if (!kernel_names.empty() && std::find(kernel_names.begin(), kernel_names.end(), c.kernel) == kernel_names.end())
        continue;
      Result<kernels::StandardKernel> k = kernels::make_standard_kernel(c.kernel, c.size);
      if (!k) continue;
      const Measured untuned = run(*device, *k, compile(*device, passes::optimize(k->kernel, {}, device->info())));
      const auto choice_start = std::chrono::steady_clock::now();
      Result<tune::HeuristicSchedule> h = tune::heuristic_schedule(k->kernel, device->info());
      const double choice_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - choice_start).count();
      const Measured heuristic =
          h ? run(*device, *k, device->compile(h->lowered, {.mode = CompileMode::Frozen})) : Measured{0, "heuristic: " + h.error().message};
      Measured tuned;
      if (tune_budget > 0) {
        tune::TuneOptions options = tune::options_from(runtime->config());
        options.settings.budget_s = tune_budget;
        options.args = k->args;
        options.tolerance = k->tolerance;
        Result<tune::TuneResult> t = tune::tune_kernel(*device, k->kernel, options);
        tuned = t ? run(*device, *k, t->program) : Measured{0, "tune: " + t.error().message};
      }
      const std::string sequence = h ? passes::to_string(h->sequence) : "";
      std::string note = untuned.note + (heuristic.note.empty() ? "" : " heuristic " + heuristic.note) +
                         (tuned.note.empty() ? "" : " tuned " + tuned.note);
      if (json) {
        std::printf(
            "{\"kernel\":\"%s\",\"device\":\"%s\",\"untuned_ms\":%.4f,\"heuristic_ms\":%.4f,\"tuned_ms\":%.4f,"
            "\"choice_ms\":%.1f,\"sequence\":\"%s\",\"note\":\"%s\"}\n",
            c.kernel.c_str(), id.c_str(), untuned.ms, heuristic.ms, tuned.ms, choice_ms, sequence.c_str(),
            note.c_str());
      } else {
        char tuned_text[16] = "";
        if (tune_budget > 0) std::snprintf(tuned_text, sizeof tuned_text, "%.3f", tuned.ms);
        std::printf("%-15s %-10s %10.3f %10.3f %7s %10s %7s  %s (%.0f ms)%s%s\n", c.kernel.c_str(), id.c_str(),
                    untuned.ms, heuristic.ms, ratio(untuned.ms, heuristic.ms).c_str(), tuned_text,
                    tune_budget > 0 ? ratio(tuned.ms, heuristic.ms).c_str() : "", sequence.c_str(), choice_ms,
                    note.empty() ? "" : "  ! ", note.c_str());
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
