// The row-kernel optimizations (row_cache, lane_reduce, with tiled_reduce,
// split_loop, unroll and vectorize around them) on real devices: every
// device of the dummy, c, opencl (PoCL) and vulkan (lavapipe) plugins that
// can compile. For each device, softmax, layernorm and rmsnorm (f32, f16,
// bf16, odd sizes) are optimized for that device's DeviceInfo with the
// tuner's row recipes that apply and with random sequences that contain
// row_cache or lane_reduce, run on the device with random inputs, and
// compared with the unoptimized kernel on the reference interpreter. A
// plugin that is not built or has no device is a visible skip.
#include "passes/device_runner.hpp"
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"
#include "kiln/tune/search_space.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <random>

namespace {

using namespace kiln;
using namespace kiln::passes::test;

const char* const kPlugins[] = {"dummy", "c", "opencl", "vulkan"};

const Runtime* runtime_for(const std::string& plugin) {
  static std::map<std::string, std::unique_ptr<Runtime>> runtimes;
  auto& slot = runtimes[plugin];
  if (slot == nullptr) {
    std::string entries;
    for (const char* name : kPlugins)
      if (plugin != "dummy" || std::string(name) != "dummy")
        entries += std::string(entries.empty() ? "" : ", ") + "\"" + name + "\": {\"enabled\": " + (plugin == name ? "true" : "false") + "}";
    // The dummy also as the H200 describes itself to the optimizer (256
    // register bytes per thread at 1024 threads, 227 KB of LOCAL memory a group,
    // vectors to 16 lanes, warp shuffles, vector loads of buffers at any
    // index): the GPU recipes' blocks of 8, one-warp rows and LOCAL rows
    // apply there, and rmsnorm's weights beside rows that start anywhere
    // are read as vectors.
    if (plugin == "dummy")
      entries += R"(, "dummy": {"enabled": true, "options": {"simulate": [{}, {"name": "h200-shaped",
                 "register_bytes": 256, "local_memory_bytes": 232448, "vector_widths": [2, 3, 4, 8, 16],
                 "subgroup_reduce": true, "copy_async": true, "unaligned_vector_loads": true}]}})";
    Result<Config> config = parse_config("{\"plugins\": {" + entries + "}}", "rows-devices-config.json");
    if (!config) return nullptr;
    Result<Runtime> runtime = Runtime::create(std::move(config).value());
    if (!runtime) return nullptr;
    slot = std::make_unique<Runtime>(std::move(runtime).value());
  }
  return slot.get();
}

bool mentions_row_optimization(const passes::OptSequence& sequence) {
  for (const passes::OptStep& step : sequence)
    if (step.opt == "row_cache" || step.opt == "lane_reduce") return true;
  return false;
}

bool splits_across_threads(const passes::OptSequence& sequence) {
  for (const passes::OptStep& step : sequence)
    if (step.opt == "tiled_reduce") return true;
  return false;
}

// Up to `count` random sequences of up to 6 steps over every registered
// optimization, each holding row_cache or lane_reduce.
std::vector<passes::OptSequence> random_sequences(const ir::Kernel& kernel, const DeviceInfo& device, int count,
                                                  std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<passes::OptSequence> out;
  for (int attempt = 0; attempt < 8 * count && static_cast<int>(out.size()) < count; ++attempt) {
    ir::Kernel current = passes::normalize(kernel, device);
    passes::OptSequence sequence;
    for (int step = 0; step < 6; ++step) {
      std::vector<passes::OptStep> row_steps, other_steps;
      for (const passes::Optimization* opt : passes::optimizations())
        for (passes::OptStep& s : opt->configs(current, device))
          (s.opt == "row_cache" || s.opt == "lane_reduce" ? row_steps : other_steps).push_back(std::move(s));
      // Half the steps from the row optimizations, when they apply.
      auto& pool = !row_steps.empty() && (other_steps.empty() || rng() % 2 == 0) ? row_steps : other_steps;
      if (pool.empty()) break;
      const passes::OptStep chosen = pool[rng() % pool.size()];
      Result<ir::Kernel> next = passes::apply_sequence(current, {chosen}, device);
      if (!next.ok()) break;
      current = std::move(next).value();
      sequence.push_back(chosen);
    }
    if (mentions_row_optimization(sequence)) out.push_back(sequence);
  }
  return out;
}

