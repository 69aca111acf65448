// `kiln run` end to end: the real executable on the dummy device (enabled by
// a config file), for every standard kernel; its JSON, its summary, its
// exit codes and messages when something is wrong.
#include <gtest/gtest.h>

#include "kiln/kernels/library.hpp"
#include "support/run_cli.hpp"

#include <boost/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kiln::test {
namespace {

namespace fs = std::filesystem;

// A scratch folder with a config that enables only the dummy plugin: a
// GPU-shaped device, and a narrow one without f64 and without exp (nor exp2,
// which the passes may turn exp into).
class KilnRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln-cli-run-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    config_ = dir_ / "kiln.json";
    std::ofstream(config_) << R"({"plugins": {
      "c": {"enabled": false}, "cblas": {"enabled": false}, "cuda": {"enabled": false},
      "opencl": {"enabled": false}, "vulkan": {"enabled": false},
      "dummy": {"enabled": true, "options": {"simulate": [
        {"name": "cli-gpu"},
        {"name": "cli-narrow", "dtypes": ["f32"], "unsupported_ops": {"f32": ["exp", "exp2"]}}]}}}})";
  }
  void TearDown() override { fs::remove_all(dir_); }

  CliOutput kiln(const std::string& args) const { return run_cli(dir_, "--config " + config_.string() + " " + args); }

  fs::path dir_, config_;
};

TEST_F(KilnRun, EveryStandardKernelPassesOnTheDummyWithJson) {
  for (std::string_view name : kernels::standard_kernel_names()) {
    SCOPED_TRACE(name);
    const CliOutput run = kiln("run " + std::string(name) + " --device dummy:0 --m 7 --n 33 --k 5 --json");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const boost::json::object report = boost::json::parse(run.out).as_object();
    // The issue's fields first, in its order.
    const char* const first[] = {"kernel", "device", "ok", "max_rel_err", "time_ns", "gflops", "gbps"};
    std::size_t position = 0;
    for (const auto& field : report) {
      if (position < std::size(first)) {
        EXPECT_EQ(field.key(), first[position]) << position;
      }
      ++position;
    }
    EXPECT_EQ(report.at("kernel").as_string(), name);
    EXPECT_EQ(report.at("device").as_string(), "dummy:0");
    EXPECT_TRUE(report.at("ok").as_bool());
    EXPECT_TRUE(report.at("checked").as_bool());
    EXPECT_LE(report.at("max_rel_err").to_number<double>(), report.at("tolerance").to_number<double>());
    EXPECT_GT(report.at("time_ns").to_number<std::uint64_t>(), 0u);
    EXPECT_EQ(report.at("timer").as_string(), "model");
    EXPECT_EQ(report.at("runs").to_number<std::uint32_t>(), 5u);
    EXPECT_EQ(report.at("dtype").as_string(), "f32");
  }
}

// Numbers a user types are checked, never silently defaulted or unbounded.
TEST_F(KilnRun, OutOfRangeBudgetsAndRepeatsAreErrorsNamingTheOption) {
  for (const char* bad : {"--tuned --budget 0", "--tuned --budget -1", "--tuned --budget nan", "--tuned --budget inf",
                          "--tuned --budget 10s", "--repeats 0", "--repeats 100000000", "--warmups 100000"}) {
    SCOPED_TRACE(bad);
    const CliOutput run = kiln(std::string("run add --device dummy:0 --n 64 ") + bad);
    EXPECT_NE(run.exit_code, 0);
    EXPECT_NE(run.err.find(std::string(bad).find("budget") != std::string::npos ? "--budget"
                           : std::string(bad).find("warmups") != std::string::npos ? "--warmups"
                                                                                   : "--repeats"),
              std::string::npos)
        << run.err;
  }
  EXPECT_EQ(kiln("run add --device dummy:0 --n 64 --repeats 3").exit_code, 0);
}

