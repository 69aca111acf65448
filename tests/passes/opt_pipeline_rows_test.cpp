// pipeline_rows(loop): a LOOP of rows whose body is D stage LOOPs of one
// count becomes a prologue, a steady LOOP and an epilogue in which each
// iteration runs stage s of row t - s, the stages' LOOPs fused; storage that
// crosses stages inside their LOOPs gets one copy per row in flight. The
// results are exactly the unpipelined kernel's; loops where rows could meet
// (a buffer both read and written, storage read before it is written) are
// refused, values from memory that cross stages are carried.
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"
#include "kiln/passes/pipeline.hpp"

#include <gmock/gmock.h>

#include <algorithm>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::Contains;
using ::testing::HasSubstr;

namespace {

const Optimization& pipeline_rows() { return *find_optimization("pipeline_rows"); }

// The CPU recipes with `rows` rows a work-item (loop 0), up to the pipelining.
std::string softmax_recipe(int rows) {
  return "coarsen(axis=0,factor=" + std::to_string(rows) +
         ",mode=0); reciprocal_divide(); split_loop(loop=3,factor=16); unroll(loop=4,factor=0); "
         "lane_reduce(loop=2,lanes=16); lane_reduce(loop=1,lanes=16); row_cache(loop=2); vectorize(lanes=16); "
         "prefetch_rows(loop=1,distance=1)";
}
std::string norm_recipe(int rows) {
  return "coarsen(axis=0,factor=" + std::to_string(rows) +
         ",mode=0); split_loop(loop=2,factor=16); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
         "vectorize(lanes=16); prefetch_rows(loop=1,distance=1)";
}

ir::Kernel optimized(const ir::Kernel& kernel, const std::string& sequence) {
  Result<ir::Kernel> out = optimize(kernel, parse_sequence(sequence).value(), cpu_preset());
  EXPECT_TRUE(out.ok()) << sequence << ": " << (out.ok() ? "" : out.error().to_string());
  return out.ok() ? std::move(out).value() : kernel;
}

struct Shape {
  std::vector<std::int64_t> loop_counts;  // every LOOP's constant count, in order (-1: dynamic)
  std::vector<std::uint64_t> storage;     // every STORAGE's elements, in order
};
Shape shape_of(const ir::Kernel& k) {
  Shape shape;
  for (ir::ValueId id = 0; id < k.size(); ++id) {
    if (k[id].kind == ir::OpKind::Storage) shape.storage.push_back(k[id].imm);
    if (k[id].kind != ir::OpKind::Loop) continue;
    const ir::Op& count = k[k[id].src[0]];
    shape.loop_counts.push_back(count.kind == ir::OpKind::Const ? static_cast<std::int64_t>(count.imm) : -1);
  }
  return shape;
}

}  // namespace

TEST(PipelineRows, RunsEachRowsStagesInFusedLoopsWithTheSameResults) {
  // softmax: three stages (max, exponentials, writing), 5 rows a work-item;
  // the norms: two (statistics, writing), 4 rows.
  for (const ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16})
    for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"}) {
      const bool softmax = std::string(name) == "softmax-rows";
      SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)));
      const int rows = softmax ? 5 : 4;
      const kernels::StandardKernel k = standard(name, {.m = 2 * rows, .n = 64}, dtype);
      const ir::Kernel before = optimized(k.kernel, softmax ? softmax_recipe(rows) : norm_recipe(rows));
      EXPECT_THAT(config_texts(pipeline_rows(), before, cpu_preset()), Contains("pipeline_rows(loop=0)"));
      const ir::Kernel after = applied(before, "pipeline_rows(loop=0)", cpu_preset());
      // Loops: the prologue's D - 1 fused loops, the steady loop of rows - D + 1
      // iterations holding one, the epilogue's D - 1; each fused loop runs the 4
      // vectors of a row of 64.
      const std::int64_t d = softmax ? 3 : 2;
      std::vector<std::int64_t> counts(static_cast<std::size_t>(2 * d), 4);
      counts[static_cast<std::size_t>(d - 1)] = rows - d + 1;
      const Shape shape = shape_of(after);
      EXPECT_EQ(shape.loop_counts, counts) << ir::print(after);
      if (softmax) {
        // The cached exponentials (written by stage 1's loop, read by stage 2's)
        // get a copy per row in flight between the two; the accumulators one
        // each (constant indices).
        const Shape was = shape_of(before);
        ASSERT_EQ(was.storage.size(), shape.storage.size());
        EXPECT_EQ(shape.storage[0], 2 * was.storage[0]) << ir::print(after);
        for (std::size_t i = 1; i < shape.storage.size(); ++i) EXPECT_EQ(shape.storage[i], was.storage[i]);
      }
      // Each row's ops in their own order: exactly the same results, and the
      // unoptimized kernel's within its tolerance.
      EXPECT_EQ(compare_runs(before, after, {}, 0), "");
      EXPECT_EQ(compare_standard(k, after, 11), "");
    }
}