// Devices round exp, sqrt and fused multiply-adds their own way, and the
// reductions are reassociated: the differential test's allowance.
double tolerance(const kernels::StandardKernel& k) {
  const double floor = k.dtype == ir::DType::F32 ? 1e-4 : k.dtype == ir::DType::F16 ? 3e-2 : 1e-1;
  return std::max(floor, 16 * k.tolerance);
}

// The runtime for `plugin` (nullptr when its config did not load: a test
// failure) and the plugin's record when it loaded (else nullptr and why not:
// a skip).
struct LoadedPlugin {
  const Runtime* runtime = nullptr;
  const PluginRecord* record = nullptr;
  std::string why;
};
LoadedPlugin load_plugin(const std::string& plugin) {
  LoadedPlugin loaded;
  loaded.runtime = runtime_for(plugin);
  if (loaded.runtime == nullptr) return loaded;
  const PluginRecord* record = loaded.runtime->plugin(plugin);
  if (record != nullptr && record->status == PluginStatus::Loaded) loaded.record = record;
  else loaded.why = "plugin '" + plugin + "' is not loaded" + (record ? ": " + record->reason : "");
  return loaded;
}

// The dummy's H200-shaped device (runtime_for), or why there is none: the
// dummy plugin keeps the devices of the first runtime that loaded it in
// this process (ctest runs each test alone, where this one is first).
struct H200Shaped {
  const Runtime* runtime = nullptr;
  const DeviceInfo* info = nullptr;
  std::string why;
};
H200Shaped h200_shaped_dummy() {
  const auto [runtime, record, why] = load_plugin("dummy");
  if (runtime == nullptr || record == nullptr) return {runtime, nullptr, runtime == nullptr ? "no runtime" : why};
  const auto h200 = std::find_if(record->devices.begin(), record->devices.end(),
                                 [](const DeviceInfo& d) { return d.name == "h200-shaped"; });
  if (h200 == record->devices.end()) return {runtime, nullptr, "the dummy was loaded earlier in this process without 'h200-shaped'"};
  return {runtime, &*h200, ""};
}

class RowsOnDevices : public ::testing::TestWithParam<const char*> {};

TEST_P(RowsOnDevices, OptimizedRowKernelsMatchTheInterpreter) {
  const std::string plugin = GetParam();
  const auto [runtime, record, why] = load_plugin(plugin);
  ASSERT_NE(runtime, nullptr);
  if (record == nullptr) GTEST_SKIP() << why;
  if (record->devices.empty()) GTEST_SKIP() << "plugin '" << plugin << "' has no device";
  int runs = 0, with_row_steps = 0;
  for (const DeviceInfo& info : record->devices) {
    if (!info.can_compile()) continue;
    const Device device = runtime->device(info.id).value();
    for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"})
      for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
        if (!info.supports_op_kind(KILN_OP_LOAD, static_cast<unsigned>(dtype))) continue;  // the device has no such dtype
        // f32 at a size 16 and 32 divide and an odd one (5 rows: they start at 5
        // residues mod 8, split_aligned's heads of 0, 3, 6, 1, 4); f16/bf16 at the odd one
        // (the C plugin compiles every program with gcc: bounded time); on a
        // device with 8-lane vectors also every dtype at n = 768 (blocks of 8
        // and one warp per row, as on the H200).
        const bool eight_lanes = (info.vector_width_mask & (1u << 8)) != 0;
        for (const kernels::KernelSize size : {kernels::KernelSize{.m = 3, .n = 160}, kernels::KernelSize{.m = 5, .n = 37},
                                               kernels::KernelSize{.m = 2, .n = 768}}) {
          if (dtype != ir::DType::F32 && size.n == 160) continue;
          if (size.n == 768 && !eight_lanes) continue;
          const kernels::StandardKernel k = standard(name, size, dtype);
          std::vector<passes::OptSequence> sequences = random_sequences(k.kernel, info, 1, size.n * 31 + static_cast<unsigned>(dtype));
          // On the dummy also the GPU recipes without a row cache (threads per row
          // alone, streamed; the other plugins compile each one: bounded time).
          for (const passes::OptSequence& recipe : tune::default_search_space().recipes)
            if ((mentions_row_optimization(recipe) || (plugin == "dummy" && splits_across_threads(recipe))) &&
                passes::optimize(k.kernel, recipe, info).ok())
              sequences.push_back(recipe);
          const RunOutcome expected = run_on_interpreter(k.kernel, k.args, 41);
          for (const passes::OptSequence& sequence : sequences) {
            SCOPED_TRACE(info.id + " " + name + " " + std::string(ir::dtype_name(dtype)) + " n=" + std::to_string(size.n) +
                         ": " + passes::to_string(sequence));
            Result<ir::Kernel> optimized = passes::optimize(k.kernel, sequence, info);
            ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
            const RunOutcome actual = run_on_device(device, *optimized, k.args, 41);
            if (!actual.error.empty() && actual.error.find("Unsupported") != std::string::npos) continue;
            EXPECT_EQ(compare_outcomes(expected, actual, tolerance(k)), "") << ir::print(*optimized);
            ++runs;
            with_row_steps += mentions_row_optimization(sequence);
          }
        }
      }
  }
  if (runs == 0) GTEST_SKIP() << "no device of '" << plugin << "' ran a row kernel";
  EXPECT_GT(with_row_steps, 0);
}

