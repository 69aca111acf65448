// lane_reduce: a reduction loop keeps `lanes` interleaved partial
// accumulators (one vector accumulator after vectorize), a tree after it.
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"

#include <gmock/gmock.h>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& lane_reduce() { return *find_optimization("lane_reduce"); }

}  // namespace

TEST(LaneReduce, RowKernelsKeepTheirResults) {
  // Counts that lanes divide and ones that leave a remainder, every
  // reduction op of the row kernels, the three float dtypes.
  for (std::string_view name : {"sum-rows", "max-rows", "softmax-rows", "layernorm-rows", "rmsnorm-rows"})
    for (std::int64_t n : {64, 37, 5})
      for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16}) {
        const kernels::StandardKernel k = standard(name, {.m = 3, .n = n}, dtype);
        ir::Kernel current = normalize(k.kernel, cpu_preset());
        // Later loops first: the numbers of the earlier ones stay.
        const std::string steps = name == "softmax-rows" ? "lane_reduce(loop=1,lanes=4); lane_reduce(loop=0,lanes=8)"
                                                         : "lane_reduce(loop=0,lanes=4)";
        Result<ir::Kernel> out = optimize(current, parse_sequence(steps).value(), cpu_preset());
        ASSERT_TRUE(out.ok()) << name << " n=" << n << ": " << out.error().to_string();
        EXPECT_EQ(compare_standard(k, *out, 17, 4), "") << name << " n=" << n << " " << ir::dtype_name(dtype);
      }
  const kernels::StandardKernel ints = standard("sum-rows", {.m = 2, .n = 45}, ir::DType::I32);
  EXPECT_EQ(compare_standard(ints, applied(ints.kernel, "lane_reduce(loop=0,lanes=16)", cpu_preset()), 3, 0), "");
}

TEST(LaneReduce, VectorizeMakesOneVectorAccumulator) {
  const kernels::StandardKernel k = standard("sum-rows", {.m = 2, .n = 64});
  Result<ir::Kernel> out = optimize(k.kernel, parse_sequence("lane_reduce(loop=0,lanes=16); vectorize(lanes=16)").value(),
                                    cpu_preset());
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  const std::string text = ir::print(*out);
  EXPECT_THAT(text, HasSubstr("storage register f32[16]"));
  EXPECT_THAT(text, HasSubstr("= load f32x16 %0["));
  EXPECT_THAT(text, HasSubstr("= add f32x16"));
  EXPECT_EQ(compare_standard(k, *out, 5, 4), "");
}

TEST(LaneReduce, DynamicCounts) {
  const ir::Kernel dynamic = parse_valid(R"(
%x = param 0 global f32[?]
%y = param 1 global_mut f32[?]
%rows = param 2 var i64
%n = param 3 var i64
%r = index group 0 %rows
%start = mul %r, %n
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%j = loop %n
  %xi = add %start, %j
  %v = load f32 %x[%xi]
  %s = load f32 %acc[%at]
  %t = add %s, %v
  store %acc[%at], %t
endloop
%sum = load f32 %acc[%at]
store %y[%r], %sum
)");
  EXPECT_THAT(config_texts(lane_reduce(), dynamic, cpu_preset()), ::testing::Contains("lane_reduce(loop=0,lanes=16)"));
  const ir::Kernel after = applied(dynamic, "lane_reduce(loop=0,lanes=8)", cpu_preset());
  for (const auto& [rows, n] : {std::pair{3, 100}, {2, 8}, {1, 3}, {2, 0}}) {
    std::vector<kernels::ArgSpec> args = {
        {"x", kernels::ArgRole::Input, ir::DType::F32, static_cast<std::uint64_t>(std::max(1, rows * n))},
        {"y", kernels::ArgRole::Output, ir::DType::F32, static_cast<std::uint64_t>(rows)}};
    for (std::int64_t v : {rows, n})
      args.push_back({"v", kernels::ArgRole::Scalar, ir::DType::I64, 1, ir::encode_int(ir::DType::I64, v)});
    EXPECT_EQ(compare_outcomes(run_on_interpreter(dynamic, args, 3), run_on_interpreter(after, args, 3), 1e-5), "")
        << rows << " x " << n;
  }
}

TEST(LaneReduce, ConfigsAndRefusals) {
  const kernels::StandardKernel softmax = standard("softmax-rows", {.m = 2, .n = 100});
  const std::vector<std::string> configs = config_texts(lane_reduce(), softmax.kernel, cpu_preset());
  EXPECT_THAT(configs, ::testing::Contains("lane_reduce(loop=0,lanes=16)"));
  EXPECT_THAT(configs, ::testing::Contains("lane_reduce(loop=1,lanes=16)"));
  EXPECT_THAT(configs, ::testing::Not(::testing::Contains(HasSubstr("loop=2"))));  // the writing loop
  EXPECT_THAT(step_error_message(softmax.kernel, "lane_reduce(loop=2,lanes=4)", cpu_preset()),
              HasSubstr("does not accumulate"));
  EXPECT_THAT(step_error_message(softmax.kernel, "lane_reduce(loop=0,lanes=1)", cpu_preset()), HasSubstr("lanes must be"));
  EXPECT_THAT(step_error_message(softmax.kernel, "lane_reduce(loop=0,lanes=4,tree=2)", cpu_preset()), HasSubstr("tree"));
  EXPECT_THAT(step_error_message(softmax.kernel, "lane_reduce(loop=0)", cpu_preset()), HasSubstr("lanes"));
  EXPECT_THAT(step_error_message(softmax.kernel, "lane_reduce(loop=7,lanes=4)", cpu_preset()), HasSubstr("no LOOP number 7"));
  // Every config applies and keeps the results, on every preset.
  const kernels::StandardKernel small = standard("layernorm-rows", {.m = 2, .n = 40});
  for (const DeviceInfo& device : {cpu_preset(), gpu_preset(), small_preset()})
    for (const std::string& text : config_texts(lane_reduce(), small.kernel, device))
      EXPECT_EQ(compare_standard(small, applied(small.kernel, text, device), 29, 4), "") << text;
}
