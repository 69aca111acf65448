// `kiln tune` and `kiln cache` as a user runs them: separate processes on
// the dummy device, sharing one tuning database file.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tune/child_process.hpp"

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

struct CliFixture {
  fs::path dir;
  fs::path config;
  fs::path db;

  CliFixture() {
    dir = fs::path(KILN_BUILD_DIR) / "tests" / "tune-cli" / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir);
    fs::create_directories(dir);
    config = dir / "config.json";
    db = dir / "tuning.sqlite";
    std::ofstream(config) << R"({"plugins": {"c": {"enabled": false}, "cblas": {"enabled": false},
        "cuda": {"enabled": false}, "opencl": {"enabled": false}, "vulkan": {"enabled": false},
        "dummy": {"enabled": true, "options": {"simulate": [{"name": "sim"}]}}},
      "autotune": {"budget_s": 20, "repeats": 2},
      "tuning_db": "tuning.sqlite"})";
  }

  // Runs kiln with the fixture's config; returns stdout (and stderr when
  // asked), sets `status`.
  std::string kiln(std::vector<std::string> args, int& status, bool with_stderr = false) const {
    std::vector<std::string> argv = {std::string(KILN_BUILD_DIR) + "/bin/kiln", "--config", config.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    kiln::test::ChildProcess process(argv, with_stderr);
    EXPECT_TRUE(process.started());
    const std::string out = process.read_all();
    status = process.wait();
    return out;
  }
  std::string kiln_ok(std::vector<std::string> args) const {
    int status = -1;
    const std::string out = kiln(args, status);
    EXPECT_EQ(status, 0) << out;
    return out;
  }
};

}  // namespace

TEST(CliTune, JsonHasTheIssuesFieldsInOrderAndTheSecondRunHitsTheDatabase) {
  const CliFixture f;
  const std::vector<std::string> tune = {"tune", "add", "--n", "4096", "--device", "dummy:0", "--json", "--quiet"};
  const json::value first = json::parse(f.kiln_ok(tune));
  const std::vector<std::string> expected = {"kernel", "device", "baseline_ns", "best_ns", "speedup", "sequence",
                                             "candidates_measured", "from_cache", "tune_seconds"};
  std::vector<std::string> keys;
  for (const auto& item : first.as_object()) keys.emplace_back(item.key());
  ASSERT_GE(keys.size(), expected.size());
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + static_cast<long>(expected.size())), expected);

  const json::object& o = first.as_object();
  EXPECT_EQ(o.at("kernel").as_string(), "add");
  EXPECT_EQ(o.at("device").as_string(), "dummy:0");
  EXPECT_GT(o.at("baseline_ns").to_number<std::uint64_t>(), 0u);
  EXPECT_GT(o.at("best_ns").to_number<std::uint64_t>(), 0u);
  EXPECT_LE(o.at("best_ns").to_number<std::uint64_t>(), o.at("baseline_ns").to_number<std::uint64_t>());
  EXPECT_GE(o.at("speedup").to_number<double>(), 1.0);
  EXPECT_TRUE(o.at("sequence").is_string());
  EXPECT_GE(o.at("candidates_measured").to_number<std::uint64_t>(), 1u);
  EXPECT_FALSE(o.at("from_cache").as_bool());
  EXPECT_GT(o.at("tune_seconds").to_number<double>(), 0);
  // Where the time went: the phases add up to no more than the tuning.
  const json::object& seconds = o.at("seconds").as_object();
  double phases = 0;
  for (const char* phase : {"setup", "search", "compile", "measure"}) {
    EXPECT_GE(seconds.at(phase).to_number<double>(), 0) << phase;
    phases += seconds.at(phase).to_number<double>();
  }
  EXPECT_GT(seconds.at("setup").to_number<double>(), 0) << "opening the runtime is charged to the budget";
  // Set-up in parts: each non-negative, together set-up (up to rounding).
  const json::object& split = seconds.at("setup_split").as_object();
  double parts = 0;
  for (const char* part : {"open", "inputs", "reference", "untuned_compile"}) {
    EXPECT_GE(split.at(part).to_number<double>(), 0) << part;
    parts += split.at(part).to_number<double>();
  }
  EXPECT_GT(split.at("open").to_number<double>(), 0) << "kiln tune charges opening the runtime";
  EXPECT_NEAR(parts, seconds.at("setup").to_number<double>(), 1e-6);
  EXPECT_LE(phases, o.at("tune_seconds").to_number<double>() + 1e-9);
  EXPECT_TRUE(fs::exists(f.db)) << "the config's tuning_db";

  const json::value second = json::parse(f.kiln_ok(tune));
  EXPECT_TRUE(second.as_object().at("from_cache").as_bool());
  EXPECT_EQ(second.as_object().at("candidates_measured").to_number<std::uint64_t>(), 0u) << "launches nothing";
  EXPECT_EQ(second.as_object().at("sequence"), o.at("sequence"));
  EXPECT_EQ(second.as_object().at("best_ns"), o.at("best_ns"));
}

