// tiled_reduce's subgroup form on devices: every device that claims
// SUBGROUP_REDUCE of the dummy (two simulated ones, subgroups of 32 and of
// 8: the reference interpreter behind the ABI, through libkiln's compile and
// launch), vulkan (lavapipe: subgroups of 8), opencl and c plugins runs the
// row kernels optimized with subgroup configs of their first loop and the
// tuner's subgroup recipes, on random inputs, against the untuned kernel on
// the interpreter: on the dummy in f32, f16, bf16 (and i32 for sum and
// max), elsewhere f32 (and f16 softmax). A plugin with no claiming device
// (PoCL has no subgroups, the C plugin runs one thread per group) is a
// visible skip. A device that does not claim the op is never proposed the
// form, and libkiln refuses to send it the op, or a subgroup wider than its
// warp_size, naming the op.
#include "passes/device_runner.hpp"
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/builder.hpp"
#include "kiln/tune/search_space.hpp"

#include <gmock/gmock.h>

#include <cstring>
#include <map>
#include <memory>

using namespace kiln;
using namespace kiln::passes::test;

namespace {

const char* const kPlugins[] = {"dummy", "vulkan", "opencl", "c"};

// The plugin alone; the dummy with two devices that claim the op (subgroups
// of 32 and of 8) and one that does not.
const Runtime* runtime_for(const std::string& plugin) {
  static std::map<std::string, std::unique_ptr<Runtime>> runtimes;
  auto& slot = runtimes[plugin];
  if (slot == nullptr) {
    std::string entries;
    for (const char* name : kPlugins) {
      entries += std::string(entries.empty() ? "" : ", ") + "\"" + name + "\": {\"enabled\": " + (plugin == name ? "true" : "false");
      if (std::string_view(name) == "dummy")
        entries += R"(, "options": {"simulate": [{"subgroup_reduce": true},
                     {"subgroup_reduce": true, "warp_size": 8, "max_local_threads": 256}, {}]})";
      entries += "}";
    }
    Result<Config> config = parse_config("{\"plugins\": {" + entries + ", \"cuda\": {\"enabled\": false}}}",
                                         "subgroup-devices-test-config.json");
    if (!config) return nullptr;
    Result<Runtime> runtime = Runtime::create(std::move(config).value());
    if (!runtime) return nullptr;
    slot = std::make_unique<Runtime>(std::move(runtime).value());
  }
  return slot.get();
}

std::vector<DeviceInfo> devices_of(const std::string& plugin) {
  const Runtime* runtime = runtime_for(plugin);
  if (runtime == nullptr) return {};
  const PluginRecord* record = runtime->plugin(plugin);
  if (record == nullptr || record->status != PluginStatus::Loaded) return {};
  return record->devices;
}

bool has_subgroup_step(const passes::OptSequence& sequence) {
  for (const passes::OptStep& step : sequence)
    if (step.param("subgroup", 0) != 0) return true;
  return false;
}

class SubgroupOnDevices : public ::testing::TestWithParam<const char*> {};

}  // namespace

TEST_P(SubgroupOnDevices, RowKernelsMatchTheInterpreter) {
  const std::string plugin = GetParam();
  // The interpreter-backed dummy runs every case; a real plugin's compiles
  // cost more (lavapipe: a pipeline each), so f32 and f16 there, fewer configs.
  const bool full = plugin == "dummy";
  int runs = 0, claiming = 0;
  for (const DeviceInfo& info : devices_of(plugin)) {
    if (!info.can_compile() || !info.supports_op_kind(KILN_OP_SUBGROUP_REDUCE, KILN_DTYPE_F32)) continue;
    ++claiming;
    const Device device = runtime_for(plugin)->device(info.id).value();
    for (const char* name : {"sum-rows", "max-rows", "softmax-rows", "layernorm-rows", "rmsnorm-rows"})
      for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16, ir::DType::I32}) {
        const std::string_view kernel_name(name);
        if (dtype == ir::DType::I32 && kernel_name != "sum-rows" && kernel_name != "max-rows") continue;
        if (!full && dtype != ir::DType::F32 && !(dtype == ir::DType::F16 && kernel_name == "softmax-rows")) continue;
        if (!info.supports_op_kind(KILN_OP_SUBGROUP_REDUCE, static_cast<unsigned>(dtype))) continue;
        const kernels::StandardKernel k = standard(name, {.m = 3, .n = 301}, dtype);
        std::vector<passes::OptSequence> sequences;
        for (passes::OptStep& step : passes::find_optimization("tiled_reduce")->configs(k.kernel, info)) {
          const std::int64_t local = step.param("local", 0), branch = step.param("branch", 0);
          const bool wanted = full ? local == static_cast<std::int64_t>(info.warp_size) || local == 256
                                   : (local == 32 && branch == 2) || (local == 256 && branch == 4);
          if (step.param("subgroup", 0) != 0 && step.param("loop", -1) == 0 && wanted) sequences.push_back({std::move(step)});
        }
        for (const passes::OptSequence& recipe : tune::default_search_space().recipes)
          if (has_subgroup_step(recipe) && passes::optimize(k.kernel, recipe, info).ok()) sequences.push_back(recipe);
        ASSERT_FALSE(sequences.empty()) << info.id << " " << name;
        const RunOutcome expected = run_on_interpreter(k.kernel, k.args, 43);
        for (const passes::OptSequence& sequence : sequences) {
          SCOPED_TRACE(info.id + " " + name + " " + std::string(ir::dtype_name(dtype)) + ": " + passes::to_string(sequence));
          Result<ir::Kernel> optimized = passes::optimize(k.kernel, sequence, info);
          ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
          const double tolerance = std::max(dtype == ir::DType::F32 ? 1e-4 : 1e-1, 16 * k.tolerance);
          EXPECT_EQ(compare_outcomes(expected, run_on_device(device, *optimized, k.args, 43), tolerance), "")
              << ir::print(*optimized);
          ++runs;
        }
      }
  }
  if (plugin == "dummy") {
    EXPECT_EQ(claiming, 2);
  }
  if (claiming == 0) GTEST_SKIP() << "no device of '" << plugin << "' claims subgroup_reduce (or the plugin is not loaded)";
  EXPECT_GT(runs, 0);
}

