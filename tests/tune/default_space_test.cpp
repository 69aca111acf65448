// kiln's own search space (the passes library) under the tuner, on the
// dummy device: its lowering is passes::optimize, what the tuner measured is
// what a replay gives, and a second call finds it in the database.
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/ir/dtype.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/kernels/library.hpp"
#include "kiln/passes/pipeline.hpp"
#include "kiln/passes/device_presets.hpp"
#include "kiln/tune/heuristic.hpp"
#include "kiln/tune/tournament_search.hpp"

#include <algorithm>
#include "kiln/tune/tuner.hpp"
#include "tune/dummy_device.hpp"

using namespace kiln;
using namespace kiln::tune;
namespace fs = std::filesystem;

namespace {

fs::path fresh_db() {
  const fs::path dir = fs::path(KILN_BUILD_DIR) / "tests" / "tune-default" /
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir / "tuning.sqlite";
}

TuneOptions quick_options(const kernels::StandardKernel& k, fs::path db) {
  TuneOptions options;
  options.settings.n_launches = 8;
  options.settings.repeats = 2;
  options.settings.n_total_opts = 8;
  options.settings.budget_s = 120;
  options.db_path = std::move(db);
  options.args = k.args;
  options.tolerance = 2 * k.tolerance;
  options.kernel_name = k.name;
  return options;
}

// A short search (8 steps: the recipes are proposed before any step, and the
// steps only add rivals; a longer one costs the suite tens of seconds) on
// `device`: the index, in the order of the first `launches` measurements, of
// the first recipe whose sequence holds every one of `steps`, or -1. Its
// sequence goes into `found` and is checked to lower.
long first_recipe_holding(const kernels::StandardKernel& k, const DeviceInfo& device,
                          std::initializer_list<std::string_view> steps, passes::OptSequence& found,
                          std::size_t launches = 64) {
  AutotuneSettings settings;
  settings.n_total_opts = 8;
  settings.n_removed_per_step = 4;
  const SearchSpace& space = default_search_space();
  const SearchResult search = tournament_search(k.kernel, device, space, settings, [] { return false; });
  const std::vector<SearchCandidate> order = measurement_order(search, launches);
  const auto at = std::find_if(order.begin(), order.end(), [&](const SearchCandidate& c) {
    const std::string text = passes::to_string(c.sequence);
    const auto holds = [&](std::string_view step) { return text.find(step) != text.npos; };
    return c.recipe && std::all_of(steps.begin(), steps.end(), holds);
  });
  if (at == order.end()) return -1;
  found = at->sequence;
  EXPECT_TRUE(space.lower(k.kernel, found, device).ok()) << passes::to_string(found);
  return at - order.begin();
}

}  // namespace

TEST(DefaultSpace, StepsAndLoweringAreThePassesLibrarys) {
  const SearchSpace& space = default_search_space();
  EXPECT_EQ(space.optimizations, passes::optimizations());
  EXPECT_EQ(space.version, search_space_version(passes::optimizations()));
  const Device device = test::dummy_device();
  const kernels::StandardKernel k = kernels::make_standard_kernel("sum-rows", {64, 256, 1}).value();
  const ir::Kernel normalized = space.normalize(k.kernel, device.info());
  EXPECT_EQ(normalized, passes::normalize(k.kernel, device.info()));
  std::size_t compared = 0;
  for (const passes::Optimization* opt : space.optimizations) {
    for (const passes::OptStep& step : opt->configs(normalized, device.info())) {
      Result<ir::Kernel> applied = space.apply(normalized, step, device.info());
      Result<ir::Kernel> lowered = space.lower(k.kernel, {step}, device.info());
      Result<ir::Kernel> optimized = passes::optimize(k.kernel, {step}, device.info());
      ASSERT_EQ(lowered.ok(), optimized.ok()) << step.to_string();
      if (!lowered) continue;
      EXPECT_EQ(ir::hash(*lowered), ir::hash(*optimized)) << step.to_string();
      ASSERT_TRUE(applied.ok()) << step.to_string();
      EXPECT_EQ(*applied, passes::apply_sequence(normalized, {step}, device.info()).value()) << step.to_string();
      ++compared;
    }
  }
  EXPECT_GT(compared, 0u) << "the registry offers configs for a row sum";
}

