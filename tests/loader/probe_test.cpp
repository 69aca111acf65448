// The plugin probe: a plugin that crashes, hangs or exits while it is
// loaded, queried or initialised is skipped with the signal, the timeout or
// the exit status, and the good plugins of the same config still load
// (core/runtime/plugin_probe.cpp, docs/config.md "Plugin probe").
#include "loader/scratch.hpp"
#include "support/run_cli.hpp"

#include <boost/json.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>

namespace {

using kiln::test::load_plugins;
using kiln::test::plugin_entry;
using kiln::test::plugins_only;
using kiln::test::record;
using kiln::test::ScratchDir;
using kiln::test::skipped_reason;
using kiln::test::test_plugin;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A copy of a real plugin cut after 8 KiB: its loadable segments (about
// 16 KiB, before the debug sections) end past the end of the file, so
// dlopen touches pages that do not exist.
std::filesystem::path truncated_copy(const ScratchDir& dir) {
  const std::filesystem::path copy = dir / "libkiln-truncated.so";
  std::filesystem::copy_file(test_plugin("host"), copy);
  std::filesystem::resize_file(copy, 8192);
  return copy;
}

TEST(PluginProbe, SegfaultInQueryIsSkippedWithTheSignal) {
  ScratchDir dir;
  const std::string reason = skipped_reason(load_plugins(dir, plugin_entry("bad", test_plugin("query-segv"))), "bad");
  EXPECT_THAT(reason, StartsWith("crashed in kiln_plugin_query: killed by signal 11 (SIGSEGV"));
  EXPECT_THAT(reason, HasSubstr("plugin probe"));
}

TEST(PluginProbe, SegfaultInInitIsSkippedWithTheSignalAndItsLastWords) {
  ScratchDir dir;
  const std::string reason = skipped_reason(load_plugins(dir, plugin_entry("bad", test_plugin("init-segv"))), "bad");
  EXPECT_THAT(reason, StartsWith("crashed in init: killed by signal 11 (SIGSEGV: Segmentation fault)"));
  EXPECT_THAT(reason, HasSubstr("its last line on stderr: \"misbehaving plugin: about to dereference NULL\""));
}

TEST(PluginProbe, HangInInitIsSkippedAfterTheTimeout) {
  ScratchDir dir;
  ScopedEnv timeout("KILN_PLUGIN_PROBE_TIMEOUT", "0.5");
  const auto begin = std::chrono::steady_clock::now();
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("bad", test_plugin("init-hang")));
  const kiln::PluginRecord& bad = record(runtime, "bad");
  EXPECT_EQ(bad.status, kiln::PluginStatus::Skipped);
  EXPECT_THAT(bad.reason, StartsWith("hung in init: no answer within 0.5 s"));
  EXPECT_THAT(bad.reason, HasSubstr("KILN_PLUGIN_PROBE_TIMEOUT"));
  // The verdict is kept for this process: a second Runtime does not wait again.
  const auto second_begin = std::chrono::steady_clock::now();
  const kiln::Runtime again = load_plugins(dir, plugin_entry("bad", test_plugin("init-hang")));
  EXPECT_EQ(record(again, "bad").reason, bad.reason);
  EXPECT_LT(std::chrono::steady_clock::now() - second_begin, std::chrono::steady_clock::now() - begin);
  EXPECT_LT(std::chrono::steady_clock::now() - second_begin, std::chrono::milliseconds(400));
}

TEST(PluginProbe, ExitInInitIsSkippedWithTheStatus) {
  ScratchDir dir;
  const std::string reason = skipped_reason(load_plugins(dir, plugin_entry("bad", test_plugin("init-exit"))), "bad");
  EXPECT_THAT(reason, StartsWith("exited the process with status 3 in init"));
}

TEST(PluginProbe, TruncatedLibraryIsSkippedWithTheSignal) {
  ScratchDir dir;
  const std::string reason = skipped_reason(load_plugins(dir, plugin_entry("cut", truncated_copy(dir).string())), "cut");
  EXPECT_THAT(reason, StartsWith("crashed while the library was loading (dlopen"));
  EXPECT_THAT(reason, HasSubstr("(SIGBUS"));
}

TEST(PluginProbe, GoodPluginsInTheSameConfigStillLoad) {
  ScratchDir dir;
  ScopedEnv timeout("KILN_PLUGIN_PROBE_TIMEOUT", "0.5");
  const kiln::Runtime runtime =
      load_plugins(dir, plugin_entry("qsegv", test_plugin("query-segv")) + ", " + plugin_entry("isegv", test_plugin("init-segv")) + ", " +
                    plugin_entry("hang", test_plugin("init-hang")) + ", " + plugin_entry("exit", test_plugin("init-exit")) + ", " +
                    plugin_entry("cut", truncated_copy(dir).string()) + ", " + plugin_entry("host", test_plugin("host")) + ", " +
                    plugin_entry("frob", test_plugin("init-fails")));
  for (const char* name : {"qsegv", "isegv", "hang", "exit", "cut", "frob"})
    EXPECT_EQ(record(runtime, name).status, kiln::PluginStatus::Skipped) << name;
  // A plugin whose init fails cleanly is reported as before, from the in-process load.
  EXPECT_EQ(record(runtime, "frob").reason, "init failed: unavailable: the test frobnicator is not connected");
  const kiln::PluginRecord& host = record(runtime, "host");
  ASSERT_EQ(host.status, kiln::PluginStatus::Loaded) << host.reason;
  kiln::Result<kiln::Device> device = runtime.device("host:0");
  ASSERT_TRUE(device.ok()) << device.error().to_string();
  EXPECT_TRUE(device->allocate(64).ok());
}

TEST(PluginProbe, CliListsTheCrashingPluginsAndRunsOnAGoodDevice) {
  // The case: a bad plugin merely listed used to kill every command.
  ScratchDir dir;
  const auto config = dir.write("kiln.json", plugins_only(plugin_entry("isegv", test_plugin("init-segv")) + ", " +
                                                          plugin_entry("exit", test_plugin("init-exit")) + ", " +
                                                          plugin_entry("host", test_plugin("host"))));
  const kiln::test::CliOutput devices = kiln::test::run_cli(dir.path(), "devices --json --config " + config.string());
  ASSERT_EQ(devices.exit_code, 0) << devices.err;
  const boost::json::object report = boost::json::parse(devices.out).as_object();
  std::map<std::string, boost::json::object> by_name;
  for (const auto& p : report.at("plugins").as_array()) by_name[std::string(p.at("name").as_string())] = p.as_object();
  EXPECT_THAT(std::string(by_name.at("isegv").at("reason").as_string()), StartsWith("crashed in init"));
  EXPECT_THAT(std::string(by_name.at("exit").at("reason").as_string()), StartsWith("exited the process with status 3"));
  EXPECT_EQ(by_name.at("host").at("status").as_string(), "loaded");
}

TEST(PluginProbe, CanBeTurnedOffAndGoodPluginsLoadTheSame) {
  ScratchDir dir;
  ScopedEnv off("KILN_PLUGIN_PROBE", "0");
  // A private copy: the probe is skipped for libraries already in the process.
  const std::filesystem::path copy = dir / "libkiln-host-unprobed.so";
  std::filesystem::copy_file(test_plugin("host"), copy);
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("host", copy.string()));
  EXPECT_EQ(record(runtime, "host").status, kiln::PluginStatus::Loaded) << record(runtime, "host").reason;
}

TEST(PluginProbe, UnreadableSettingsAreWarningsNotSilence) {
  ScratchDir dir;
  ScopedEnv timeout("KILN_PLUGIN_PROBE_TIMEOUT", "soon");
  const kiln::Runtime runtime = load_plugins(dir, plugin_entry("host", test_plugin("host")));
  EXPECT_THAT(runtime.warnings(), ::testing::Contains(HasSubstr("KILN_PLUGIN_PROBE_TIMEOUT=\"soon\" is not a number")));
}

}  // namespace
