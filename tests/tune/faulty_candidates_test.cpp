// A candidate cannot take the tuner down: on the C plugin, whose option
// test_plant_fault makes every second compiled program crash (or hang) when
// it runs, the tuner runs each measured program isolated
// (KILN_TIMED_ISOLATE: plugins/c/isolated_launch.cpp), records the crash
// or the timeout as that candidate's error, finishes the search, and the
// database holds the other candidates' results (docs/autotune.md, "Faulty
// candidates").
#include <gtest/gtest.h>

#include "kiln/kernels/library.hpp"
#include "kiln/runtime.hpp"
#include "kiln/tune/tuner.hpp"
#include "kiln/tune/tuning_db.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

namespace fs = std::filesystem;
using namespace kiln;
using namespace kiln::tune;

namespace {

struct Scratch {
  fs::path dir;
  Scratch() {
    dir = fs::temp_directory_path() / ("kiln-faulty-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// A runtime with only the C plugin at `library`, planting `fault`.
Result<Runtime> c_runtime(const Scratch& s, const fs::path& library, const std::string& fault,
                          const std::string& more_options = "") {
  const fs::path config = s.dir / "config.json";
  std::ofstream(config) << R"({"plugins": {"c": {"enabled": false}, "cblas": {"enabled": false},
      "cuda": {"enabled": false}, "opencl": {"enabled": false}, "vulkan": {"enabled": false},
      "dummy": {"enabled": false},
      "faulty": {"library": ")" << library.string() << R"(", "options": {"cache_dir": ")"
                        << (s.dir / "cache").string() << R"(", "threads": 1, "test_plant_fault": ")" << fault
                        << "\"" << more_options << "}}}}";
  KILN_TRY_ASSIGN(Config parsed, load_config_file(config));
  return Runtime::create(std::move(parsed));
}

// A private copy of the built C plugin (a library inits once per process,
// with the options of the first Runtime), its worker beside it as in an
// install: the path of the copy, or nullopt when the plugin was not built.
std::optional<fs::path> private_c_plugin(const Scratch& s) {
  const fs::path built = fs::path(KILN_PLUGIN_DIR);
  if (!fs::exists(built / "libkiln-c.so")) return std::nullopt;
  fs::create_directories(s.dir / "plugins");
  fs::copy_file(built / "libkiln-c.so", s.dir / "plugins" / "libkiln-c.so");
  fs::copy_file(built / "kiln-c-worker", s.dir / "plugins" / "kiln-c-worker");
  return s.dir / "plugins" / "libkiln-c.so";
}

TuneOptions small_options(const Scratch& s, std::uint32_t launches) {
  TuneOptions o;
  o.settings.n_launches = launches;
  o.settings.max_sequence_length = 2;
  o.settings.budget_s = 120;
  o.settings.repeats = 2;
  o.settings.warmups = 1;
  o.settings.compile_threads = 1;  // every second compile is planted: keep the order fixed
  o.db_path = s.dir / "tuning.sqlite";
  o.kernel_name = "faulty add";
  return o;
}

std::size_t count(const TuningEntry& e, CandidateStatus status) {
  return static_cast<std::size_t>(std::count_if(e.candidates.begin(), e.candidates.end(),
                                                [&](const CandidateRecord& r) { return r.status == status; }));
}

}  // namespace

TEST(FaultyCandidates, ACrashingCandidateIsRecordedAndTheSearchAndDatabaseSurvive) {
  const fs::path plugin = fs::path(KILN_PLUGIN_DIR) / "libkiln-c.so";
  if (!fs::exists(plugin)) GTEST_SKIP() << "the C plugin was not built (" << plugin << ")";
  Scratch s;
  Runtime runtime = c_runtime(s, plugin, "segv").value();
  const Device device = runtime.device("faulty:0").value();
  const kernels::StandardKernel add = kernels::make_standard_kernel("add", {.m = 1, .n = 1 << 14}).value();
  TuneOptions options = small_options(s, 8);
  options.args = add.args;
  const Program program =
      device.compile(add.kernel, {.mode = CompileMode::Tuned, .tune_on_miss = true, .tuning = options}).value();
  const CompileReport& tuned = program.compile_report();
  ASSERT_TRUE(tuned.record.has_value());
  const TuningEntry& entry = *tuned.record;
  EXPECT_GE(count(entry, CandidateStatus::LaunchFailed), 1u);
  // The others were timed: measured, or aborted as slower than the best.
  EXPECT_GE(count(entry, CandidateStatus::Measured) + count(entry, CandidateStatus::Aborted), 2u);
  for (const CandidateRecord& r : entry.candidates)
    std::printf("%-40s %-14s %8llu ns  %s\n", r.sequence.c_str(), std::string(candidate_status_name(r.status)).c_str(),
                static_cast<unsigned long long>(r.median_ns), r.error.substr(0, 90).c_str());
  bool named = false;
  for (const CandidateRecord& r : entry.candidates)
    if (r.status == CandidateStatus::LaunchFailed)
      named = named || r.error.find("crashed in an isolated launch (killed by signal 11 (SIGSEGV))") != std::string::npos;
  EXPECT_TRUE(named) << "no LaunchFailed record names the signal";
  // The winner was measured, and the database, read back from the file,
  // holds every candidate, the failed ones with their errors.
  const CandidateRecord* winner = nullptr;
  for (const CandidateRecord& r : entry.candidates)
    if (r.sequence == entry.sequence) winner = &r;
  ASSERT_NE(winner, nullptr);
  EXPECT_EQ(winner->status, CandidateStatus::Measured);
  const TuningDb db = TuningDb::open(options.db_path).value();
  const std::optional<TuningEntry> stored = db.find(entry.key).value();
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->candidates, entry.candidates);
  // The process is whole: the winner runs.
  EXPECT_TRUE(program.valid());
}

TEST(FaultyCandidates, AHangingCandidateIsAbandonedAtTheLaunchTimeout) {
  Scratch s;
  const std::optional<fs::path> plugin = private_c_plugin(s);
  if (!plugin) GTEST_SKIP() << "the C plugin was not built";
  Runtime runtime = c_runtime(s, *plugin, "hang", R"(, "launch_timeout": 0.5)").value();
  const Device device = runtime.device("faulty:0").value();
  const kernels::StandardKernel add = kernels::make_standard_kernel("add", {.m = 1, .n = 4096}).value();
  TuneOptions options = small_options(s, 4);
  options.args = add.args;
  const auto begin = std::chrono::steady_clock::now();
  const Program program =
      device.compile(add.kernel, {.mode = CompileMode::Tuned, .tune_on_miss = true, .tuning = options}).value();
  const CompileReport& report = program.compile_report();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(60));
  ASSERT_TRUE(report.record.has_value());
  bool named = false;
  for (const CandidateRecord& r : report.record->candidates)
    if (r.status == CandidateStatus::LaunchFailed)
      named = named || r.error.find("hung in an isolated launch (no answer within 0.5 s") != std::string::npos;
  EXPECT_TRUE(named);
  EXPECT_GE(count(*report.record, CandidateStatus::Measured), 1u);
}

// The tuner's own limit (autotune.timeout_factor / timeout_floor_s, through
// the timed launch's timeout_ns) abandons a hanging candidate as timed out,
// long before the plugin's launch_timeout (60 s by default) would.
TEST(FaultyCandidates, AHangingCandidateIsTimedOutAtTheTunersLimit) {
  Scratch s;
  const std::optional<fs::path> plugin = private_c_plugin(s);
  if (!plugin) GTEST_SKIP() << "the C plugin was not built";
  Runtime runtime = c_runtime(s, *plugin, "hang").value();
  const Device device = runtime.device("faulty:0").value();
  const kernels::StandardKernel add = kernels::make_standard_kernel("add", {.m = 1, .n = 4096}).value();
  TuneOptions options = small_options(s, 4);
  options.args = add.args;
  options.settings.timeout_floor_s = 0.4;
  const auto begin = std::chrono::steady_clock::now();
  const Program program =
      device.compile(add.kernel, {.mode = CompileMode::Tuned, .tune_on_miss = true, .tuning = options}).value();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(30));
  const CompileReport& report = program.compile_report();
  ASSERT_TRUE(report.record.has_value());
  EXPECT_GE(count(*report.record, CandidateStatus::TimedOut), 1u);
  for (const CandidateRecord& r : report.record->candidates)
    if (r.status == CandidateStatus::TimedOut) {
      EXPECT_NE(r.error.find("passed its time limit"), std::string::npos) << r.error;
    }
  EXPECT_GE(count(*report.record, CandidateStatus::Measured), 1u);
  // The database, read back from the file, holds the timed-out candidates.
  const TuningDb db = TuningDb::open(options.db_path).value();
  const std::optional<TuningEntry> stored = db.find(report.record->key).value();
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->candidates, report.record->candidates);
}

// Where a timeout leaves the device usable (the C plugin's isolated launch),
// a run's time limit comes from the budget too: a hanging candidate is cut
// short within the budget, not at timeout_floor_s (10 s by default).
TEST(FaultyCandidates, AHangingCandidateIsCutShortByTheBudget) {
  Scratch s;
  const std::optional<fs::path> plugin = private_c_plugin(s);
  if (!plugin) GTEST_SKIP() << "the C plugin was not built";
  Runtime runtime = c_runtime(s, *plugin, "hang").value();
  const Device device = runtime.device("faulty:0").value();
  ASSERT_TRUE(device.info().survives_timeout());
  const kernels::StandardKernel add = kernels::make_standard_kernel("add", {.m = 1, .n = 4096}).value();
  TuneOptions options = small_options(s, 4);
  options.args = add.args;
  options.settings.budget_s = 2;
  ASSERT_EQ(options.settings.timeout_floor_s, 10);
  std::vector<std::string> timed_out;
  options.on_progress = [&](const TuneProgress& p) {
    if (p.last != nullptr && p.last->status == CandidateStatus::TimedOut) timed_out.push_back(p.last->error);
  };
  // Every second program compiled hangs: the untuned kernel or the
  // heuristic choice (they compile side by side), so one of the two.
  const Result<TuneResult> result = tune_kernel(device, add.kernel, options);
  ASSERT_FALSE(timed_out.empty());
  for (const std::string& error : timed_out) {
    const std::size_t at = error.find("no answer within ");
    ASSERT_NE(at, std::string::npos) << error;
    const double limit_s = std::stod(error.substr(at + std::string("no answer within ").size()));
    EXPECT_LE(limit_s, options.settings.budget_s) << error;
  }
  // What fits the budget besides was measured, or nothing fitted it: then
  // the error says so (Device::compile falls back to the heuristic program).
  if (!result) {
    EXPECT_EQ(result.error().code, ErrorCode::Timeout) << result.error().to_string();
  }
}

// Once a candidate is measured, a run twice past the abort threshold has
// lost already: where a timeout keeps the device, it is cut there (at
// least kMinRunCapSeconds, for the worker's start), not at the budget's
// cap (half of what is left of 30 s) or timeout_floor_s.
TEST(FaultyCandidates, AHangingCandidateAfterAMeasuredOneIsCutNearTheAbortThreshold) {
  Scratch s;
  const std::optional<fs::path> plugin = private_c_plugin(s);
  if (!plugin) GTEST_SKIP() << "the C plugin was not built";
  Runtime runtime = c_runtime(s, *plugin, "hang").value();
  const Device device = runtime.device("faulty:0").value();
  ASSERT_TRUE(device.info().survives_timeout());
  const kernels::StandardKernel add = kernels::make_standard_kernel("add", {.m = 1, .n = 4096}).value();
  TuneOptions options = small_options(s, 6);
  options.args = add.args;
  options.settings.budget_s = 30;
  options.settings.timeout_floor_s = 2;  // the first hang, with nothing measured yet: 2 s a run
  bool measured = false;
  std::vector<std::string> cut_after_a_best;
  options.on_progress = [&](const TuneProgress& p) {
    if (p.last == nullptr) return;
    if (p.last->status == CandidateStatus::TimedOut && measured) cut_after_a_best.push_back(p.last->error);
    measured = measured || p.last->status == CandidateStatus::Measured;
  };
  ASSERT_TRUE(tune_kernel(device, add.kernel, options));
  ASSERT_FALSE(cut_after_a_best.empty()) << "every second program hangs";
  for (const std::string& error : cut_after_a_best) {
    const std::size_t at = error.find("no answer within ");
    ASSERT_NE(at, std::string::npos) << error;
    const double limit_s = std::stod(error.substr(at + std::string("no answer within ").size()));
    // The launch's limit is its timeout times its runs (warm-ups included):
    // 0.25 s each here, 2 s (the floor) each before.
    EXPECT_LT(limit_s, 2) << error;
  }
}