TEST(DefaultSpace, TunesAStandardKernelAndReplaysExactlyWhatItMeasured) {
  const Device device = test::dummy_device();
  const kernels::StandardKernel k = kernels::make_standard_kernel("sum-rows", {64, 256, 1}).value();
  const fs::path db = fresh_db();
  const CompileOptions options{.mode = CompileMode::Tuned, .tune_on_miss = true, .tuning = quick_options(k, db)};
  const Program program = device.compile(k.kernel, options).value();
  const CompileReport& tuned = program.compile_report();
  ASSERT_TRUE(tuned.record.has_value());
  EXPECT_GE(tuned.candidates_measured, 2u);
  EXPECT_LE(tuned.best_ns, tuned.baseline_ns);
  // The stored text, replayed through passes::optimize, is the kernel measured.
  const passes::OptSequence stored = passes::parse_sequence(tuned.record->sequence).value();
  EXPECT_EQ(ir::hash_hex(passes::optimize(k.kernel, stored, device.info()).value()), tuned.record->final_hash);
  for (const CandidateRecord& r : tuned.record->candidates) {
    if (r.final_hash.empty()) continue;
    const passes::OptSequence sequence = passes::parse_sequence(r.sequence).value();
    EXPECT_EQ(ir::hash_hex(passes::optimize(k.kernel, sequence, device.info()).value()), r.final_hash) << r.sequence;
  }
  // The winner computes the row sums.
  std::vector<kernels::HostBuffer> inputs = k.make_inputs(11);
  std::vector<kernels::HostBuffer> expected = k.make_outputs();
  k.reference(inputs, expected);
  Buffer in = device.allocate(inputs[0].bytes()).value();
  Buffer out = device.allocate(expected[0].bytes()).value();
  in.write(inputs[0].data()).value();
  const LaunchArg args[] = {LaunchArg::buffer(in), LaunchArg::buffer(out)};
  device.launch(program, args).value().wait().value();
  kernels::HostBuffer actual(expected[0].dtype(), expected[0].size());
  out.read(actual.data()).value();
  EXPECT_LE(kernels::compare(actual, expected[0]), k.tolerance);

  const Program again = device.compile(k.kernel, options).value();
  EXPECT_TRUE(again.compile_report().from_database);
  EXPECT_EQ(again.compile_report().candidates_measured, 0u);
  EXPECT_EQ(again.compile_report().kernel, tuned.kernel);
}

// The recipes: on a GPU-shaped device the float4 elementwise recipe applies
// to exp-chain, survives the pool's removals and is among the first
// candidates measured (it needs four steps in an order the cost model alone
// does not favour); on a device without LOCAL threads it does not apply.
TEST(DefaultSpace, ARecipeThatAppliesIsMeasuredEarly) {
  const SearchSpace& space = default_search_space();
  ASSERT_FALSE(space.recipes.empty());
  const kernels::StandardKernel k = kernels::make_standard_kernel("exp-chain", {1, 1 << 20, 1}).value();
  const std::string recipe = passes::to_string(space.recipes.front());
  AutotuneSettings settings;
  settings.n_total_opts = 30;
  settings.n_removed_per_step = 4;

  const DeviceInfo gpu = *passes::device_preset("preset:gpu");
  const SearchResult search = tournament_search(k.kernel, gpu, space, settings, [] { return false; });
  const std::vector<SearchCandidate> order = measurement_order(search, 24);
  const auto at = std::find_if(order.begin(), order.end(),
                               [&](const SearchCandidate& c) { return passes::to_string(c.sequence) == recipe; });
  ASSERT_NE(at, order.end()) << recipe;
  EXPECT_TRUE(at->recipe);
  EXPECT_LT(at - order.begin(), 4);
  // What was searched is what the lowering gives.
  Result<ir::Kernel> lowered = space.lower(k.kernel, at->sequence, gpu);
  ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();

  const DeviceInfo cpu = *passes::device_preset("preset:cpu");
  const SearchResult on_cpu = tournament_search(k.kernel, cpu, space, settings, [] { return false; });
  for (const SearchCandidate& c : on_cpu.candidates) EXPECT_NE(passes::to_string(c.sequence), recipe);
}

// The row kernels' recipes (docs/passes.md, "Row kernels"): on a CPU-shaped
// device softmax, layernorm and rmsnorm get vector lane partials, on a
// GPU-shaped one the row split across the group with each thread's share
// cached (row_cache); either is among the first candidates measured.
TEST(DefaultSpace, RowKernelRecipesAreMeasuredEarly) {
  const std::pair<const char*, const char*> wanted[] = {{"preset:cpu", "lane_reduce"}, {"preset:gpu", "row_cache"}};
  for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"})
    for (const auto& [preset, step] : wanted) {
      SCOPED_TRACE(std::string(name) + " on " + preset);
      const kernels::StandardKernel k = kernels::make_standard_kernel(name, {4, 4096, 1}).value();
      passes::OptSequence found;
      const long at = first_recipe_holding(k, *passes::device_preset(preset), {step}, found, 24);
      ASSERT_GE(at, 0);
      EXPECT_LT(at, 8) << passes::to_string(found);
    }
}

