// `kiln devices` end to end: the real executable, its exit codes, its JSON.
#include "loader/scratch.hpp"
#include "support/run_cli.hpp"

#include <boost/json.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using kiln::test::plugins_only;
using kiln::test::ScratchDir;
using kiln::test::test_plugin;
using ::testing::HasSubstr;

using Output = kiln::test::CliOutput;

Output run_kiln(const ScratchDir& dir, const std::string& args) { return kiln::test::run_cli(dir.path(), args); }

TEST(CliDevices, JsonListsEveryPluginWithStatusReasonAndDevices) {
  ScratchDir dir;
  const std::string entries = R"("host": {"library": ")" + test_plugin("host") +
                              R"("}, "frob": {"library": ")" + test_plugin("init-fails") + R"("})";
  const auto config = dir.write("kiln.json", plugins_only(entries));
  const Output output = run_kiln(dir, "devices --json --config " + config.string());
  ASSERT_EQ(output.exit_code, 0) << output.err;
  const boost::json::object report = boost::json::parse(output.out).as_object();
  EXPECT_EQ(report.at("config").as_string(), config.string());
  EXPECT_EQ(report.at("kiln_version").as_string(), KILN_PROJECT_VERSION);
  const boost::json::array& plugins = report.at("plugins").as_array();
  ASSERT_EQ(plugins.size(), 8u);  // six built-in (disabled here) + two
  std::map<std::string, boost::json::object> by_name;
  for (const auto& p : plugins) by_name[std::string(p.at("name").as_string())] = p.as_object();

  const boost::json::object& host = by_name.at("host");
  EXPECT_EQ(host.at("status").as_string(), "loaded");
  EXPECT_EQ(host.at("library").as_string(), test_plugin("host"));
  EXPECT_EQ(host.at("version").as_string(), "1.0.0");
  EXPECT_EQ(host.at("reason").as_string(), "");
  const boost::json::object& device = host.at("devices").as_array().at(0).as_object();
  EXPECT_EQ(device.at("id").as_string(), "host:0");
  EXPECT_EQ(device.at("name").as_string(), "kiln test device (host)");
  EXPECT_EQ(device.at("kind").as_string(), "virtual");
  EXPECT_EQ(device.at("memory_bytes").to_number<std::uint64_t>(), 1ull << 30);
  EXPECT_EQ(device.at("compute_units").to_number<int>(), 1);
  EXPECT_EQ(device.at("warp_size").to_number<int>(), 1);
  EXPECT_EQ(device.at("max_local_threads").to_number<int>(), 64);
  EXPECT_EQ(boost::json::serialize(device.at("vector_widths")), "[1,4]");

  const boost::json::object& frob = by_name.at("frob");
  EXPECT_EQ(frob.at("status").as_string(), "skipped");
  EXPECT_EQ(frob.at("reason").as_string(), "init failed: unavailable: the test frobnicator is not connected");
  EXPECT_EQ(by_name.at("cuda").at("status").as_string(), "disabled");
}

TEST(CliDevices, PlainTableShowsDevicesAndReasons) {
  ScratchDir dir;
  const std::string entries = R"("host": {"library": ")" + test_plugin("host") +
                              R"("}, "frob": {"library": ")" + test_plugin("init-fails") + R"("})";
  const auto config = dir.write("kiln.json", plugins_only(entries));
  const Output output = run_kiln(dir, "--config " + config.string() + " devices");
  ASSERT_EQ(output.exit_code, 0) << output.err;
  EXPECT_THAT(output.out, HasSubstr("host:0  virtual"));
  EXPECT_THAT(output.out, HasSubstr("kiln test device (host)"));
  EXPECT_THAT(output.out, HasSubstr("reason: init failed: unavailable: the test frobnicator is not connected"));
}

TEST(CliDevices, MalformedConfigIsAnErrorWithFileLineColumn) {
  ScratchDir dir;
  const auto config = dir.write("bad.json", "{\n  \"plugins\": {\n    \"c\": {\"enabled\": tru}\n  }\n}\n");
  const Output output = run_kiln(dir, "devices --config " + config.string());
  EXPECT_EQ(output.exit_code, 1);
  EXPECT_TRUE(output.out.empty());
  EXPECT_THAT(output.err, HasSubstr("kiln: error: " + config.string() + ":3:"));
  EXPECT_THAT(output.err, HasSubstr("malformed JSON"));
}

TEST(CliDevices, MissingConfigFileIsAnError) {
  ScratchDir dir;
  const Output output = run_kiln(dir, "devices --json --config " + (dir / "absent.json").string());
  EXPECT_EQ(output.exit_code, 1);
  EXPECT_THAT(output.err, HasSubstr("absent.json (given explicitly) does not exist"));
}

TEST(CliDevices, RequiredPluginFailureExitsWithOne) {
  ScratchDir dir;
  const auto config = dir.write(
      "kiln.json", plugins_only(R"("frob": {"required": true, "library": ")" + test_plugin("init-fails") + R"("})"));
  const Output output = run_kiln(dir, "devices --config " + config.string());
  EXPECT_EQ(output.exit_code, 1);
  EXPECT_THAT(output.err, HasSubstr("required plugin 'frob'"));
  EXPECT_THAT(output.err, HasSubstr("the test frobnicator is not connected"));
}

TEST(CliDevices, ShutdownRunsBeforeEachPluginsExitTeardown) {
  // Two plugins, the second loaded after the first was initialised: each
  // must be shut down before its own exit-time teardown runs.
  ScratchDir dir;
  const std::string report = (dir / "report.txt").string();
  const auto config = dir.write(
      "kiln.json", plugins_only(R"("host": {"library": ")" + test_plugin("host") + R"("}, "late": {"library": ")" +
                                test_plugin("exit-order") + R"(", "options": {"report": ")" + report + R"("}})"));
  const Output output = run_kiln(dir, "devices --config " + config.string());
  ASSERT_EQ(output.exit_code, 0) << output.err;
  std::ifstream in(report);
  const std::string verdict((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(verdict, "ok");
}

TEST(CliDevices, UnknownOptionIsAUsageError) {
  ScratchDir dir;
  const Output output = run_kiln(dir, "devices --jsn");
  EXPECT_EQ(output.exit_code, 1);
  EXPECT_THAT(output.err, HasSubstr("--jsn"));
}

// `kiln --version` is CMake's project version; `kiln help SUBCOMMAND` prints
// exactly what `kiln SUBCOMMAND --help` prints, and an unknown one is an error.
TEST(CliBasics, VersionAndHelp) {
  ScratchDir dir;
  const Output version = run_kiln(dir, "--version");
  ASSERT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out, std::string("kiln ") + KILN_PROJECT_VERSION + "\n");
  for (const char* command : {"run", "tune", "devices"}) {
    const Output help = run_kiln(dir, std::string("help ") + command);
    const Output flag = run_kiln(dir, std::string(command) + " --help");
    ASSERT_EQ(help.exit_code, 0) << help.err;
    EXPECT_EQ(help.out, flag.out) << command;
    EXPECT_THAT(help.out, HasSubstr("Usage:"));
  }
  const Output unknown = run_kiln(dir, "help frobnicate");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("help: no subcommand 'frobnicate'"));
}

}  // namespace
