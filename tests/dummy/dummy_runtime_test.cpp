// The dummy through the runtime (libkiln's loader), as host applications and
// `kiln run --device dummy:0` use it: enabled by the config, devices from its
// options, launches and modelled timed launches.
//
// The runtime initialises a plugin once per process (later options are
// ignored with a note), so every test here uses the same options, and this
// file is its own executable: the ABI tests' init/shutdown cycles would pull
// the plugin from under the runtime.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kiln/kernels/run.hpp"
#include "kiln/runtime.hpp"
#include "support/wire_builder.hpp"

using namespace kiln;

namespace {

constexpr const char* kEnabled =
    R"({"enabled": true, "options": {"simulate": [{"name": "sim", "warp_size": 16}, {"unsupported_ops": {"f32": ["sin"]}}]}})";

Runtime runtime_with(const std::string& dummy_entry) {
  const std::string text = R"({"plugins": {"c": {"enabled": false}, "cblas": {"enabled": false},
      "cuda": {"enabled": false}, "opencl": {"enabled": false}, "vulkan": {"enabled": false},
      "dummy": )" + dummy_entry + "}}";
  Result<Config> config = parse_config(text, "test-config.json");
  EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().to_string());
  Result<Runtime> runtime = Runtime::create(std::move(config).value());
  EXPECT_TRUE(runtime.ok()) << (runtime.ok() ? "" : runtime.error().to_string());
  return std::move(runtime).value();
}

template <class T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}

}  // namespace

TEST(DummyRuntime, DisabledByDefaultAndLoadedWhenTheConfigEnablesIt) {
  const Runtime off = runtime_with(R"({})");
  EXPECT_EQ(off.plugin("dummy")->status, PluginStatus::Disabled);
  EXPECT_FALSE(off.device("dummy:0").ok());

  const Runtime on = runtime_with(kEnabled);
  EXPECT_EQ(on.plugin("dummy")->status, PluginStatus::Loaded);
  const std::vector<DeviceInfo> devices = on.devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].id, "dummy:0");
  EXPECT_EQ(devices[0].name, "sim");
  EXPECT_EQ(devices[0].warp_size, 16u);
  EXPECT_EQ(devices[1].id, "dummy:1");
}

TEST(DummyRuntime, LaunchesAndTimedLaunchesThroughTheRuntime) {
  const Runtime runtime = runtime_with(kEnabled);
  const Device device = runtime.device("dummy:0").value();
  const std::int64_t n = 1000;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(n), b(n), c(n);
  for (std::int64_t i = 0; i < n; ++i) a[i] = dist(rng), b[i] = dist(rng);
  Buffer da = device.allocate(n * 4).value(), db = device.allocate(n * 4).value(), dc = device.allocate(n * 4).value();
  da.write(bytes_of(a)).value();
  db.write(bytes_of(b)).value();
  const ir::Kernel kernel = ir::Kernel::from_wire(test::wire_add_f32(n));
  const Program program = device.compile(kernel).value();
  const LaunchArg args[] = {LaunchArg::buffer(da), LaunchArg::buffer(db), LaunchArg::buffer(dc)};
  Event done = device.launch(program, args).value();
  done.wait().value();
  dc.read(std::as_writable_bytes(std::span(c))).value();
  for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(c[i], a[i] + b[i]) << i;

  const Timing timing = device.timed_launch(program, args).value();
  EXPECT_EQ(timing.timer, TimerKind::Model);
  EXPECT_EQ(timing.runs, 5u);
  EXPECT_GT(timing.min_ns, 0u);
  EXPECT_EQ(device.timed_launch(program, args).value().median_ns, timing.median_ns);  // no noise: deterministic
}

// A compile error names the op of the kernel the user gave, not only the op
// of the lowered kernel the plugin saw (the always-on passes renumber ops).
TEST(DummyRuntime, ACompileErrorNamesTheOpOfTheKernelGiven) {
  const Runtime runtime = runtime_with(kEnabled);
  const Device device = runtime.device("dummy:1").value();
  test::WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 64);
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, 64);
  auto unused = w.binary(KILN_BINARY_MUL, KILN_DTYPE_F32, w.const_f32(2.0f), w.const_f32(3.0f));  // folded away
  (void)unused;
  auto i = w.group_index(0, w.const_i64(64));
  auto v = w.unary(KILN_UNARY_SIN, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, x, i));
  w.store(KILN_DTYPE_F32, y, i, v);
  const ir::Kernel given = ir::Kernel::from_wire(w.ops);
  Result<Program> program = device.compile(given);
  ASSERT_FALSE(program.ok());
  const Error& e = program.error();
  EXPECT_EQ(e.code, ErrorCode::Unsupported);
  EXPECT_EQ(e.op, static_cast<std::int64_t>(v)) << e.to_string();
  EXPECT_NE(e.message.find("the plugin named op "), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("of the lowered kernel, unary sin f32)"), std::string::npos) << e.message;
}