TEST(CliTune, TextOutputNamesTheSequenceTimesAndSpeedup) {
  const CliFixture f;
  const std::string out = f.kiln_ok({"tune", "exp-chain", "--size", "2048", "--device", "dummy:0", "--quiet"});
  for (const char* line : {"kernel    exp-chain", "device    dummy:0 (sim)", "sequence  ", "time      ", "untuned   ",
                           "speed-up  ", "candidates measured in"})
    EXPECT_NE(out.find(line), std::string::npos) << line << "\n" << out;
}

TEST(CliTune, ErrorsAreClear) {
  const CliFixture f;
  int status = 0;
  std::string out = f.kiln({"tune", "no-such-kernel", "--device", "dummy:0"}, status, true);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("'no-such-kernel' is neither a standard kernel (add, "), std::string::npos) << out;
  out = f.kiln({"tune", "add", "--device", "dummy:7"}, status, true);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("dummy:7"), std::string::npos) << out;
  const fs::path bad = f.dir / "bad.kir";
  std::ofstream(bad) << "%0 = param 0 global f32[4]\n%1 = frobnicate f32 %0\n";
  out = f.kiln({"tune", bad.string(), "--device", "dummy:0"}, status, true);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find(bad.string() + ":2:6: expected an op name"), std::string::npos) << out;
}

// Issue 17: `kiln tune FILE` compiled and ran a store far outside its
// buffer (and reported a 2339x speed-up). Now the untuned kernel is refused
// by the bounds analysis before any plugin sees it, naming the op, the range
// and the buffer; buffers past the host's memory are refused before they
// are allocated.
TEST(CliTune, OutOfRangeKernelsAndHugeBuffersAreRefused) {
  const CliFixture f;
  int status = 0;
  const fs::path oob = f.dir / "oob.kir";
  std::ofstream(oob) << "%0 = param 0 global_mut f32[1000]\n%1 = const i64 1000\n%2 = index group 0 %1\n"
                        "%3 = const i64 0\n%4 = cmpgt bool %2, %3\nif %4\n  %6 = const i64 10000000\n"
                        "  %7 = add i64 %2, %6\n  %8 = const f32 1\n  store f32 %0[%7], %8\nendif\n";
  std::string out = f.kiln({"tune", oob.string(), "--device", "dummy:0"}, status, true);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("compile: op 9: bounds: op 9 (`store f32 %0[%8], %1`): it touches elements [10000001, 10000999], "
                     "always outside its memory: param slot 0 (%0) has 1000 f32 elements"),
            std::string::npos)
      << out;
  const fs::path huge = f.dir / "huge.kir";
  std::ofstream(huge) << "%0 = param 0 global_mut f32[70368744177664]\n%1 = const i64 0\n%2 = const f32 1\n"
                         "store f32 %0[%1], %2\n";
  out = f.kiln({"tune", huge.string(), "--device", "dummy:0"}, status, true);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find("its buffers take 268435456 MiB"), std::string::npos) << out;
}

