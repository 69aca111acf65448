// The version policy of plugin.h, from compiled fixtures (tests/loader/
// CMakeLists.txt): a plugin built against the frozen 1.0 header loads,
// lists and runs on this 1.1 host; a plugin built for 1.1 is refused by a
// host that speaks only 1.0, with both versions named.
#include "loader/scratch.hpp"
#include "runtime/loaded_library.hpp"
#include "support/wire_builder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

namespace {

using kiln::test::record;
using kiln::test::ScratchDir;
using kiln::test::test_plugin;
using kiln::test::WireBuilder;
using ::testing::HasSubstr;

constexpr std::int64_t kLocal = 8;
constexpr std::int64_t kGroups = 5;
constexpr std::size_t kN = kGroups * kLocal;

// out[i] = a[i] + b[i]: what the test plugins' interpreter runs.
kiln::ir::Kernel add_kernel() {
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, kN);
  auto b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, kN);
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, kN);
  auto width = w.const_i64(kLocal);
  auto g = w.group_index(0, w.const_i64(kGroups));
  auto l = w.local_index(0, width);
  auto i = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, width), l);
  w.store(KILN_DTYPE_F32, out, i,
          w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, a, i), w.load(KILN_DTYPE_F32, b, i)));
  return kiln::ir::Kernel::from_wire(w.ops);
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::span<const std::byte> bytes(const std::vector<float>& v) { return std::as_bytes(std::span(v)); }

TEST(AbiVersions, APluginBuiltForAbi10LoadsListsAndRunsOnThisHost) {
  ScratchDir dir;
  kiln::Result<kiln::Runtime> made = kiln::test::runtime_from(
      dir, kiln::test::plugins_only("\"legacy\": {\"library\": \"" + test_plugin("legacy") + "\"}"));
  ASSERT_TRUE(made.ok()) << made.error().to_string();
  kiln::Runtime runtime = std::move(made).value();
  const kiln::PluginRecord& legacy = record(runtime, "legacy");
  ASSERT_EQ(legacy.status, kiln::PluginStatus::Loaded) << legacy.reason;
  ASSERT_EQ(legacy.devices.size(), 1u);
  const kiln::DeviceInfo& info = legacy.devices[0];
  EXPECT_EQ(info.name, "kiln test device (ABI 1.0)");
  // A 1.0 plugin states capabilities per dtype only; the host derives the
  // 1.1 per-op arrays from them, and no op kind appended after 1.0.
  EXPECT_TRUE(info.supports_binary(KILN_BINARY_ADD, KILN_DTYPE_F32));
  EXPECT_TRUE(info.supports_op_kind(KILN_OP_LOAD, KILN_DTYPE_F32));
  EXPECT_FALSE(info.supports_op_kind(KILN_OP_KIND_COUNT, KILN_DTYPE_F32));
  EXPECT_EQ(info.features, (std::array<std::uint64_t, KILN_FEATURE_WORDS>{}));

  kiln::Result<kiln::Device> opened = runtime.device("legacy:0");
  ASSERT_TRUE(opened.ok()) << opened.error().to_string();
  const kiln::Device device = std::move(opened).value();
  const std::vector<float> a = random_floats(kN, 1), b = random_floats(kN, 2);
  kiln::Buffer ba = device.allocate(kN * 4).value(), bb = device.allocate(kN * 4).value(),
               bout = device.allocate(kN * 4).value();
  ASSERT_TRUE(ba.write(bytes(a)).ok());
  ASSERT_TRUE(bb.write(bytes(b)).ok());
  kiln::Result<kiln::Program> program = device.compile(add_kernel());
  ASSERT_TRUE(program.ok()) << program.error().to_string();
  const kiln::LaunchArg args[] = {kiln::LaunchArg::buffer(ba), kiln::LaunchArg::buffer(bb),
                                  kiln::LaunchArg::buffer(bout)};
  ASSERT_TRUE(device.launch(*program, args).value().wait().ok());
  std::vector<float> out(kN);
  ASSERT_TRUE(bout.read(std::as_writable_bytes(std::span(out))).ok());
  for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(out[i], a[i] + b[i]) << "element " << i;

  // A timed launch reaches a 1.0 plugin through the embedded 1.0 launch.
  std::fill(out.begin(), out.end(), 0.0f);
  ASSERT_TRUE(bout.write(bytes(out)).ok());
  kiln::Result<kiln::Timing> timed = device.timed_launch(*program, args, {.warmups = 0, .repeats = 2});
  ASSERT_TRUE(timed.ok()) << timed.error().to_string();
  EXPECT_EQ(timed->runs, 2u);
  ASSERT_TRUE(bout.read(std::as_writable_bytes(std::span(out))).ok());
  for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(out[i], a[i] + b[i]) << "element " << i;
}

TEST(AbiVersions, APluginBuiltFor11IsRefusedByAHostOf10NamingBothVersions) {
  kiln::Result<kiln::detail::LoadedLibrary*> loaded = kiln::detail::load_library(test_plugin("newer"), 0);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.error().message, HasSubstr("the plugin was built for ABI 1.1, newer than this host's ABI 1.0"));
}

TEST(AbiVersions, ThisHostLoadsAPluginOfItsOwnMinor) {
  kiln::Result<kiln::detail::LoadedLibrary*> loaded = kiln::detail::load_library(test_plugin("newer"));
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  EXPECT_EQ((*loaded)->api().abi_minor, KILN_ABI_MINOR);
}

}  // namespace
