// kiln/compile_options.hpp - how Device::compile turns a kernel into a
// program, and what it reports about the choice.
//
//   Program p = device.compile(kernel).value();                        // heuristic
//   Program f = device.compile(kernel, {.mode = CompileMode::Frozen}).value();
//   CompileOptions tuned = tuned_compile_options(runtime.config());    // the config's database
//   Program t = device.compile(kernel, tuned).value();
//   if (!t.compile_report().fallback_reason.empty()) ...               // no record: heuristic
//
// Device::compile is the one way to compile a kernel: `kiln run`, `kiln
// tune`, the conformance suite, the benchmarks and the C API all reach the
// device through it.
#pragma once

#include <kiln/ir/kernel.hpp>
#include <kiln/passes/bounds.hpp>
#include <kiln/runtime/config.hpp>
#include <kiln/tune/tune_options.hpp>
#include <kiln/tune/tuning_db.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

enum class CompileMode {
  // The always-on passes and the schedule kiln picks for the device without
  // measuring anything (tune::heuristic_kernel). The default.
  Heuristic,
  // The tuning database's record for this kernel and device, replayed
  // exactly (nothing is launched). Without a valid record: Heuristic, with
  // the reason in CompileReport::fallback_reason, or, when
  // CompileOptions::tune_on_miss, a tuning now within the budget, stored.
  Tuned,
  // The kernel exactly as given: verified, no pass runs. For kernels that
  // are already lowered (the autotuner's candidates) and for tests.
  Frozen,
};

std::string_view compile_mode_name(CompileMode mode);  // "heuristic", "tuned", "frozen"
std::optional<CompileMode> compile_mode_from_name(std::string_view name);

struct CompileOptions {
  CompileMode mode = CompileMode::Heuristic;
  // Tuned: on a miss (no record, or a stale one) tune now and store the
  // result instead of falling back to Heuristic.
  bool tune_on_miss = false;
  // Tuned: the database (tuning.db_path; empty: tune::default_tuning_db_path())
  // and, when tuning, how (tuning.settings: budget_s, seed, launches, ...;
  // tuning.args, tolerance, kernel_name, on_progress, force). Its
  // settings.mode is not read: `mode` and `tune_on_miss` decide.
  tune::TuneOptions tuning{};
  // The bounds policy for this compile (every mode); empty: the device's
  // (Device::bounds_policy(), the config's "bounds").
  std::optional<passes::BoundsPolicy> bounds = std::nullopt;
};

// Tuned, as a config says: its tuning_db and autotune settings; a miss
// tunes when autotune.mode is "tune", falls back when "db-only"; mode "off"
// gives Heuristic options.
CompileOptions tuned_compile_options(const Config& config);

// What Device::compile did, kept with the Program (Program::compile_report).
struct CompileReport {
  CompileMode requested = CompileMode::Heuristic;
  // What produced the program: Tuned only when a record was replayed or a
  // tuning ran; a Tuned request that fell back says Heuristic.
  CompileMode used = CompileMode::Heuristic;
  ir::Kernel kernel;         // what the device compiled (after the passes)
  std::string sequence;      // tuned optimizations applied (passes::to_string); "" = none
  bool from_database = false;  // a record was replayed
  bool tuned_now = false;      // a tuning ran in this call
  std::string fallback_reason;  // requested Tuned, used Heuristic: why
  std::vector<std::string> warnings;  // a stale record, a database that could not be opened
  std::uint64_t best_ns = 0;       // Tuned: the program's measured time
  std::uint64_t baseline_ns = 0;   // Tuned: the untuned kernel's measured time
  std::uint32_t candidates_measured = 0;  // launched by this call (0 on a database hit)
  double seconds = 0;              // spent in compile, tuning included (host clock)
  tune::TuneTimes tune_times;      // a tuning ran (tuned_now): where its time went
  // A tuning ran: which cost model ranked its candidates ("analytic" or
  // "learned", tune/learned_cost.hpp) and why, with the learned model's
  // held-out rank correlation when there was one.
  std::string ranked_by = {};
  std::string cost_model_note = {};
  std::optional<tune::TuningEntry> record;  // Tuned: the database record used or written
};

}  // namespace kiln
