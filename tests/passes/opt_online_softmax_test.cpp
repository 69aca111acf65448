// online_softmax: softmax's max loop and sum-of-exp loop fused into one
// loop with a running maximum and a rescaled running sum.
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"

#include <gmock/gmock.h>

#include <cmath>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& online_softmax() { return *find_optimization("online_softmax"); }

int loops(const ir::Kernel& kernel) {
  int n = 0;
  for (const ir::Op& op : kernel.ops) n += op.kind == ir::OpKind::Loop;
  return n;
}

// Runs a kernel of one input and one output on the interpreter with `input`.
kernels::HostBuffer run_with(const ir::Kernel& kernel, const kernels::StandardKernel& k, kernels::HostBuffer input) {
  std::vector<kernels::HostBuffer> outputs = kernels::make_output_buffers(k.args);
  auto in = input.data();
  auto out = outputs[0].data();
  const std::vector<kiln_arg> args = {sdk::host_buffer_arg(in.data(), in.size()), sdk::host_buffer_arg(out.data(), out.size())};
  const std::vector<kiln_op> wire = kernel.to_wire();
  sdk::InterpretedProgram(wire).run(args);
  return outputs[0];
}

}  // namespace

TEST(OnlineSoftmax, FusesTheTwoStatisticsLoops) {
  for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16})
    for (std::int64_t n : {7, 100, 1000}) {
      const kernels::StandardKernel k = standard("softmax-rows", {.m = 3, .n = n}, dtype);
      const ir::Kernel normalized = normalize(k.kernel, cpu_preset());
      if (n > 1) {  // n = 1: normalize removed the unit loops
        EXPECT_THAT(config_texts(online_softmax(), normalized, cpu_preset()), ::testing::ElementsAre("online_softmax(loop=0)"));
      }
      if (n == 1) continue;
      Result<ir::Kernel> fused = optimize(k.kernel, parse_sequence("online_softmax(loop=0)").value(), cpu_preset());
      ASSERT_TRUE(fused.ok()) << fused.error().to_string();
      if (n > 1) {
        EXPECT_EQ(loops(*fused), 2) << ir::print(*fused);  // statistics, write
      }
      EXPECT_EQ(compare_standard(k, *fused, 23, 4), "") << ir::dtype_name(dtype) << " n=" << n;
    }
}

TEST(OnlineSoftmax, MaskedRowsStayDefined) {
  // -inf before any finite value (a masked prefix) leaves the sum at 0, as
  // the two-loop form does; the unguarded recurrence would give NaN.
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 1, .n = 4});
  const ir::Kernel fused = applied(normalize(k.kernel, cpu_preset()), "online_softmax(loop=0)", cpu_preset());
  kernels::HostBuffer input = kernels::make_input_buffers(k.args, 1)[0];
  const double values[] = {-INFINITY, -INFINITY, 0.5, -1.0};
  for (std::size_t i = 0; i < 4; ++i) input.set(i, values[i]);
  const kernels::HostBuffer expected = run_with(k.kernel, k, input), actual = run_with(fused, k, input);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_FALSE(std::isnan(actual.get(i))) << i;
    EXPECT_NEAR(actual.get(i), expected.get(i), 1e-6) << i;
  }
}

TEST(OnlineSoftmax, ComposesWithRowCacheAndLaneFreeDevices) {
  // The fused loop caches the row for the writing loop (one read in all);
  // on a GPU-shaped device the writing loop still splits across threads.
  const kernels::StandardKernel k = standard("softmax-rows", {.m = 2, .n = 64});
  for (const char* sequence : {"online_softmax(loop=0); row_cache(loop=0)",
                               "online_softmax(loop=0); split_loop(loop=1,factor=16); unroll(loop=2,factor=0); "
                               "vectorize(lanes=16)"}) {
    Result<ir::Kernel> out = optimize(k.kernel, parse_sequence(sequence).value(), cpu_preset());
    ASSERT_TRUE(out.ok()) << sequence << ": " << out.error().to_string();
    EXPECT_EQ(compare_standard(k, *out, 3, 4), "") << sequence;
  }
  Result<ir::Kernel> gpu = optimize(
      k.kernel, parse_sequence("online_softmax(loop=0); tiled_reduce(loop=1,local=32,branch=2)").value(), gpu_preset());
  ASSERT_TRUE(gpu.ok()) << gpu.error().to_string();
  EXPECT_EQ(compare_standard(k, *gpu, 3, 4), "");
}

TEST(OnlineSoftmax, Refusals) {
  const kernels::StandardKernel softmax = standard("softmax-rows", {.m = 2, .n = 10});
  const ir::Kernel k = normalize(softmax.kernel, cpu_preset());
  EXPECT_THAT(step_error_message(k, "online_softmax(loop=1)", cpu_preset()), HasSubstr("maximum"));
  EXPECT_THAT(step_error_message(k, "online_softmax(loop=3)", cpu_preset()), HasSubstr("no LOOP number 3"));
  EXPECT_THAT(step_error_message(k, "online_softmax(loop=0,lanes=4)", cpu_preset()), HasSubstr("lanes"));
  // layernorm has no maximum; max-rows no second loop.
  EXPECT_TRUE(online_softmax().configs(standard("layernorm-rows", {.m = 2, .n = 10}).kernel, cpu_preset()).empty());
  EXPECT_THAT(step_error_message(standard("max-rows", {.m = 2, .n = 10}).kernel, "online_softmax(loop=0)", cpu_preset()),
              HasSubstr("between the loops"));
  // A sum of exp(w - m) over other values than the maximum's is not softmax.
  const ir::Kernel other = parse_valid(R"(
%x = param 0 global f32[8]
%z = param 1 global f32[8]
%y = param 2 global_mut f32[1]
%n = const i64 8
%one = const i64 1
%g = index group 0 %one
%zero = const f32 0
%minus_inf = const f32 -inf
%at = const i64 0
%m = storage register f32[1]
store %m[%at], %minus_inf
%j = loop %n
  %v = load f32 %x[%j]
  %a = load f32 %m[%at]
  %b = max %a, %v
  store %m[%at], %b
endloop
%mv = load f32 %m[%at]
%s = storage register f32[1]
store %s[%at], %zero
%k = loop %n
  %w = load f32 %z[%k]
  %c = load f32 %s[%at]
  %d = sub %w, %mv
  %e = exp %d
  %f = add %c, %e
  store %s[%at], %f
endloop
%sv = load f32 %s[%at]
store %y[%at], %sv
)");
  EXPECT_THAT(step_error_message(other, "online_softmax(loop=0)", cpu_preset()), HasSubstr("other values"));
}
