// kiln/tune/tune_options.hpp - how a tuning runs: settings, database,
// launch arguments, progress. Apart from tuner.hpp so that CompileOptions
// (kiln/compile_options.hpp, included by Device) can hold one without the
// runtime headers depending on the tuner's.
#pragma once

#include <kiln/kernels/library.hpp>
#include <kiln/tune/autotune_config.hpp>
#include <kiln/tune/tuning_db.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tune {

struct SearchSpace;
class LearnedCostModel;

// Where a tuning's wall time went, in seconds on its clock. They add up to
// the tuning's time but for bookkeeping between the phases.
struct TuneTimes {
  double setup_s = 0;    // from the budget's start to the search: inputs, reference, the untuned compile
  // setup_s in parts (what a large kernel's set-up spends is found here):
  double setup_open_s = 0;       // from the budget's start to the tuning's (kiln tune: opening the runtime)
  double setup_inputs_s = 0;     // lowering the untuned kernel, making and uploading inputs, resetting outputs
  double setup_reference_s = 0;  // the reference outputs (interpreted sample, or the untuned kernel's run)
  double setup_untuned_s = 0;    // waiting for the untuned kernel's compile after the search
  double search_s = 0;   // the search (cost model only)
  double compile_s = 0;  // waiting for candidates' compiles (those overlapping a measurement cost nothing here)
  double measure_s = 0;  // timed launches and output checks
};

// The default clock of a tuning (TuneOptions::clock): seconds on
// std::chrono::steady_clock.
double steady_clock_seconds();

// Reported while tuning (from the calling thread).
struct TuneProgress {
  // Retime: a finalist timed again before the choice (`last`, its record
  // with both timings merged), when the budget gave the candidates fewer
  // runs than the settings ask (docs/autotune.md, "Re-timing the finalists").
  enum class Phase { Search, Measure, Retime, Done } phase = Phase::Search;
  std::uint32_t measured = 0;        // candidates timed so far
  std::uint32_t retimed = 0;         // finalists timed again so far
  std::uint32_t planned = 0;         // candidates to time (n_launches, or fewer when the space is small)
  std::uint64_t best_ns = 0;         // best valid time so far (0: none yet)
  std::string best_sequence;
  double elapsed_s = 0;
  double budget_s = 0;
  const CandidateRecord* last = nullptr;  // the candidate just measured (Measure) or re-timed (Retime)
  TuneTimes times;                   // so far
};

struct TuneOptions {
  AutotuneSettings settings;
  // The tuning database; empty: default_tuning_db_path().
  std::filesystem::path db_path;
  // What to search; null: default_search_space(). Must outlive the call.
  const SearchSpace* space = nullptr;
  // Launch arguments for measurement, in slot order (a standard kernel's
  // carry input ranges); nullopt: kernels::args_of(kernel, scalars).
  std::optional<std::vector<kernels::ArgSpec>> args;
  std::vector<double> scalars;
  // compare() error a candidate may show against the untuned kernel; <= 0:
  // twice kernels::tolerance(dtype, the longest loop nest).
  double tolerance = 0;
  // For people, stored with the entry: "matmul 1024x1024x1024 f32", a file name.
  std::string kernel_name;
  // Tune even when the database has an entry (the new result replaces it).
  bool force = false;
  std::function<void(const TuneProgress&)> on_progress;
  // Seconds on a steady clock; empty: std::chrono::steady_clock. Tests
  // pass their own to check the budget without depending on real time.
  std::function<double()> clock;
  // When the budget started, on `clock`; nullopt: when tune_kernel is
  // called. A command that did work of its own first (opening the runtime:
  // `kiln tune` starts it on entry) charges that work to the budget too.
  std::optional<double> started_at;
  // Sequences (text form) measured right after the heuristic choice, e.g.
  // the winners of the same kernel at other shapes: Device::compile fills
  // it from the tuning database (docs/autotune.md, "Nearby shapes"). One
  // that does not parse or apply is recorded as failed; the search goes on.
  std::vector<std::string> seed_sequences;
  // The cost model learned from the database's measurements on this device
  // (kiln/tune/learned_cost.hpp), which then ranks the search's candidates
  // in place of the analytic one where the space has features; null: the
  // analytic model. Device::compile sets it when the database has enough
  // records and the model ranks them better held out.
  std::shared_ptr<const LearnedCostModel> cost_model = {};
};

}  // namespace kiln::tune
