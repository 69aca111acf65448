// The `autotune` section of config.json: typed fields, defaults, and errors
// that name file:line:col and the key.
#include <gtest/gtest.h>

#include "kiln/runtime/config.hpp"
#include "kiln/tune/autotune_config.hpp"

#include <cstdlib>

using namespace kiln;
using namespace kiln::tune;

namespace {

Result<Config> parse(const std::string& autotune) {
  return parse_config("{\n  \"autotune\": " + autotune + "\n}\n", "/etc/kiln/config.json");
}

std::string error_of(const std::string& autotune) {
  Result<Config> config = parse(autotune);
  EXPECT_FALSE(config.ok()) << autotune;
  return config.ok() ? "" : config.error().message;
}

}  // namespace

TEST(AutotuneConfig, DefaultsFindGoodKernelsInSeconds) {
  const AutotuneSettings s;
  EXPECT_EQ(s.mode, TuneMode::Tune);
  EXPECT_GE(s.n_launches, 20u) << "measurement decides: at least 20 candidates by default";
  EXPECT_LE(s.budget_s, 60);
  EXPECT_GE(s.repeats, 3u);
  EXPECT_GE(s.warmups, 1u);
  EXPECT_EQ(s.statistic, TimingStatistic::Auto);
  DeviceInfo host_timed;  // c:0: a steady clock around a synchronous run
  DeviceInfo device_timed;
  device_timed.flags = KILN_DEVICE_DEVICE_TIMER;
  EXPECT_EQ(resolved_statistic(s.statistic, host_timed), TimingStatistic::Min);
  EXPECT_EQ(resolved_statistic(s.statistic, device_timed), TimingStatistic::Median);
  EXPECT_EQ(resolved_statistic(TimingStatistic::Median, host_timed), TimingStatistic::Median);
  EXPECT_EQ(builtin_config().autotune.settings.n_launches, s.n_launches);
}

TEST(AutotuneConfig, ReadsEveryField) {
  const Config config = parse(R"({
    "mode": "db-only", "n_launches": 40, "n_seeds": 10, "n_added_per_step": 5,
    "n_removed_per_step": 0, "n_total_opts": 7, "max_sequence_length": 3, "max_kernel_ops": 0,
    "budget_s": 2.5, "seed": 18446744073709551615, "warmups": 0, "repeats": 9,
    "statistic": "min", "abort_factor": 0, "noise_band": 0.1, "timeout_factor": 20, "timeout_floor_s": 0.25,
    "compile_threads": 3, "overlap_compile": "never", "allow_tf32": true
  })").value();
  const AutotuneSettings& s = config.autotune.settings;
  EXPECT_EQ(s.mode, TuneMode::DbOnly);
  EXPECT_EQ(s.n_launches, 40u);
  EXPECT_EQ(s.n_seeds, 10u);
  EXPECT_EQ(s.n_added_per_step, 5u);
  EXPECT_EQ(s.n_removed_per_step, 0u);
  EXPECT_EQ(s.n_total_opts, 7u);
  EXPECT_EQ(s.max_sequence_length, 3u);
  EXPECT_EQ(s.max_kernel_ops, 0u);
  EXPECT_DOUBLE_EQ(s.budget_s, 2.5);
  EXPECT_EQ(s.seed, 18446744073709551615ull);
  EXPECT_EQ(s.warmups, 0u);
  EXPECT_EQ(s.repeats, 9u);
  EXPECT_EQ(s.statistic, TimingStatistic::Min);
  EXPECT_EQ(s.abort_factor, 0);
  EXPECT_DOUBLE_EQ(s.noise_band, 0.1);
  EXPECT_DOUBLE_EQ(s.timeout_factor, 20);
  EXPECT_DOUBLE_EQ(s.timeout_floor_s, 0.25);
  EXPECT_EQ(s.compile_threads, 3u);
  EXPECT_EQ(s.overlap_compile, AutotuneSettings::Overlap::Never);
  EXPECT_TRUE(s.allow_tf32);
  EXPECT_FALSE(AutotuneSettings{}.allow_tf32) << "exact f32 unless asked";
  EXPECT_TRUE(config.warnings.empty());
}

TEST(AutotuneConfig, WrongTypesAndRangesNameFileLineColumnAndKey) {
  EXPECT_EQ(error_of(R"({"n_launches": "many"})"),
            "/etc/kiln/config.json:2:16: autotune.n_launches: expected an integer from 1 to 1000000, got a string");
  EXPECT_EQ(error_of("{\n  \"repeats\": 0}"),
            "/etc/kiln/config.json:3:3: autotune.repeats: expected an integer from 1 to 1000, got 0");
  EXPECT_EQ(error_of(R"({"budget_s": -1})"),
            "/etc/kiln/config.json:2:16: autotune.budget_s: expected a number > 0 and <= 1e+07, got -1");
  EXPECT_EQ(error_of(R"({"mode": "fast"})"),
            "/etc/kiln/config.json:2:16: autotune.mode: expected one of \"tune\", \"db-only\", \"off\", got \"fast\"");
  EXPECT_EQ(error_of(R"({"abort_factor": 0.5})"),
            "/etc/kiln/config.json:2:16: autotune.abort_factor: expected a number >= 1 (or 0: never abort), got 0.5");
  EXPECT_EQ(error_of(R"({"timeout_factor": 0.5})"),
            "/etc/kiln/config.json:2:16: autotune.timeout_factor: expected a number >= 1 (or 0: no time limit), got 0.5");
  EXPECT_EQ(error_of(R"({"timeout_floor_s": 0})"),
            "/etc/kiln/config.json:2:16: autotune.timeout_floor_s: expected a number > 0 and <= 86400, got 0");
  EXPECT_EQ(error_of(R"({"seed": -3})"), "/etc/kiln/config.json:2:16: autotune.seed: expected an integer >= 0, got -3");
  EXPECT_EQ(error_of(R"({"noise_band": 2})"),
            "/etc/kiln/config.json:2:16: autotune.noise_band: expected a number >= 0 and <= 1, got 2");
  EXPECT_EQ(error_of(R"({"allow_tf32": 1})"),
            "/etc/kiln/config.json:2:16: autotune.allow_tf32: expected true or false, got an integer");
  EXPECT_NE(error_of("[1, 2]").find("autotune: expected an object"), std::string::npos);
}

TEST(AutotuneConfig, UnknownKeysAreWarnings) {
  const Config config = parse(R"({"n_launch": 3, "budget_s": 1})").value();
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_EQ(config.warnings[0], "/etc/kiln/config.json:2:16: autotune.n_launch: unknown key (ignored)");
  EXPECT_DOUBLE_EQ(config.autotune.settings.budget_s, 1);
}

TEST(AutotuneConfig, ParsesASectionOnItsOwn) {
  std::vector<std::string> warnings;
  const AutotuneSettings s = parse_autotune_settings(R"({"mode": "off", // comments are fine
      "extra": true,})", "section.json", warnings).value();
  EXPECT_EQ(s.mode, TuneMode::Off);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "section.json:2:7: autotune.extra: unknown key (ignored)");
}

TEST(AutotuneConfig, DatabasePathFollowsTheConfigThenXdg) {
  const Config config = parse_config(R"({"tuning_db": "db/tuning.sqlite"})", "/etc/kiln/config.json").value();
  EXPECT_EQ(config.tuning_db, "/etc/kiln/db/tuning.sqlite");
  const char* cache = std::getenv("XDG_CACHE_HOME");  // set by the test main
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(default_tuning_db_path(), std::filesystem::path(cache) / "kiln" / "tuning.sqlite");
}
