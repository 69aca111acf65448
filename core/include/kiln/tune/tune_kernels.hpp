// kiln/tune/tune_kernels.hpp - several kernels (a model's) tuned on one
// device under one wall-clock budget, shared by where tuning pays off.
//
//   std::vector<kiln::tune::KernelTask> tasks = ...;   // one per kernel
//   kiln::tune::TuneOptions options = kiln::tune::options_from(runtime.config());
//   options.settings.budget_s = 60;                     // for all of them
//   auto outcomes = kiln::tune::tune_kernels(device, tasks, options);
//
// Kernels the tuning database has cost nothing. The others are timed once
// with the heuristic schedule (what an untuned compile gives), then tuned
// one after another, the most costly first (untuned time x weight), each
// given half an equal share of what is left and half a share in proportion
// to its cost; time a tuning does not use flows on to the next.
// docs/autotune.md, "Several kernels", says why and how this differs from
// TVM's task scheduler.
//
// Threads: as Device::compile with CompileMode::Tuned.
#pragma once

#include <kiln/kernels/library.hpp>
#include <kiln/result.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/tune/tune_options.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::tune {

struct KernelTask {
  std::string name;  // for people (a file name, "softmax-rows f16"); stored with the record
  ir::Kernel kernel;
  // As TuneOptions::args and ::tolerance (nullopt / 0: from the kernel).
  std::optional<std::vector<kernels::ArgSpec>> args;
  double tolerance = 0;
  // How many times the host runs it per step of its work (a layer's count
  // in a model): its untuned time is multiplied by this when the budget is
  // shared. > 0.
  double weight = 1;
};

struct KernelTaskOutcome {
  std::string name;
  std::optional<Program> program;  // the tuned program (or the database's)
  std::optional<Error> error;      // set when there is no program
  bool from_database = false;
  std::uint64_t untuned_ns = 0;    // the heuristic program's time (0: not measured)
  std::uint64_t best_ns = 0;       // the tuned program's time (0: unknown)
  std::uint64_t baseline_ns = 0;   // the tuning's own untuned measurement
  std::string sequence;
  double budget_s = 0;             // what the scheduler gave its tuning
  double seconds = 0;              // what it took, measuring included
};

// Called before each kernel's tuning and once at the end (index == total).
struct TaskProgress {
  std::size_t index = 0;  // the task about to be tuned, in the order tuned
  std::size_t total = 0;  // the kernels that need tuning
  std::string name;
  double budget_s = 0;    // its share
  double elapsed_s = 0;   // since tune_kernels began
  double total_budget_s = 0;
};

// Outcomes in the order of `tasks`. options.settings.budget_s is the budget
// of the whole call, set-up (the database look-ups and the untuned timings)
// included; options.kernel_name, ::args and ::tolerance are taken from each
// task. A kernel that fails (it does not compile, its tuning fails) has its
// error in its outcome; the others go on.
std::vector<KernelTaskOutcome> tune_kernels(const Device& device, std::span<const KernelTask> tasks,
                                            const TuneOptions& options,
                                            const std::function<void(const TaskProgress&)>& on_task = {});

}  // namespace kiln::tune