TEST(PipelineRows, AsManyRowsAsStagesLeaveOneSteadyIteration) {
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 6, .n = 32});
  const ir::Kernel before = optimized(k.kernel, softmax_recipe(3));
  const ir::Kernel after = applied(before, "pipeline_rows(loop=0)", cpu_preset());
  EXPECT_EQ(shape_of(after).loop_counts, (std::vector<std::int64_t>{2, 2, 1, 2, 2, 2})) << ir::print(after);
  EXPECT_EQ(compare_runs(before, after, {}, 0), "");
  // Fewer rows than stages: refused.
  const ir::Kernel two = optimized(standard("softmax-rows", {.m = 6, .n = 32}).kernel, softmax_recipe(2));
  EXPECT_THAT(step_error_message(two, "pipeline_rows(loop=0)", cpu_preset()), HasSubstr("fewer iterations than it has stages"));
}

TEST(PipelineRows, StagesAreTheLoopsOfTheCountMostShareOthersStayInTheirStage) {
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 8, .n = 64});
  // The max in two accumulators runs half the others' count (2 against 4): it
  // stays an op of the exponentials' stage, and two stages remain.
  std::string two_accumulators = softmax_recipe(4);
  two_accumulators.replace(two_accumulators.find("loop=1,lanes=16"), 15, "loop=1,lanes=32");
  const ir::Kernel uneven = optimized(k.kernel, two_accumulators);
  const ir::Kernel after = applied(uneven, "pipeline_rows(loop=0)", cpu_preset());
  EXPECT_EQ(shape_of(after).loop_counts, (std::vector<std::int64_t>{2, 4, 3, 2, 4, 4})) << ir::print(after);
  EXPECT_EQ(compare_runs(uneven, after, {}, 0), "");
  // Rows of odd length on split_aligned's flat blocks (n = 101: loose ends of
  // 21, longer than the 5 blocks, but only the blocks come in every stage):
  // the blocks are the stages, the loose ends stay with them; the writing
  // stage's loose ends use the row's maximum, which the exponentials' stage
  // computed from memory: carried in a slot per row in flight.
  const kernels::StandardKernel odd = standard("softmax-rows", {.m = 8, .n = 101}, ir::DType::F16);
  const ir::Kernel blocks = optimized(
      odd.kernel,
      "coarsen(axis=0,factor=4,mode=0); reciprocal_divide(); split_aligned(loop=3,factor=16,flat=1); "
      "split_aligned(loop=2,factor=16,flat=1); split_aligned(loop=1,factor=16,flat=1); split_loop(loop=6,factor=16); "
      "unroll(loop=7,factor=0); lane_reduce(loop=4,lanes=16); lane_reduce(loop=2,lanes=16); row_cache(loop=4); "
      "vectorize(lanes=16)");
  const ir::Kernel pipelined = applied(blocks, "pipeline_rows(loop=0)", cpu_preset());
  // The three stages' blocks fused: a loop of 5 in each of the prologue's two
  // iterations, the steady loop's and the epilogue's two.
  const auto counts = shape_of(pipelined).loop_counts;
  EXPECT_EQ(std::count(counts.begin(), counts.end(), 5), 5) << ir::print(pipelined);
  EXPECT_EQ(compare_runs(blocks, pipelined, {}, 0), "");
  EXPECT_EQ(compare_standard(odd, pipelined, 13), "");
  // A stage LOOP itself holds no stage loops; nor is there a loop 99.
  const ir::Kernel even = optimized(k.kernel, softmax_recipe(4));
  EXPECT_THAT(step_error_message(even, "pipeline_rows(loop=1)", cpu_preset()), HasSubstr("no two LOOPs of one constant count"));
  EXPECT_THAT(step_error_message(even, "pipeline_rows(loop=99)", cpu_preset()), HasSubstr("no LOOP number 99"));
  // Not offered where a group's threads share a row.
  EXPECT_TRUE(config_texts(pipeline_rows(), even, gpu_preset()).empty());
}

TEST(PipelineRows, KeepsTheCopiesWithinTheDevicesRegisterBudget) {
  // Rows of 16384 f32: the cached exponentials take 64 KB, two copies 128 KB,
  // past a device that keeps 96 KB a thread, within one that keeps 512 KB (c:0).
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 8, .n = 16384});
  DeviceInfo small = cpu_preset(), large = cpu_preset();
  small.max_register_bytes = 96 * 1024;
  large.max_register_bytes = 512 * 1024;
  Result<ir::Kernel> before = optimize(k.kernel, parse_sequence(softmax_recipe(4)).value(), large);
  ASSERT_TRUE(before.ok()) << before.error().to_string();
  EXPECT_THAT(step_error_message(*before, "pipeline_rows(loop=0)", small), HasSubstr("REGISTER bytes"));
  EXPECT_TRUE(config_texts(pipeline_rows(), *before, small).empty());
  EXPECT_THAT(config_texts(pipeline_rows(), *before, large), Contains("pipeline_rows(loop=0)"));
}