// The recipes for rows that start anywhere (split_aligned: aligned vector
// blocks and the row's scalar loose ends, a reduction's first; rmsnorm's
// weights as vectors at any index; the row in
// LOCAL memory or registers, part of it, or none) apply only where each thread gets several blocks: at the issue's
// n = 50257 (odd: 2 rows, starting at residues 0 and 1 mod 8; 50257 = 1 mod
// 8) on the H200-shaped dummy, f32 and f16 (bf16 converts the same way on
// the dummy; bounded time), against the interpreter.
TEST_P(RowsOnDevices, AlignedRecipesAtALongOddRowMatchTheInterpreter) {
  if (std::string(GetParam()) != "dummy") GTEST_SKIP() << "on the interpreter-backed dummy only (bounded time)";
  const auto [runtime, h200, why] = h200_shaped_dummy();
  ASSERT_NE(runtime, nullptr);
  if (h200 == nullptr) GTEST_SKIP() << why;
  const Device device = runtime->device(h200->id).value();
  int runs = 0, weights_at_any_index = 0;
  for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"})
    for (ir::DType dtype : {ir::DType::F32, ir::DType::F16}) {
      const kernels::StandardKernel k = standard(name, {.m = 2, .n = 50257}, dtype);
      const RunOutcome expected = run_on_interpreter(k.kernel, k.args, 43);
      for (const passes::OptSequence& recipe : tune::default_search_space().recipes) {
        if (passes::to_string(recipe).find("split_aligned") == std::string::npos) continue;
        Result<ir::Kernel> optimized = passes::optimize(k.kernel, recipe, *h200);
        if (!optimized.ok()) continue;  // made for the other kernels' loops, or too big for LOCAL memory
        SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)) + ": " + passes::to_string(recipe));
        EXPECT_EQ(compare_outcomes(expected, run_on_device(device, *optimized, k.args, 43), tolerance(k)), "");
        ++runs;
        weights_at_any_index += ir::print(*optimized).find("load unaligned") != std::string::npos;
      }
    }
  EXPECT_GE(runs, 20);
  // rmsnorm's weights, read as vectors at any index (the device claims such loads, as the CUDA plugin does).
  EXPECT_GE(weights_at_any_index, 2);
}

// A kernel lowered for a CPU with the next row prefetched (PREFETCH) runs on
// every device: the C plugin claims the op (__builtin_prefetch), the others
// do not and Device::compile drops it (a hint); the results are the
// interpreter's either way.
TEST_P(RowsOnDevices, APrefetchingKernelRunsOnEveryDeviceClaimedOrNot) {
  const std::string plugin = GetParam();
  const auto [runtime, record, why] = load_plugin(plugin);
  ASSERT_NE(runtime, nullptr);
  if (record == nullptr) GTEST_SKIP() << why;
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 3, .n = 160});
  const Result<ir::Kernel> lowered = passes::optimize(
      k.kernel,
      passes::parse_sequence("split_loop(loop=2,factor=16); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
                             "lane_reduce(loop=0,lanes=16); row_cache(loop=1); vectorize(lanes=16); "
                             "prefetch_rows(loop=1,distance=1)")
          .value(),
      passes::cpu_preset());
  ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
  ASSERT_NE(ir::print(*lowered).find("prefetch f32"), std::string::npos);
  const RunOutcome expected = run_on_interpreter(k.kernel, k.args, 47);
  int runs = 0;
  for (const DeviceInfo& info : record->devices) {
    // 16-lane vectors: not every device has them (lavapipe: 4).
    if (!info.can_compile() || (info.vector_width_mask & (1u << 16)) == 0) continue;
    SCOPED_TRACE(info.id + (info.supports_op_kind(KILN_OP_PREFETCH, KILN_DTYPE_F32) ? " (claims PREFETCH)" : ""));
    EXPECT_EQ(compare_outcomes(expected, run_on_device(runtime->device(info.id).value(), *lowered, k.args, 47), tolerance(k)), "");
    ++runs;
  }
  if (runs == 0) GTEST_SKIP() << "no device of '" << plugin << "' has 16-lane vectors";
  if (plugin == "c") {
    EXPECT_TRUE(record->devices[0].supports_op_kind(KILN_OP_PREFETCH, KILN_DTYPE_F32));
  }
}