TEST(CliCache, ListShowExportImportClear) {
  const CliFixture f;
  f.kiln_ok({"tune", "add", "--n", "1024", "--device", "dummy:0", "--quiet"});
  f.kiln_ok({"tune", "exp-chain", "--n", "1024", "--device", "dummy:0", "--quiet"});

  const std::string list = f.kiln_ok({"cache", "list"});
  EXPECT_NE(list.find("(2 entries)"), std::string::npos) << list;
  EXPECT_NE(list.find("add f32"), std::string::npos) << list;
  EXPECT_NE(list.find("exp-chain f32"), std::string::npos) << list;

  const std::string show = f.kiln_ok({"cache", "show", "1"});
  EXPECT_NE(show.find("fingerprint  plugin=dummy;device=sim;"), std::string::npos) << show;
  EXPECT_NE(show.find("<- chosen"), std::string::npos) << show;
  EXPECT_NE(show.find("measured"), std::string::npos) << show;

  const fs::path exported = f.dir / "export.json";
  f.kiln_ok({"cache", "export", exported.string()});
  EXPECT_NE(f.kiln_ok({"cache", "clear", "--kernel", "add"}).find("removed 1 entries"), std::string::npos);
  EXPECT_NE(f.kiln_ok({"cache", "clear", "--all"}).find("removed 1 entries"), std::string::npos);
  EXPECT_NE(f.kiln_ok({"cache", "list"}).find("(0 entries)"), std::string::npos);
  EXPECT_NE(f.kiln_ok({"cache", "import", exported.string()}).find("imported 2 entries"), std::string::npos);
  const json::value listed = json::parse(f.kiln_ok({"cache", "list", "--json"}));
  EXPECT_EQ(listed.as_object().at("entries").as_array().size(), 2u);

  // The imported entries serve `kiln tune` as if tuned here.
  const json::value hit = json::parse(f.kiln_ok({"tune", "add", "--n", "1024", "--device", "dummy:0", "--json"}));
  EXPECT_TRUE(hit.as_object().at("from_cache").as_bool());

  int status = 0;
  f.kiln({"cache", "show", "99"}, status);
  EXPECT_EQ(status, 1);
  f.kiln({"cache", "clear"}, status);
  EXPECT_EQ(status, 1) << "clear needs a filter or --all";
}

TEST(CliTune, SeveralKernelsAndAFolderShareOneBudgetAndEndWithATable) {
  const CliFixture f;
  const fs::path folder = f.dir / "model";
  fs::create_directories(folder);
  for (const char* n : {"512", "4096"})
    std::ofstream(folder / ("scale-" + std::string(n) + ".kir"))
        << "%0 = param 0 global f32[" << n << "]\n%1 = param 1 global_mut f32[" << n << "]\n%2 = const i64 " << n
        << "\n%3 = index group 0 %2\n%4 = load f32 %0[%3]\n%5 = const f32 3\n%6 = mul f32 %4, %5\nstore f32 %1[%3], %6\n";
  std::ofstream(folder / "notes.txt") << "not a kernel\n";

  const json::value many = json::parse(f.kiln_ok(
      {"tune", folder.string(), "add", "--n", "2048", "--device", "dummy:0", "--budget", "3", "--json", "--quiet"}));
  const json::object& o = many.as_object();
  EXPECT_EQ(o.at("budget_s").as_double(), 3.0);
  const json::array& kernels = o.at("kernels").as_array();
  ASSERT_EQ(kernels.size(), 3u);  // the folder's two .kir files in name order, then add
  EXPECT_EQ(kernels[0].at("kernel").as_string(), (folder / "scale-4096.kir").string());
  EXPECT_EQ(kernels[1].at("kernel").as_string(), (folder / "scale-512.kir").string());
  EXPECT_EQ(kernels[2].at("kernel").as_string(), "add f32");
  for (const auto& k : kernels) {
    EXPECT_FALSE(k.as_object().contains("error")) << json::serialize(k);
    EXPECT_GT(k.at("best_ns").to_number<double>(), 0) << json::serialize(k);
    EXPECT_FALSE(k.at("from_cache").as_bool());
  }

  // Again: all from the database, and the table says so.
  const std::string table = f.kiln_ok({"tune", folder.string(), "add", "--n", "2048", "--device", "dummy:0", "--quiet"});
  EXPECT_NE(table.find("source"), std::string::npos) << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 5) << table;  // header, 3 rows, total
  EXPECT_NE(table.find("3 kernels on dummy:0"), std::string::npos) << table;
  std::size_t from_db = 0;
  for (std::size_t at = table.find("database"); at != std::string::npos; at = table.find("database", at + 1)) ++from_db;
  EXPECT_EQ(from_db, 3u) << table;

  int status = 0;
  const fs::path empty = f.dir / "empty";
  fs::create_directories(empty);
  const std::string err = f.kiln({"tune", empty.string(), "--device", "dummy:0"}, status, true);
  EXPECT_NE(status, 0);
  EXPECT_NE(err.find("is a folder without .kir files"), std::string::npos) << err;
}