// The MMA recipes: on a GPU that claims the MMA op and its f16 feature, an
// f16 matmul's candidates include mma_tile's and mma_staged's recipes early,
// and they lower; on one that does not claim it, they never appear.
TEST(DefaultSpace, MmaRecipeIsProposedForF16MatmulOnMmaGpus) {
  const SearchSpace& space = default_search_space();
  const kernels::StandardKernel k = kernels::make_standard_kernel("matmul", {64, 64, 64}, ir::DType::F16).value();
  AutotuneSettings settings;
  // A small search: the recipes join before any step; every seed and step
  // lowers a 64^3 matmul (the MMA lowering is large), seconds each here.
  settings.n_seeds = 16;
  settings.n_total_opts = 4;
  settings.n_removed_per_step = 4;
  DeviceInfo gpu = *passes::device_preset("preset:gpu");
  const SearchResult without = tournament_search(k.kernel, gpu, space, settings, [] { return false; });
  for (const SearchCandidate& c : without.candidates)
    EXPECT_EQ(passes::to_string(c.sequence).find("mma_"), std::string::npos) << passes::to_string(c.sequence);
  gpu.op_kind_dtypes[KILN_OP_MMA] |= 1u << KILN_DTYPE_F32;
  gpu.features[KILN_FEATURE_WORD(KILN_FEATURE_MMA_M16N8K16_F16)] |= KILN_FEATURE_MASK(KILN_FEATURE_MMA_M16N8K16_F16);
  gpu.vector_width_mask |= 1u << 8;
  const SearchResult search = tournament_search(k.kernel, gpu, space, settings, [] { return false; });
  const std::vector<SearchCandidate> order = measurement_order(search, 24);
  for (std::string_view recipe : {"mma_tile(warps=4,tm=2,tn=4)", "mma_staged(bm=128,bn=128,bk=64,wm=2,wn=2,stages=1)"}) {
    SCOPED_TRACE(recipe);
    const auto at = std::find_if(order.begin(), order.end(), [&](const SearchCandidate& c) {
      return c.recipe && passes::to_string(c.sequence) == recipe;
    });
    ASSERT_NE(at, order.end());
    EXPECT_LT(at - order.begin(), 8);
    Result<ir::Kernel> lowered = space.lower(k.kernel, at->sequence, gpu);
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    EXPECT_NE(ir::print(*lowered).find("mma m16n8k16 f16"), std::string::npos);
  }
}

// Exact f32 matrix products on GPUs (simt_staged, docs/passes.md): the
// warp-tiled recipes are measured among the first, and lower to kernels of
// FMAs on 16-byte LOCAL reads (no MMA: f32 stays f32).
TEST(DefaultSpace, SimtRecipesAreMeasuredEarlyForF32MatmulOnGpus) {
  const SearchSpace& space = default_search_space();
  const kernels::StandardKernel k = kernels::make_standard_kernel("matmul", {256, 256, 256}).value();
  AutotuneSettings settings;
  settings.n_seeds = 16;
  settings.n_total_opts = 4;
  settings.n_removed_per_step = 4;
  const DeviceInfo gpu = *passes::device_preset("preset:gpu");
  const SearchResult search = tournament_search(k.kernel, gpu, space, settings, [] { return false; });
  const std::vector<SearchCandidate> order = measurement_order(search, 24);
  for (std::string_view recipe : {"simt_staged(bm=128,bn=128,bk=8,wm=2,wn=2,tm=16,tn=8)", "simt_staged(bm=128,bn=128,bk=16,wm=2,wn=2,tm=8,tn=16)",
                                  "simt_staged(bm=128,bn=64,bk=8,wm=4,wn=1,tm=8,tn=8)", "simt_staged(bm=64,bn=64,bk=16,wm=2,wn=2,tm=8,tn=4)"}) {
    SCOPED_TRACE(recipe);
    const auto at = std::find_if(order.begin(), order.end(), [&](const SearchCandidate& c) {
      return c.recipe && passes::to_string(c.sequence) == recipe;
    });
    std::string listed;
    for (const SearchCandidate& c : order) listed += (c.recipe ? "R " : "  ") + passes::to_string(c.sequence) + "\n";
    ASSERT_NE(at, order.end()) << listed;
    EXPECT_LT(at - order.begin(), 10) << listed;
    Result<ir::Kernel> lowered = space.lower(k.kernel, at->sequence, gpu);
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    const std::string printed = ir::print(*lowered);
    EXPECT_NE(printed.find("mad f32x4"), std::string::npos);
    EXPECT_EQ(printed.find("mma "), std::string::npos);
  }
}