// Rows of odd length where vector accesses take any element index (the C
// plugin claims KILN_FEATURE_UNALIGNED_VECTORS; so does preset:cpu): the
// tuner's fallback CPU recipes for them (split_loop's tail=1, for rows
// split_aligned finds no start of; the flat recipes below come first)
// vectorize every access,
// the ones off a multiple of 16 marked unaligned, softmax's exponentials kept
// for its writing loop, and run to the interpreter's results on c:0; a device that does not claim it (the dummy's default) refuses such a
// kernel naming the op instead of running it.
TEST_P(RowsOnDevices, OddRowsVectorizeAtAnyIndexWhereTheDeviceTakesIt) {
  const std::string plugin = GetParam();
  if (plugin != "c" && plugin != "dummy") GTEST_SKIP() << "run on the C plugin (claims it) and the dummy (does not)";
  const auto [runtime, record, why] = load_plugin(plugin);
  ASSERT_NE(runtime, nullptr);
  if (record == nullptr) GTEST_SKIP() << why;
  if (record->devices.empty()) GTEST_SKIP() << "plugin '" << plugin << "' has no device";
  const DeviceInfo& info = record->devices.front();
  EXPECT_EQ(info.has_feature(KILN_FEATURE_UNALIGNED_VECTORS), plugin == "c");
  const Device device = runtime->device(info.id).value();
  int runs = 0;
  for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"})
    for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
      const kernels::StandardKernel k = standard(name, {.m = 3, .n = 101}, dtype);  // rows start at 0, 5, 10 mod 16
      const RunOutcome expected = run_on_interpreter(k.kernel, k.args, 53);
      for (const passes::OptSequence& recipe : tune::default_search_space().recipes) {
        const std::string text = passes::to_string(recipe);
        if (text.find("tail=1") == std::string::npos) continue;  // the CPU recipes for rows of odd length
        Result<ir::Kernel> optimized = passes::optimize(k.kernel, recipe, passes::cpu_preset());
        if (!optimized.ok()) continue;  // made for the other kernels' loops
        SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)) + ": " + text);
        const std::string printed = ir::print(*optimized);
        EXPECT_NE(printed.find("load unaligned " + std::string(ir::dtype_name(dtype)) + "x16"), std::string::npos) << printed;
        if (text.find("row_cache(loop=2)") != std::string::npos) {  // softmax's: the blocks' exponentials once, kept
          const auto first = printed.find("exp f32x16");
          EXPECT_NE(first, std::string::npos) << printed;
          EXPECT_EQ(printed.find("exp f32x16", first + 1), std::string::npos) << printed;
        }
        const RunOutcome actual = run_on_device(device, *optimized, k.args, 53);
        if (plugin == "c") EXPECT_EQ(compare_outcomes(expected, actual, tolerance(k)), "");
        else EXPECT_NE(actual.error.find("at any element index (KILN_FEATURE_UNALIGNED_VECTORS"), std::string::npos)
            << actual.error;
        ++runs;
      }
    }
  EXPECT_GE(runs, 12);  // two recipes made for softmax's three loops, two for the norms' two, three dtypes
}

