// Plugin conformance at the ABI level, as GoogleTest: the conformance kit
// (tools/conformance, the same cases `kiln conformance` runs) on every
// plugin found in the build's plugin directory (a new plugin joins by being
// built there; a third-party one by pointing KILN_CONFORMANCE_PLUGIN_DIR at
// its folder), without libkiln.
//
// Why a gtest wrapper as well as the CTest runs of `kiln conformance`
// (tests/plugins/CMakeLists.txt): this one runs the full kernel suite
// (every dtype) in one process on every plugin, where the CLI runs use
// --quick to keep CI short; and a failure here prints every failed case with
// its reason under the test's name.
//
// A plugin whose init fails with UNAVAILABLE (no driver, no device) is
// skipped with its reason; cases the device cannot run are unsupported, not
// failed. Options for a plugin's init come from
// $KILN_CONFORMANCE_OPTIONS_<NAME> (JSON), default "{}".
#include <gtest/gtest.h>

#include <kiln/conformance/kit.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace kiln::test {
namespace {

namespace fs = std::filesystem;
namespace conf = kiln::conformance;

std::string plugin_dir() {
  const char* dir = std::getenv("KILN_CONFORMANCE_PLUGIN_DIR");
  return dir != nullptr ? dir : KILN_PLUGIN_DIR;
}

std::vector<std::string> discovered_plugins() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(plugin_dir(), ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("libkiln-", 0) == 0 && entry.path().extension() == ".so") names.push_back(file.substr(8, file.size() - 11));
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) names.push_back("none-built");
  return names;
}

std::string init_options(const std::string& name) {
  std::string env = "KILN_CONFORMANCE_OPTIONS_" + name;
  for (char& ch : env) ch = ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  const char* options = std::getenv(env.c_str());
  return options != nullptr ? options : "{}";
}

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, EveryCase) {
  if (GetParam() == "none-built") GTEST_SKIP() << "no plugin in " << plugin_dir();
  conf::Options options;
  options.options_json = init_options(GetParam());
  const conf::Report report = conf::run_conformance(plugin_dir() + "/libkiln-" + GetParam() + ".so", options);
  const conf::Totals totals = report.totals();
  for (const conf::CaseResult& c : report.cases)
    if (c.status == conf::CaseStatus::failed)
      ADD_FAILURE() << c.name << (c.device ? " on device " + std::to_string(*c.device) : std::string()) << ": "
                    << c.reason;
  RecordProperty("passed", static_cast<int>(totals.passed));
  RecordProperty("unsupported", static_cast<int>(totals.unsupported));
  if (report.outcome == conf::Outcome::unavailable || report.outcome == conf::Outcome::no_devices)
    GTEST_SKIP() << GetParam() << ": " << report.reason;
  ASSERT_EQ(report.outcome, conf::Outcome::tested) << report.reason;
  EXPECT_GT(totals.passed, 0u) << report.summary();
}

INSTANTIATE_TEST_SUITE_P(Plugins, Conformance, ::testing::ValuesIn(discovered_plugins()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace kiln::test