TEST_P(SubgroupOnDevices, SignedZerosGiveTheInterpretersBits) {
  // max(+0, -0) is -0 one way round and +0 the other: the device must put
  // the lower lane's value on the left, as kernel_ir.h orders it (lanes of
  // one pair would disagree otherwise). y = 1 / max over the subgroup of
  // +0 (even threads) and -0 (odd ones), so the sign shows as +-inf.
  const std::string plugin = GetParam();
  int claiming = 0;
  for (const DeviceInfo& info : devices_of(plugin)) {
    if (!info.can_compile() || !info.supports_op_kind(KILN_OP_SUBGROUP_REDUCE, KILN_DTYPE_F32)) continue;
    ++claiming;
    for (const ir::BinaryOp reduction : {ir::BinaryOp::Max, ir::BinaryOp::Min}) {
      ir::Builder b;
      const ir::Value y = b.param(ir::ParamKind::GlobalMut, ir::DType::F32, 64);
      const ir::Value t = b.local_index(0, 64);
      const ir::Value even = b.eq(b.bit_and(t, b.constant_i64(1)), b.constant_i64(0));
      const ir::Value zero = b.select(even, b.constant(ir::DType::F32, 0.0f), b.constant(ir::DType::F32, -0.0f));
      b.store(y, t, b.recip(b.subgroup_reduce(reduction, zero, info.warp_size)));
      const ir::Kernel k = b.finish();
      const std::vector<kernels::ArgSpec> args = {{.name = "y", .role = kernels::ArgRole::Output, .elements = 64}};
      const RunOutcome want = run_on_interpreter(k, args, 1);
      const RunOutcome got = run_on_device(runtime_for(plugin)->device(info.id).value(), k, args, 1);
      ASSERT_EQ(got.error, "") << info.id;
      ASSERT_EQ(want.outputs.size(), 1u);
      EXPECT_EQ(std::memcmp(got.outputs[0].data().data(), want.outputs[0].data().data(), want.outputs[0].bytes()), 0)
          << info.id << ": the lanes' signs differ from the interpreter's";
    }
  }
  if (claiming == 0) GTEST_SKIP() << "no device of '" << plugin << "' claims subgroup_reduce (or the plugin is not loaded)";
}

INSTANTIATE_TEST_SUITE_P(Plugins, SubgroupOnDevices, ::testing::ValuesIn(kPlugins),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

TEST(SubgroupOnDummy, OnlyDevicesThatClaimTheOpGetIt) {
  const std::vector<DeviceInfo> devices = devices_of("dummy");
  ASSERT_EQ(devices.size(), 3u);
  const DeviceInfo& wide = devices[0];
  const DeviceInfo& plain = devices[2];
  EXPECT_EQ(wide.warp_size, 32u);
  EXPECT_EQ(devices[1].warp_size, 8u);
  EXPECT_TRUE(wide.supports_op_kind(KILN_OP_SUBGROUP_REDUCE, KILN_DTYPE_BF16));
  EXPECT_FALSE(wide.supports_op_kind(KILN_OP_SUBGROUP_REDUCE, KILN_DTYPE_BOOL));
  EXPECT_FALSE(plain.supports_op_kind(KILN_OP_SUBGROUP_REDUCE, KILN_DTYPE_F32));
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 2, .n = 100});
  for (const passes::OptStep& step : passes::find_optimization("tiled_reduce")->configs(k.kernel, plain))
    EXPECT_FALSE(step.param("subgroup", 0) != 0) << step.to_string();
  // A kernel with the op, compiled through libkiln.
  auto reduce_kernel = [](std::uint32_t width) {
    ir::Builder b;
    const ir::Value x = b.param(ir::ParamKind::GlobalMut, ir::DType::F32, 64);
    const ir::Value t = b.local_index(0, 64);
    b.store(x, t, b.subgroup_reduce(ir::BinaryOp::Add, b.load(x, t), width));
    return b.finish();
  };
  const Result<Program> refused = runtime_for("dummy")->device(plain.id).value().compile(reduce_kernel(32), {.mode = CompileMode::Frozen});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::Unsupported);
  EXPECT_THAT(refused.error().message, ::testing::HasSubstr("(subgroup_reduce f32): the device does not claim this op kind"));
  const Result<Program> too_wide = runtime_for("dummy")->device(wide.id).value().compile(reduce_kernel(64), {.mode = CompileMode::Frozen});
  ASSERT_FALSE(too_wide.ok());
  EXPECT_THAT(too_wide.error().message, ::testing::HasSubstr("subgroups of 64 threads, wider than the device's 32"));
  EXPECT_TRUE(runtime_for("dummy")->device(wide.id).value().compile(reduce_kernel(32), {.mode = CompileMode::Frozen}).ok());
}