TEST_P(RowsOnDevices, OddRowsRunOnAlignedBlocks) {
  // The CPU recipes for rows of odd length on split_aligned's flat blocks: the
  // row's vector loads and stores start aligned whatever the row's start;
  // only rmsnorm's weights (indexed by the column, from the row's head on)
  // are read at any index, which the CPU devices take (the C plugin, OpenCL
  // on a CPU). The dummy's devices have no 16-lane vectors.
  const std::string plugin = GetParam();
  if (plugin != "c" && plugin != "opencl") GTEST_SKIP() << "run on the CPU plugins (16-lane vectors at any index)";
  const auto [runtime, record, why] = load_plugin(plugin);
  ASSERT_NE(runtime, nullptr);
  if (record == nullptr) GTEST_SKIP() << why;
  if (record->devices.empty()) GTEST_SKIP() << "plugin '" << plugin << "' has no device";
  const DeviceInfo& info = record->devices.front();
  if (!info.has_feature(KILN_FEATURE_UNALIGNED_VECTORS)) GTEST_SKIP() << info.id << " is no CPU device (no vectors at any index)";
  const Device device = runtime->device(info.id).value();
  // Two lengths: the max's flat blocks an odd count of 16 (n = 101, rows start
  // at 0, 5, 10 mod 16) and an even one (n = 117); softmax's recipes with
  // two max accumulators come in a form for each, every other recipe applies
  // at both.
  int runs = 0;
  std::map<std::string, int> applied;
  for (const std::int64_t n : {101, 117})
    for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"})
      for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
        const kernels::StandardKernel k = standard(name, {.m = 3, .n = n}, dtype);
        const RunOutcome expected = run_on_interpreter(k.kernel, k.args, 59);
        for (const passes::OptSequence& recipe : tune::default_search_space().recipes) {
          const std::string text = passes::to_string(recipe);
          const bool softmax = std::string_view(name) == "softmax-rows";
          // softmax's recipes divide by the row sum (reciprocal_divide); the norms' do not.
          if (text.find("flat=1") == std::string::npos || (text.find("reciprocal_divide") != std::string::npos) != softmax) continue;
          if (text.find("pipeline_rows") != std::string::npos) continue;  // eight rows a work-item: PipelinedRecipesMatchTheInterpreter
          Result<ir::Kernel> optimized = passes::optimize(k.kernel, recipe, passes::cpu_preset());
          applied[text] += optimized.ok() ? 1 : 0;
          if (!optimized.ok() && text.find("lanes=32") != std::string::npos) continue;  // the other parity's form
          ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
          SCOPED_TRACE(std::string(name) + " n=" + std::to_string(n) + " " + std::string(ir::dtype_name(dtype)) + ": " + text);
          const std::string printed = ir::print(*optimized);
          const std::string vector = std::string(ir::dtype_name(dtype)) + "x16";
          const std::string output = "%" + std::to_string(k.args.size() - 1) + "[";  // the last param, the output
          EXPECT_NE(printed.find("store " + vector + " " + output), std::string::npos) << printed;  // aligned
          EXPECT_EQ(printed.find("store unaligned"), std::string::npos) << printed;
          EXPECT_EQ(printed.find("load unaligned") != std::string::npos, std::string_view(name) == "rmsnorm-rows") << printed;
          if (softmax) {  // the blocks' exponentials once, kept
            const auto first = printed.find("exp f32x16");
            EXPECT_NE(first, std::string::npos) << printed;
            EXPECT_EQ(printed.find("exp f32x16", first + 1), std::string::npos) << printed;
          }
          EXPECT_EQ(compare_outcomes(expected, run_on_device(device, *optimized, k.args, 59), tolerance(k)), "");
          ++runs;
        }
      }
  // softmax: two recipes with one max accumulator at both lengths, one of the
  // two with two accumulators at each; each norm's two at both; three dtypes.
  EXPECT_EQ(runs, 2 * 3 * (3 + 2 + 2));
  for (const auto& [text, count] : applied) EXPECT_GT(count, 0) << text;
}

