// kiln/tune/tuner.hpp - the autotuner. A host app that wants a tuned
// program asks Device::compile for one (kiln/compile_options.hpp):
//
//   kiln::Runtime runtime = kiln::Runtime::open().value();
//   kiln::Device device = runtime.device("c:0").value();
//   kiln::CompileOptions options = kiln::tuned_compile_options(runtime.config());
//   kiln::Program program = device.compile(kernel, options).value();
//   // program.compile_report().from_database says whether the database had
//   // it (then nothing was launched).
//
// tune_kernel() is the search itself (no database): a tournament search ranked by
// the cost model (tournament_search.hpp), then at least `n_launches` distinct
// candidates compiled on a thread pool and timed one at a time with the
// device's timed launch, every one checked against the untuned kernel's
// outputs on random inputs. docs/autotune.md describes it step by step.
//
// Threads: tune_kernel() and Device::compile (CompileMode::Tuned) may run on several threads
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
#include <kiln/tune/tune_options.hpp>
#include <kiln/tune/tuning_db.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tune {

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
  TuneTimes times;               // where the time went
  std::string ranked_by = "analytic";  // which cost model ranked the candidates: "analytic" or "learned"
};

// Searches and measures now; reads and writes no database.
Result<TuneResult> tune_kernel(const Device& device, const ir::Kernel& kernel, const TuneOptions& options);

// The database key of `kernel` on `device` in `space`.
Result<TuningKey> tuning_key(const Device& device, const ir::Kernel& kernel, const SearchSpace& space);

}  // namespace kiln::tune
