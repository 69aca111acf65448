// The compile probe (a plugin entry's "isolate_compile", docs/config.md): a
// plugin whose compile crashes does so in a child process; the host reports
// it, with the signal and the plugin's last words, and quarantines the
// plugin for the process, refusing its later compiles. Kernels that compile
// cleanly run as without the probe.
#include "loader/scratch.hpp"

#include "kiln/ir/text.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <span>
#include <vector>

namespace {

using kiln::test::load_plugins;
using kiln::test::plugin_entry;
using kiln::test::ScratchDir;
using kiln::test::test_plugin;
using ::testing::HasSubstr;

constexpr int kN = 16;

// c[i] = a[i] <op> b[i] over kN floats.
kiln::ir::Kernel elementwise(const std::string& op) {
  const std::string n = std::to_string(kN);
  return kiln::ir::parse("%0 = param 0 global f32[" + n + "]\n%1 = param 1 global f32[" + n +
                         "]\n%2 = param 2 global_mut f32[" + n + "]\n%3 = const i64 " + n +
                         "\n%4 = index group 0 %3\n%5 = load f32 %0[%4]\n%6 = load f32 %1[%4]\n%7 = " + op +
                         " f32 %5, %6\nstore f32 %2[%4], %7\n")
      .value();
}

// Compiles and runs c = a + b on `device`; the problems seen, if any.
std::string run_add(const kiln::Device& device) {
  kiln::Result<kiln::Program> program = device.compile(elementwise("add"), {.mode = kiln::CompileMode::Frozen});
  if (!program) return program.error().to_string();
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  std::vector<float> a(kN), b(kN), c(kN, 0.0f);
  for (int i = 0; i < kN; ++i) a[i] = value(rng), b[i] = value(rng);
  kiln::Buffer ba = device.allocate(4 * kN).value(), bb = device.allocate(4 * kN).value(),
               bc = device.allocate(4 * kN).value();
  if (!ba.write(std::as_bytes(std::span(a))).ok() || !bb.write(std::as_bytes(std::span(b))).ok()) return "write";
  const kiln::LaunchArg args[] = {kiln::LaunchArg::buffer(ba), kiln::LaunchArg::buffer(bb), kiln::LaunchArg::buffer(bc)};
  kiln::Result<kiln::Event> launched = device.launch(*program, args);
  if (!launched) return launched.error().to_string();
  if (!launched->wait().ok() || !bc.read(std::as_writable_bytes(std::span(c))).ok()) return "wait/read";
  for (int i = 0; i < kN; ++i)
    if (c[i] != a[i] + b[i]) return "c[" + std::to_string(i) + "] = " + std::to_string(c[i]);
  return "";
}

TEST(CompileProbe, ACrashInCompileIsReportedAndQuarantinesThePlugin) {
  ScratchDir dir;
  const kiln::Runtime runtime =
      load_plugins(dir, plugin_entry("fragile", test_plugin("compile-segv"), R"("isolate_compile": true)"));
  const kiln::Device device = runtime.device("fragile:0").value();
  EXPECT_TRUE(device.isolates_compile());
  // Before the crash: compiled in the probe, then here, and right.
  EXPECT_EQ(run_add(device), "");

  kiln::Result<kiln::Program> crashed = device.compile(elementwise("sub"), {.mode = kiln::CompileMode::Frozen});
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.error().code, kiln::ErrorCode::Internal);
  EXPECT_EQ(crashed.error().plugin, "fragile");
  EXPECT_THAT(crashed.error().message, HasSubstr("crashed in compile: killed by signal 11 (SIGSEGV"));
  EXPECT_THAT(crashed.error().message, HasSubstr("compile probe (isolate_compile)"));
  EXPECT_THAT(crashed.error().message, HasSubstr("\"compile-segv plugin: about to dereference NULL\""));
  EXPECT_THAT(crashed.error().message, HasSubstr("quarantined for this process"));

  // After it: every compile on the plugin is refused, from any Runtime, with the crash named.
  kiln::Result<kiln::Program> refused = device.compile(elementwise("add"), {.mode = kiln::CompileMode::Frozen});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, kiln::ErrorCode::Unavailable);
  EXPECT_THAT(refused.error().message, HasSubstr("is quarantined for this process: its compile crashed in compile"));
  const kiln::Runtime other = load_plugins(dir, plugin_entry("fragile", test_plugin("compile-segv")));
  EXPECT_THAT(run_add(other.device("fragile:0").value()), HasSubstr("quarantined"));
}

TEST(CompileProbe, IsOffByDefaultAndAGoodPluginRunsTheSameWithIt) {
  ScratchDir dir;
  const kiln::Runtime plain = load_plugins(dir, plugin_entry("host", test_plugin("host")));
  EXPECT_FALSE(plain.device("host:0").value().isolates_compile());
  const kiln::Runtime isolated =
      load_plugins(dir, plugin_entry("host", test_plugin("host"), R"("isolate_compile": true)"));
  const kiln::Device device = isolated.device("host:0").value();
  EXPECT_TRUE(device.isolates_compile());
  EXPECT_EQ(run_add(device), "");
  // A kernel the plugin refuses cleanly is refused with the plugin's own words, not a probe's.
  kiln::Result<kiln::Program> refused = device.compile(elementwise("max"), {.mode = kiln::CompileMode::Frozen});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, kiln::ErrorCode::Unsupported) << refused.error().to_string();
}

TEST(CompileProbe, TheConfigKeyIsABoolean) {
  ScratchDir dir;
  kiln::Result<kiln::Runtime> runtime = kiln::test::runtime_from(
      dir, kiln::test::plugins_only(plugin_entry("host", test_plugin("host"), R"("isolate_compile": "yes")")));
  ASSERT_FALSE(runtime.ok());
  EXPECT_THAT(runtime.error().message, HasSubstr("isolate_compile"));
  EXPECT_THAT(runtime.error().message, HasSubstr("true or false"));
}

}  // namespace
