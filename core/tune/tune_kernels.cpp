// tune_kernels: one budget for several kernels (kiln/tune/tune_kernels.hpp).
#include "kiln/tune/tune_kernels.hpp"

#include "kiln/compile_options.hpp"
#include "kiln/kernels/run.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>

namespace kiln::tune {

namespace {

// One untimed-warm-up-free run of `program`: the cost the split weighs. A
// kernel that cannot be timed weighs as the costliest one measured.
std::optional<std::uint64_t> time_once(const Device& device, const Program& program, const KernelTask& task) {
  Result<std::vector<kernels::ArgSpec>> args =
      task.args ? Result<std::vector<kernels::ArgSpec>>(*task.args) : kernels::args_of(task.kernel, {});
  if (!args) return std::nullopt;
  const std::vector<kernels::HostBuffer> inputs = kernels::make_input_buffers(*args, 1);
  Result<kernels::DeviceArguments> uploaded = kernels::DeviceArguments::upload(device, *args, inputs);
  if (!uploaded) return std::nullopt;
  Result<Timing> timing = device.timed_launch(program, uploaded->launch_args(), {.warmups = 0, .repeats = 1});
  if (!timing) return std::nullopt;
  return std::max<std::uint64_t>(1, timing->median_ns);
}

void take_report(KernelTaskOutcome& outcome, const Program& program) {
  const CompileReport& report = program.compile_report();
  outcome.from_database = report.from_database;
  outcome.best_ns = report.best_ns;
  outcome.baseline_ns = report.baseline_ns;
  outcome.sequence = report.sequence;
}

}  // namespace

std::vector<KernelTaskOutcome> tune_kernels(const Device& device, std::span<const KernelTask> tasks,
                                            const TuneOptions& options,
                                            const std::function<void(const TaskProgress&)>& on_task) {
  const auto now = [&options] {
    return options.clock ? options.clock()
                         : std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  const double start = now();
  const double budget = options.settings.budget_s;
  std::vector<KernelTaskOutcome> outcomes(tasks.size());
  auto options_for = [&](const KernelTask& task) {
    TuneOptions o = options;
    o.kernel_name = task.name;
    o.args = task.args;
    o.tolerance = task.tolerance;
    o.on_progress = nullptr;  // one line per kernel (on_task), not one per candidate
    return o;
  };

  // The database first (and the heuristic program of each miss, timed once).
  std::vector<std::size_t> pending;
  std::vector<double> cost(tasks.size(), 0);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const KernelTask& task = tasks[i];
    KernelTaskOutcome& outcome = outcomes[i];
    outcome.name = task.name;
    CompileOptions lookup{.mode = CompileMode::Tuned, .tune_on_miss = false, .tuning = options_for(task)};
    const double began = now();
    Result<Program> found = device.compile(task.kernel, lookup);
    if (!found) {
      outcome.error = found.error();
      outcome.seconds = now() - began;
      continue;
    }
    if (found->compile_report().from_database && !options.force) {
      take_report(outcome, *found);
      outcome.program = std::move(found).value();
      outcome.seconds = now() - began;
      continue;
    }
    if (std::optional<std::uint64_t> ns = time_once(device, *found, task)) outcome.untuned_ns = *ns;
    outcome.seconds = now() - began;
    pending.push_back(i);
  }
  // Unmeasured kernels weigh as the costliest measured one (or 1 ns if none was).
  std::uint64_t costliest = 1;
  for (std::size_t i : pending) costliest = std::max(costliest, outcomes[i].untuned_ns);
  for (std::size_t i : pending)
    cost[i] = static_cast<double>(outcomes[i].untuned_ns > 0 ? outcomes[i].untuned_ns : costliest) *
              std::max(tasks[i].weight, 1e-9);
  std::stable_sort(pending.begin(), pending.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });

  double cost_left = std::accumulate(pending.begin(), pending.end(), 0.0, [&](double s, std::size_t i) { return s + cost[i]; });
  for (std::size_t n = 0; n < pending.size(); ++n) {
    const std::size_t i = pending[n];
    const KernelTask& task = tasks[i];
    KernelTaskOutcome& outcome = outcomes[i];
    const double elapsed = now() - start;
    const double left = std::max(0.0, budget - elapsed);
    const double kernels_left = static_cast<double>(pending.size() - n);
    const double share = left * (0.5 / kernels_left + 0.5 * (cost_left > 0 ? cost[i] / cost_left : 1.0 / kernels_left));
    cost_left -= cost[i];
    outcome.budget_s = share;
    if (on_task) on_task({n, pending.size(), task.name, share, elapsed, budget});
    TuneOptions o = options_for(task);
    // A share too small to measure anything still tunes: the tuner's
    // set-up and its first candidates (its own minimum) are all it gets.
    o.settings.budget_s = std::max(share, 1e-3);
    CompileOptions tuned{.mode = CompileMode::Tuned, .tune_on_miss = true, .tuning = o};
    const double began = now();
    Result<Program> program = device.compile(task.kernel, tuned);
    outcome.seconds += now() - began;
    if (!program) {
      outcome.error = program.error();
      continue;
    }
    take_report(outcome, *program);
    outcome.program = std::move(program).value();
  }
  if (on_task) on_task({pending.size(), pending.size(), "", 0, now() - start, budget});
  return outcomes;
}

}  // namespace kiln::tune