// The packed CPU matrix product (pack_tile, docs/passes.md): the default
// space's recipes lower an f32 matmul on a CPU-shaped device to a kernel
// with its packed LOCAL blocks (recipes join every search before its first
// step: ARecipeThatAppliesIsMeasuredEarly above), and fail on a GPU-shaped device
// (threads per group), whose search never proposes them.
TEST(DefaultSpace, PackTileRecipesLowerOnCpusOnly) {
  const SearchSpace& space = default_search_space();
  const kernels::StandardKernel k = kernels::make_standard_kernel("matmul", {64, 64, 64}).value();
  const DeviceInfo cpu = *passes::device_preset("preset:cpu");
  const DeviceInfo gpu = *passes::device_preset("preset:gpu");
  int found = 0;
  for (const passes::OptSequence& recipe : space.recipes) {
    const std::string text = passes::to_string(recipe);
    // The bf16 form (dot=1) takes bf16 inputs on a device with dot_bf16:
    // tests/passes/opt_pack_tile_dot_test.cpp.
    if (text.find("pack_tile") == std::string::npos || text.find("dot=1") != std::string::npos) continue;
    SCOPED_TRACE(text);
    ++found;
    Result<ir::Kernel> lowered = space.lower(k.kernel, recipe, cpu);
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    EXPECT_NE(ir::print(*lowered).find("storage local f32"), std::string::npos);
    EXPECT_FALSE(space.lower(k.kernel, recipe, gpu).ok());
  }
  EXPECT_GE(found, 3);
}

// 16-bit norms at n = 50257 on an H200-shaped GPU: the row whole in registers
// in blocks of 8 with the statistics' warps first (search space 31) is among
// the first candidates a tuning measures, and lowers. The H200 took a register
// row for layernorm bf16 (0.91x of an add) where f16 kept the LOCAL row (0.89x);
// this form ran 0.94-0.96x of the add on an H100 (docs/passes.md, subgroup_first).
TEST(DefaultSpace, SixteenBitNormRowsInRegistersWithWarpsFirstAreMeasuredEarly) {
  // One kernel in each 16-bit type (each search takes about 3 s here).
  for (const auto& [name, dtype] :
       {std::pair{"layernorm-rows", ir::DType::F16}, std::pair{"rmsnorm-rows", ir::DType::BF16}}) {
    SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)));
    const kernels::StandardKernel k = kernels::make_standard_kernel(name, {.m = 5342, .n = 50257}, dtype).value();
    passes::OptSequence found;
    const long at = first_recipe_holding(k, passes::h200_preset(),
                                         {"subgroup_first=1", "row_cache(loop=0)", "vectorize(lanes=8)"}, found);
    ASSERT_GE(at, 0);
    EXPECT_LT(at, 16) << passes::to_string(found);
  }
}

// The copied LOCAL rows at n = 50257 with the reductions' warps first
// (subgroup_first: softmax's two reductions one barrier each instead of four)
// are measured early beside the tree's form, which stays the untuned pick.
TEST(DefaultSpace, LocalRowsWithWarpsFirstAreMeasuredEarly) {
  const kernels::StandardKernel k =
      kernels::make_standard_kernel("softmax-rows", {.m = 5342, .n = 50257}, ir::DType::F16).value();
  passes::OptSequence found;
  const long at = first_recipe_holding(k, passes::h200_preset(),
                                       {"subgroup_first=1", "row_cache(loop=0,local=1)", "async_copies()"}, found);
  ASSERT_GE(at, 0);
  EXPECT_LT(at, 16) << passes::to_string(found);
  const Result<HeuristicSchedule> untuned = heuristic_schedule(k.kernel, passes::h200_preset());
  ASSERT_TRUE(untuned.ok()) << untuned.error().to_string();
  EXPECT_NE(passes::to_string(untuned->sequence).find("async_copies()"), std::string::npos);
  EXPECT_EQ(passes::to_string(untuned->sequence).find("subgroup_first"), std::string::npos);
}
