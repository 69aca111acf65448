// kiln/tune/autotune_config.hpp - the autotuner's settings: the `autotune`
// section of config.json (docs/config.md lists every key, docs/autotune.md
// explains what each does to the search).
//
// The defaults find good kernels in seconds: a few dozen tournament steps ranked by
// the cost model, then about two dozen distinct candidates compiled and timed.
#pragma once

#include <kiln/result.hpp>
#include <kiln/runtime/device_info.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::tune {

enum class TuneMode {
  Tune,    // use the database; on a miss, tune and store the result
  DbOnly,  // use the database; on a miss, the untuned kernel (never tunes)
  Off,     // always the untuned kernel; the database is not opened
};
std::string_view tune_mode_name(TuneMode mode);  // "tune", "db-only", "off"

// Which statistic of a candidate's timed runs ranks it. Auto: the minimum
// on devices timed by the host clock around a synchronous run (c:0, whose
// cores are shared with everything else on the machine: another process
// only adds time, and a 2-thread launch waits for a descheduled thread),
// the median on devices with their own timers.
enum class TimingStatistic { Auto, Median, Min };
std::string_view timing_statistic_name(TimingStatistic statistic);  // "auto", "median", "min"
// The statistic used on `device`: Auto resolved, the others as they are.
TimingStatistic resolved_statistic(TimingStatistic statistic, const DeviceInfo& device);

struct AutotuneSettings {
  TuneMode mode = TuneMode::Tune;

  // The tournament search (as zyx's autotune.rs, see docs/autotune.md).
  std::uint32_t n_launches = 24;          // distinct candidates compiled and timed (>= 2)
  std::uint32_t n_seeds = 64;             // one-step sequences the pool starts from
  std::uint32_t n_added_per_step = 32;    // children added per expansion step
  std::uint32_t n_removed_per_step = 8;   // removed per step by tournament (worst cost)
  std::uint32_t n_total_opts = 48;        // expansion steps
  std::uint32_t max_sequence_length = 6;  // steps in one sequence
  // Kernels larger than this (ops, after lowering) are neither expanded nor
  // measured: compiling them would eat the budget (0: no limit).
  std::uint32_t max_kernel_ops = 2000;
  double budget_s = 30;                   // wall clock for one tuning, search + measurement
  std::uint64_t seed = 0;                 // the search's random choices

  // Timing (Device::timed_launch).
  std::uint32_t warmups = 1;
  std::uint32_t repeats = 5;
  TimingStatistic statistic = TimingStatistic::Auto;
  double abort_factor = 3;   // stop timing a candidate after a run this many times the best so far
  double noise_band = 0.02;  // relative: times this close to the best tie; the simpler sequence wins
  // A candidate run longer than max(timeout_factor x the best so far,
  // timeout_floor_s) is abandoned as timed out (the first, with no best yet:
  // timeout_floor_s). 0 for the factor: no limit. On OpenCL, Vulkan and CUDA
  // the device is lost afterwards (kiln/plugin.h, timeout_ns).
  double timeout_factor = 50;
  double timeout_floor_s = 10;

  // Compilation of candidates: threads (0: one per hardware thread, at most 8).
  std::uint32_t compile_threads = 0;
  // Whether compilation may overlap measurement. "auto": not on CPU devices,
  // where a compiler running next to the kernel disturbs its timing.
  enum class Overlap { Auto, Always, Never } overlap_compile = Overlap::Auto;

  // Numerics: false keeps every f32 product exact in f32. true lets f32
  // matrix products run on the tf32 matrix units (each input rounded to 10
  // mantissa bits, as torch.backends.cuda.matmul.allow_tf32 = True does):
  // the search then uses default_search_space(Precision::AllowTf32), whose
  // version differs, so tf32 records never answer an exact tuning's look-up.
  bool allow_tf32 = false;

  // Rank candidates by the cost model learned from the tuning database's
  // measurements on the device (docs/cost-model.md, "The learned model")
  // when it has enough of them and ranks them better held out than the
  // analytic model; false: always the analytic model.
  bool learned_cost_model = true;
};

// Parses the object of an `autotune` section (JSON text, comments and
// trailing commas allowed). Errors are ErrorCode::Config naming
// "<file>:<line>:<col>: autotune.<key>: ..."; unknown keys are appended to
// `warnings`, never silent. `file` names the text in messages.
Result<AutotuneSettings> parse_autotune_settings(std::string_view json_text, const std::filesystem::path& file,
                                                 std::vector<std::string>& warnings);

// The tuning database used when the config names none:
// $XDG_CACHE_HOME/kiln/tuning.sqlite, else ~/.cache/kiln/tuning.sqlite.
std::filesystem::path default_tuning_db_path();

}  // namespace kiln::tune