TEST(PipelineRows, RefusesRowsThatMeetThroughMemory) {
  // In place: each row reads the buffer it writes; the pipeline would read
  // row r + 1 before row r's writes (harmless here, refused in general).
  constexpr std::string_view kInPlace = R"(
%0 = param 0 global_mut f32[32]
%1 = const i64 4
%2 = const i64 8
%3 = const i64 0
%4 = storage register f32[1]
%5 = loop %1
  %6 = mul i64 %5, %2
  %7 = const f32 0
  store f32 %4[%3], %7
  %9 = loop %2
    %10 = add i64 %6, %9
    %11 = load f32 %0[%10]
    %12 = load f32 %4[%3]
    %13 = add f32 %12, %11
    store f32 %4[%3], %13
  endloop %9
  %16 = load f32 %4[%3]
  %17 = loop %2
    %18 = add i64 %6, %17
    %19 = load f32 %0[%18]
    %20 = sub f32 %19, %16
    store f32 %0[%18], %20
  endloop %17
endloop %5
)";
  EXPECT_THAT(step_error_message(parse_valid(kInPlace), "pipeline_rows(loop=0)", cpu_preset()),
              HasSubstr("both read and written"));
  // A running total carried from row to row (read before it is written).
  constexpr std::string_view kCarried = R"(
%0 = param 0 global f32[32]
%1 = param 1 global_mut f32[32]
%2 = const i64 4
%3 = const i64 8
%4 = const i64 0
%5 = storage register f32[1]
%6 = const f32 0
store f32 %5[%4], %6
%8 = loop %2
  %9 = mul i64 %8, %3
  %10 = loop %3
    %11 = add i64 %9, %10
    %12 = load f32 %0[%11]
    %13 = load f32 %5[%4]
    %14 = add f32 %13, %12
    store f32 %5[%4], %14
  endloop %10
  %17 = load f32 %5[%4]
  %18 = loop %3
    %19 = add i64 %9, %18
    store f32 %1[%19], %17
  endloop %18
endloop %8
)";
  EXPECT_THAT(step_error_message(parse_valid(kCarried), "pipeline_rows(loop=0)", cpu_preset()),
              HasSubstr("read before it is written"));
}

TEST(PipelineRows, RecomputesIndexArithmeticAndCarriesValuesFromMemory) {
  // Stage 1's loop uses the row's base offset %8 (index arithmetic in stage 0:
  // recomputed) and %9, which stage 0 loads before its loop: carried, in a
  // slot per row in flight (two: the stages are one apart).
  constexpr std::string_view kFromMemory = R"(
%0 = param 0 global f32[32]
%1 = param 1 global_mut f32[32]
%2 = const i64 4
%3 = const i64 8
%4 = const i64 0
%5 = storage register f32[1]
%6 = const f32 0
%7 = loop %2
  %8 = mul i64 %7, %3
  %9 = load f32 %0[%8]
  store f32 %5[%4], %6
  %11 = loop %3
    %12 = add i64 %8, %11
    %13 = load f32 %0[%12]
    %14 = load f32 %5[%4]
    %15 = add f32 %14, %13
    store f32 %5[%4], %15
  endloop %11
  %18 = load f32 %5[%4]
  %19 = loop %3
    %20 = add i64 %8, %19
    %21 = load f32 %0[%20]
    %22 = mul f32 %21, %9
    %23 = mul f32 %22, %18
    store f32 %1[%20], %23
  endloop %19
endloop %7
)";
  const ir::Kernel from_memory = parse_valid(kFromMemory);
  const ir::Kernel carried = applied(from_memory, "pipeline_rows(loop=0)", cpu_preset());
  EXPECT_EQ(shape_of(carried).storage, (std::vector<std::uint64_t>{1, 2})) << ir::print(carried);
  EXPECT_EQ(compare_runs(from_memory, carried, {}, 0), "");
}

TEST(PipelineRows, RowsNoFactorDividesArePipelinedThroughCoarsensRepeatedRow) {
  // 10 rows, four a work-item: coarsen mode 2 makes three work-items and rows
  // min(4 g + j, 9), so the third runs row 9 again in place of rows 10 and 11.
  // No guard is left around the rows: every work-item is pipelined, and the
  // results are exactly the coarsened kernel's.
  for (const ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16})
    for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"}) {
      const bool softmax = std::string(name) == "softmax-rows";
      SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)));
      const kernels::StandardKernel k = standard(name, {.m = 10, .n = 64}, dtype);
      std::string recipe = softmax ? softmax_recipe(4) : norm_recipe(4);
      recipe.replace(recipe.find("mode=0"), 6, "mode=2");
      const ir::Kernel before = optimized(k.kernel, recipe);
      EXPECT_THAT(config_texts(pipeline_rows(), before, cpu_preset()), Contains("pipeline_rows(loop=0)"));
      const ir::Kernel after = applied(before, "pipeline_rows(loop=0)", cpu_preset());
      const std::int64_t d = softmax ? 3 : 2;
      std::vector<std::int64_t> counts(static_cast<std::size_t>(2 * d), 4);
      counts[static_cast<std::size_t>(d - 1)] = 4 - d + 1;
      EXPECT_EQ(shape_of(after).loop_counts, counts) << ir::print(after);
      EXPECT_EQ(compare_runs(before, after, {}, 0), "");
      EXPECT_EQ(compare_standard(k, after, 17), "");
    }
}