TEST_F(KilnRun, SummaryNamesTheKernelResultTimeAndSpeed) {
  const CliOutput run = kiln("run matmul --device dummy:0 --size 9 --dtype f16 --seed 7 --repeats 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("matmul f16 [m=9 n=9 k=9] on dummy:0 (cli-gpu)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("result:  ok, max relative error"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("(2 runs, model timer)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("GFLOP/s"), std::string::npos) << run.out;
}

// `kiln run --tuned`: the first run tunes (nothing in the database) and runs
// the winner, checked against the C++ reference; the second finds it in the
// database, tunes nothing and runs the same sequence.
TEST_F(KilnRun, TunedTunesOnceThenRunsFromTheDatabase) {
  const std::string args = "run sum-rows --device dummy:0 --m 64 --n 256 --tuned --budget 10 --json --db " +
                           (dir_ / "tuning.sqlite").string();
  const CliOutput first = kiln(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const boost::json::object tuned = boost::json::parse(first.out).as_object();
  EXPECT_TRUE(tuned.at("ok").as_bool());
  EXPECT_TRUE(tuned.at("checked").as_bool());
  EXPECT_FALSE(tuned.at("from_cache").as_bool());
  EXPECT_GT(tuned.at("tune_seconds").to_number<double>(), 0.0);
  // A GPU-shaped device: a row reduction gains from splitting rows across threads.
  EXPECT_NE(tuned.at("sequence").as_string(), "");

  const CliOutput second = kiln(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const boost::json::object cached = boost::json::parse(second.out).as_object();
  EXPECT_TRUE(cached.at("ok").as_bool());
  EXPECT_TRUE(cached.at("from_cache").as_bool());
  EXPECT_EQ(cached.at("sequence").as_string(), tuned.at("sequence").as_string());
}

TEST_F(KilnRun, TunedSummarySaysWhereTheProgramCameFrom) {
  const std::string args =
      "run add --device dummy:0 --n 4096 --tuned --budget 5 --db " + (dir_ / "tuning.sqlite").string();
  const CliOutput first = kiln(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("not in the tuning database; tuning first"), std::string::npos) << first.err;
  EXPECT_NE(first.out.find("tuned now in"), std::string::npos) << first.out;
  const CliOutput second = kiln(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("(from the tuning database)"), std::string::npos) << second.out;
  EXPECT_EQ(second.err.find("tuning first"), std::string::npos) << second.err;
}

TEST_F(KilnRun, DefaultsToTheFirstDeviceThatCanCompile) {
  const CliOutput run = kiln("run add --size 100 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(boost::json::parse(run.out).at("device").as_string(), "dummy:0");
}

TEST_F(KilnRun, ARefusedKernelExitsOneWithTheDevicesReason) {
  const CliOutput run = kiln("run exp-chain --device dummy:1 --size 10 --json");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("exp"), std::string::npos) << run.err;
  // Still one JSON object, so that a script collecting them sees the failure.
  const boost::json::object report = boost::json::parse(run.out).as_object();
  EXPECT_FALSE(report.at("ok").as_bool());
  EXPECT_EQ(report.at("device").as_string(), "dummy:1");
  EXPECT_NE(std::string(report.at("error").as_string()).find("exp"), std::string::npos);
}

TEST_F(KilnRun, BadArgumentsExitOneWithAClearMessage) {
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"run frobnicate --device dummy:0", "no standard kernel 'frobnicate' (known: add"},
      {"run add --device dummy:7", "dummy:7"},
      {"run add --device cuda:0", "cuda"},
      {"run add --dtype f8", "--dtype f8: not a dtype"},
      {"run exp-chain --dtype i32", "exp-chain does not support dtype i32"},
      {"run add --size 0", "--size"},
      {"run matmul --device dummy:1 --dtype f64 --size 3", "f64"},
      {"run matmul --device dummy:0 --size 1000000", "MiB"},  // 12 TB of buffers: refused before allocating
  };
  for (const Case& c : cases) {
    const CliOutput run = kiln(c.args);
    EXPECT_EQ(run.exit_code, 1) << c.args;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << c.args << ": " << run.err;
    EXPECT_EQ(run.err.find("internal error"), std::string::npos) << c.args << ": " << run.err;
  }
}

// `kiln run FILE.kir`: any IR file on a device, random inputs, checked against
// the interpreter; var params from --scalar.
TEST_F(KilnRun, AnIrFileRunsOnADeviceCheckedAgainstTheInterpreter) {
  const fs::path file = dir_ / "saxpy.kir";
  std::ofstream(file) << R"(# y[i] = a * x[i] + y0[i], n threads
%0 = param 0 global f32[300]
%1 = param 1 global f32[300]
%2 = param 2 global_mut f32[300]
%3 = param 3 var f32
%4 = param 4 var i64
%5 = index group 0 %4
%6 = load f32 %0[%5]
%7 = load f32 %1[%5]
%8 = mul f32 %3, %6
%9 = add f32 %8, %7
store f32 %2[%5], %9
)";
  const CliOutput run = kiln("run " + file.string() + " --device dummy:0 --scalar %3=2.5 --scalar %4=300 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const boost::json::object report = boost::json::parse(run.out).as_object();
  EXPECT_TRUE(report.at("ok").as_bool());
  EXPECT_TRUE(report.at("checked").as_bool());
  EXPECT_EQ(report.at("kernel").as_string(), file.string());
  EXPECT_GT(report.at("time_ns").to_number<std::uint64_t>(), 0u);

  const CliOutput summary = kiln("run " + file.string() + " --device dummy:0 --scalar %3=2.5 --scalar %4=300");
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("result:  ok"), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("time:"), std::string::npos) << summary.out;
}

TEST_F(KilnRun, IrFileErrorsNameTheLineTheScalarOrTheDevice) {
  const fs::path bad = dir_ / "bad.kir";
  std::ofstream(bad) << "%0 = param 0 global f32[4]\n%1 = frobnicate f32 %0\n";
  const fs::path var = dir_ / "var.kir";
  std::ofstream(var) << "%0 = param 0 global_mut f32[8]\n%1 = param 1 var i64\n%2 = index group 0 %1\n"
                        "%3 = const f32 1.5\nstore f32 %0[%2], %3\n";
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"run " + bad.string() + " --device dummy:0", bad.string() + ":2:"},
      {"run " + var.string() + " --device dummy:0", "var param %1 (slot 1, i64) needs a value: --scalar %1=VALUE"},
      {"run " + var.string() + " --device dummy:0 --scalar %1=8 --scalar %7=1", "no var param %7 (its var params: %1)"},
      {"run " + var.string() + " --device dummy:0 --scalar %1=eight", "--scalar %1: `eight` is not a number"},
      {"run " + var.string() + " --device dummy:9 --scalar %1=8", "dummy:9"},
      {"run " + var.string() + " --device dummy:0 --scalar %1=8 --dtype f16", "an IR file declares its own"},
      {"run " + (dir_ / "missing.kir").string() + " --device dummy:0", "missing.kir"},
  };
  for (const Case& c : cases) {
    const CliOutput run = kiln(c.args);
    EXPECT_EQ(run.exit_code, 1) << c.args;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << c.args << ": " << run.err;
    EXPECT_EQ(run.err.find("internal error"), std::string::npos) << c.args << ": " << run.err;
  }
}

}  // namespace
}  // namespace kiln::test