TEST_P(RowsOnDevices, PipelinedRecipesMatchTheInterpreter) {
  // The CPU recipes that pipeline eight rows a work-item (pipeline_rows: a
  // row's stages fused with the rows before's), on 24 rows (three work-items)
  // and on 21 (coarsen mode 2: the third work-item runs row 20 again in
  // place of the three rows past m) of 160 and of 101 (split_aligned's blocks), every dtype,
  // on the C plugin (the recipes prefetch the next row:
  // the devices that claim PREFETCH), against the unoptimized kernel on the
  // interpreter.
  const std::string plugin = GetParam();
  if (plugin != "c") GTEST_SKIP() << "run on the C plugin (the recipes' device)";
  const auto [runtime, record, why] = load_plugin(plugin);
  ASSERT_NE(runtime, nullptr);
  if (record == nullptr) GTEST_SKIP() << why;
  if (record->devices.empty()) GTEST_SKIP() << "plugin '" << plugin << "' has no device";
  const DeviceInfo& info = record->devices.front();
  if (!info.can_compile() || (info.vector_width_mask & (1u << 16)) == 0)
    GTEST_SKIP() << info.id << " does not compile 16-lane vectors (the recipes' CPU shape)";
  const Device device = runtime->device(info.id).value();
  int runs = 0;
  for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"})
    for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
      if (!info.supports_op_kind(KILN_OP_LOAD, static_cast<unsigned>(dtype))) continue;
      for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{24, 160}, {24, 101}, {21, 160}, {21, 101}}) {
        const kernels::StandardKernel k = standard(name, {.m = m, .n = n}, dtype);
        const RunOutcome expected = run_on_interpreter(k.kernel, k.args, 61);
        for (const passes::OptSequence& recipe : tune::default_search_space().recipes) {
          const std::string text = passes::to_string(recipe);
          if (text.find("pipeline_rows") == std::string::npos) continue;
          Result<ir::Kernel> optimized = passes::optimize(k.kernel, recipe, info);
          if (!optimized.ok()) continue;  // the other kernel's recipe, or the other length's
          SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)) + " m=" + std::to_string(m) + " n=" +
                       std::to_string(n) + ": " + text);
          const RunOutcome actual = run_on_device(device, *optimized, k.args, 61);
          EXPECT_EQ(compare_outcomes(expected, actual, tolerance(k)), "");
          ++runs;
        }
      }
    }
  EXPECT_GE(runs, 2 * 2 * 3 * 3);  // at each shape, softmax's recipe and the norms' for it; three dtypes
}

TEST_P(RowsOnDevices, FlatAlignedBlocksOfFourOnTheDummy) {
  // split_aligned(..., flat=1) in the shape of the CPU recipes, in blocks of
  // 4 (the dummy's default devices take 4-lane vectors, not 16): the rows'
  // loads and stores become aligned vectors, and rmsnorm's weights, which
  // start where the row does, stay scalar on a device that does not claim
  // vectors at any index; all run to the interpreter's results.
  const std::string plugin = GetParam();
  if (plugin != "dummy") GTEST_SKIP() << "the dummy's case (the CPU plugins run the 16-lane recipes)";
  const auto [runtime, record, why] = load_plugin(plugin);
  ASSERT_NE(runtime, nullptr);
  if (record == nullptr) GTEST_SKIP() << why;
  if (record->devices.empty()) GTEST_SKIP() << "plugin '" << plugin << "' has no device";
  const DeviceInfo& info = record->devices.front();
  ASSERT_FALSE(info.has_feature(KILN_FEATURE_UNALIGNED_VECTORS));
  const Device device = runtime->device(info.id).value();
  const std::string softmax_recipe =
      "reciprocal_divide(); split_aligned(loop=2,factor=4,flat=1); split_aligned(loop=1,factor=4,flat=1); "
      "split_aligned(loop=0,factor=4,flat=1); split_loop(loop=5,factor=4); unroll(loop=6,factor=0); lane_reduce(loop=3,lanes=4); "
      "lane_reduce(loop=1,lanes=4); row_cache(loop=3); vectorize(lanes=4)";
  const std::string norm_recipe =
      "split_aligned(loop=1,factor=4,flat=1); split_aligned(loop=0,factor=4,flat=1); split_loop(loop=3,factor=4); "
      "unroll(loop=4,factor=0); lane_reduce(loop=1,lanes=4); vectorize(lanes=4)";
  for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"})
    for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
      const bool softmax = std::string_view(name) == "softmax-rows";
      SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)));
      const kernels::StandardKernel k = standard(name, {.m = 5, .n = 43}, dtype);  // rows start at 0, 3, 2, 1, 0 mod 4
      Result<ir::Kernel> optimized =
          passes::optimize(k.kernel, passes::parse_sequence(softmax ? softmax_recipe : norm_recipe).value(), info);
      ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
      const std::string printed = ir::print(*optimized);
      EXPECT_NE(printed.find("store " + std::string(ir::dtype_name(dtype)) + "x4 %" + std::to_string(k.args.size() - 1) + "["),
                std::string::npos)
          << printed;
      EXPECT_EQ(printed.find("unaligned"), std::string::npos) << printed;
      EXPECT_EQ(compare_outcomes(run_on_interpreter(k.kernel, k.args, 61), run_on_device(device, *optimized, k.args, 61), tolerance(k)),
                "");
    }
}

