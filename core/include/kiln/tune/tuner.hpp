// kiln/tune/tuner.hpp - the autotuner, and tuned programs for host apps.
//
//   kiln::Runtime runtime = kiln::Runtime::open().value();
//   kiln::Device device = runtime.device("c:0").value();
//   auto tuned = kiln::tune::get_tuned_program(device, kernel,
//                                              kiln::tune::options_from(runtime.config()));
//   // tuned->program is ready to launch; tuned->from_cache says whether the
//   // database had it (then nothing was launched).
//
// tune_kernel() is the search itself (no database): a beam search ranked by
// the cost model (beam_search.hpp), then at least `n_launches` distinct
// candidates compiled on a thread pool and timed one at a time with the
// device's timed launch, every one checked against the untuned kernel's
// outputs on random inputs. docs/autotune.md describes it step by step.
//
// Threads: tune_kernel() and get_tuned_program() may run on several threads
// at once, on one device or on several, and in several processes: each
// tuning has its own buffers; the database file serialises its writers
// (SQLite WAL, the last store of one key wins). Tunings that share a device
// share its queue, so their timings disturb each other: measure on an idle
// device for results worth keeping. Each measured program runs isolated
// where the plugin can (KILN_TIMED_ISOLATE): a candidate that crashes or
// hangs is that candidate's error, not the process's end.
#pragma once

#include <kiln/ir/kernel.hpp>
#include <kiln/kernels/library.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/result.hpp>
#include <kiln/runtime/config.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/tune/autotune_config.hpp>
#include <kiln/tune/search_space.hpp>
#include <kiln/tune/tuning_db.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tune {

// Reported while tuning (from the calling thread).
struct TuneProgress {
  enum class Phase { Search, Measure, Done } phase = Phase::Search;
  std::uint32_t measured = 0;        // candidates timed so far
  std::uint32_t planned = 0;         // candidates to time (n_launches, or fewer when the space is small)
  std::uint64_t best_ns = 0;         // best valid time so far (0: none yet)
  std::string best_sequence;
  double elapsed_s = 0;
  double budget_s = 0;
  const CandidateRecord* last = nullptr;  // the candidate just measured (Measure phase)
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
};

// The settings and database path a config gives (its `autotune` section and
// `tuning_db`).
TuneOptions options_from(const Config& config);

// "plugin=<name>;device=<name>;driver=<version>;compiler=<cache key>": what a
// tuning result depends on besides the kernel. The plugin's cache key holds
// its version and compiler identity (plugin.h).
Result<std::string> device_fingerprint(const Device& device);

struct TuneResult {
  TuningEntry entry;             // the winner, the key, every candidate (as stored)
  passes::OptSequence sequence;  // the winner
  ir::Kernel kernel;             // the winner, lowered: exactly what was measured
  Program program;               // the winner, compiled
  std::vector<std::string> warnings;
};

// Searches and measures now; reads and writes no database.
Result<TuneResult> tune_kernel(const Device& device, const ir::Kernel& kernel, const TuneOptions& options);

struct TunedProgram {
  Program program;
  ir::Kernel kernel;             // what `program` was compiled from
  passes::OptSequence sequence;  // applied to the kernel given ("" = untuned)
  std::uint64_t best_ns = 0;     // its measured time (0 when never measured: mode off, or untuned fallback)
  std::uint64_t baseline_ns = 0;  // the untuned kernel's measured time
  std::uint32_t candidates_measured = 0;  // launched by this call: 0 on a database hit
  bool from_cache = false;
  bool tuned = false;            // a tuning ran in this call
  double tune_seconds = 0;       // spent in this call
  std::optional<TuningEntry> entry;  // the database entry used or written
  std::vector<std::string> warnings;  // e.g. a stale entry, a database that could not be opened
};

// A program for `kernel` on `device`, as settings.mode says:
//   tune     the database entry when there is a valid one (launches
//            nothing), else tune_kernel() and store the result;
//   db-only  the database entry, else the untuned kernel;
//   off      the untuned kernel (normalized and finalized).
// An entry is valid when its sequence, replayed on this kernel, lowers to
// the kernel hash it recorded; a stale one is re-tuned with a warning.
Result<TunedProgram> get_tuned_program(const Device& device, const ir::Kernel& kernel, const TuneOptions& options);

// The database key of `kernel` on `device` in `space`.
Result<TuningKey> tuning_key(const Device& device, const ir::Kernel& kernel, const SearchSpace& space);

}  // namespace kiln::tune