TEST_P(RowsOnDevices, WeightsAtAnyIndexWhereTheDeviceTakesSuchLoads) {
  // rmsnorm at n = 43 in split_aligned's flat blocks of 4 (rows starting at
  // 0, 3, 2, 1, 0 mod 4) on the H200-shaped dummy, which
  // claims vector loads of buffers at any index alone, as the CUDA plugin
  // does: the weights (indexed by the column, from the row's head on) are
  // read as unaligned vectors, the row's loads and stores stay aligned, and
  // the results are the interpreter's. The same kernel with one store made
  // unaligned is refused by name there, as is a load of kernel storage at
  // any index.
  if (std::string(GetParam()) != "dummy") GTEST_SKIP() << "the H200-shaped dummy's case";
  const auto [runtime, h200, why] = h200_shaped_dummy();
  ASSERT_NE(runtime, nullptr);
  if (h200 == nullptr) GTEST_SKIP() << why;
  ASSERT_TRUE(h200->has_feature(KILN_FEATURE_UNALIGNED_VECTOR_LOADS));
  ASSERT_FALSE(h200->has_feature(KILN_FEATURE_UNALIGNED_VECTORS));
  const Device device = runtime->device(h200->id).value();
  const std::string recipe =
      "split_aligned(loop=1,factor=4,flat=1); split_aligned(loop=0,factor=4,flat=1); split_loop(loop=3,factor=4); "
      "unroll(loop=4,factor=0); lane_reduce(loop=1,lanes=4); vectorize(lanes=4)";
  for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
    SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
    const kernels::StandardKernel k = standard("rmsnorm-rows", {.m = 5, .n = 43}, dtype);
    Result<ir::Kernel> optimized = passes::optimize(k.kernel, passes::parse_sequence(recipe).value(), *h200);
    ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
    const std::string printed = ir::print(*optimized), type = std::string(ir::dtype_name(dtype)) + "x4";
    EXPECT_NE(printed.find("load unaligned " + type + " %1["), std::string::npos) << printed;  // the weights
    EXPECT_EQ(printed.find("load unaligned " + type + " %0["), std::string::npos) << printed;  // the row: aligned blocks
    EXPECT_NE(printed.find("store " + type + " %2["), std::string::npos) << printed;
    EXPECT_EQ(compare_outcomes(run_on_interpreter(k.kernel, k.args, 67), run_on_device(device, *optimized, k.args, 67), tolerance(k)),
              "");
    const auto store = printed.find("store " + type + " %2[");
    ASSERT_NE(store, std::string::npos);
    const Result<ir::Kernel> unaligned_store = ir::parse(printed.substr(0, store) + "store unaligned " + printed.substr(store + 6));
    ASSERT_TRUE(unaligned_store.ok()) << unaligned_store.error().to_string();
    const RunOutcome refused = run_on_device(device, *unaligned_store, k.args, 67);
    EXPECT_NE(refused.error.find("does not claim vector stores at any element index"), std::string::npos) << refused.error;
  }
  // Nor a load of kernel storage at any index: only buffers' loads are claimed.
  const Result<ir::Kernel> from_storage = ir::parse(R"(%x = param 0 global f32[8]
%y = param 1 global_mut f32[8]
%r = storage register f32[8]
%one = const i64 1
%zero = const i64 0
%g = index group 0 %one
%v = load f32x4 %x[%zero]
store %r[%zero], %v
%w = load unaligned f32x4 %r[%one]
store %y[%zero], %w
)");
  ASSERT_TRUE(from_storage.ok()) << from_storage.error().to_string();
  const Result<Program> compiled = device.compile(*from_storage);
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.error().to_string().find("does not claim vector loads at any element index"), std::string::npos)
      << compiled.error().to_string();
}

INSTANTIATE_TEST_SUITE_P(Plugins, RowsOnDevices, ::testing::ValuesIn(kPlugins),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
