// vectorize: consecutive aligned scalar accesses become vector accesses, the
// element-wise ops between them vector ops.
#include "passes/opt_perf_support.hpp"

#include <gmock/gmock.h>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;

namespace {

const Optimization& vectorize() { return *find_optimization("vectorize"); }

// Cleans up the scalar ops vectorize leaves without users (the pipeline's
// DCE does this after every step).
ir::Kernel without_dead_code(const ir::Kernel& kernel) { return find_pass("dce")->run(kernel, cpu_preset()); }

// y = exp(x) * 2 + 1, each thread doing 2 consecutive elements.
constexpr std::string_view kExpChainBy2 = R"(
%x = param 0 global f32[8]
%y = param 1 global_mut f32[8]
%four = const i64 4
%two = const i64 2
%one = const i64 1
%g = index group 0 %four
%i0 = mul %g, %two
%i1 = add %i0, %one
%f2 = const f32 2
%f1 = const f32 1
%x0 = load f32 %x[%i0]
%e0 = exp %x0
%d0 = mul %e0, %f2
%r0 = add %d0, %f1
store %y[%i0], %r0
%x1 = load f32 %x[%i1]
%e1 = exp %x1
%d1 = mul %e1, %f2
%r1 = add %d1, %f1
store %y[%i1], %r1
)";

}  // namespace

TEST(Vectorize, TurnsConsecutiveElementsIntoVectorOps) {
  const ir::Kernel before = parse_valid(kExpChainBy2);
  const ir::Kernel after = applied(before, "vectorize(lanes=2)", gpu_preset());
  // One 2-lane load at the first load, exp/mul/add on vectors (constants
  // broadcast where used), one 2-lane store at the last store.
  EXPECT_EQ(ir::print(without_dead_code(after)), ir::print(parse_valid(R"(
%x = param 0 global f32[8]
%y = param 1 global_mut f32[8]
%four = const i64 4
%two = const i64 2
%g = index group 0 %four
%i0 = mul %g, %two
%f2 = const f32 2
%f1 = const f32 1
%v = load f32x2 %x[%i0]
%e = exp %v
%f2v = broadcast f32x2 %f2
%d = mul %e, %f2v
%f1v = broadcast f32x2 %f1
%r = add %d, %f1v
store %y[%i0], %r
)")));
  EXPECT_EQ(compare_runs(before, after), "");
}

TEST(Vectorize, ExtractsLanesForScalarUsers) {
  // A running sum over 4 consecutive loads: one vector load, four extracts.
  const ir::Kernel before = parse_valid(R"(
%x = param 0 global f32[16]
%y = param 1 global_mut f32[4]
%n = const i64 4
%g = index group 0 %n
%base = mul %g, %n
%one = const i64 1
%two = const i64 2
%three = const i64 3
%i1 = add %base, %one
%i2 = add %base, %two
%i3 = add %base, %three
%a = load f32 %x[%base]
%b = load f32 %x[%i1]
%s1 = add %a, %b
%c = load f32 %x[%i2]
%s2 = add %s1, %c
%d = load f32 %x[%i3]
%s3 = add %s2, %d
store %y[%g], %s3
)");
  const ir::Kernel after = applied(before, "vectorize(lanes=4)", gpu_preset());
  EXPECT_EQ(ir::print(without_dead_code(after)), ir::print(parse_valid(R"(
%x = param 0 global f32[16]
%y = param 1 global_mut f32[4]
%n = const i64 4
%g = index group 0 %n
%base = mul %g, %n
%v = load f32x4 %x[%base]
%a = extract %v[0]
%b = extract %v[1]
%c = extract %v[2]
%d = extract %v[3]
%s1 = add %a, %b
%s2 = add %s1, %c
%s3 = add %s2, %d
store %y[%g], %s3
)")));
  EXPECT_EQ(compare_runs(before, after), "");
}

TEST(Vectorize, RegisterBlockedMatmulKeepsItsResults) {
  const kernels::StandardKernel k = standard("matmul", {.m = 8, .n = 64, .k = 7});
  for (std::string_view tile : {"register_block(loop=0,tm=4,tn=16,unroll=1)", "register_block(loop=0,tm=2,tn=32,unroll=7)"}) {
    const ir::Kernel blocked = applied(k.kernel, tile, cpu_preset());
    for (std::string_view lanes : {"vectorize(lanes=16)", "vectorize(lanes=8)", "vectorize(lanes=4)"}) {
      SCOPED_TRACE(std::string(tile) + "; " + std::string(lanes));
      const ir::Kernel vectorized = applied(blocked, lanes, cpu_preset());
      EXPECT_EQ(compare_standard(k, vectorized, 3), "");
      // The accumulator tile, the loads of b and the stores of c are vectors.
      const std::string text = ir::print(vectorized);
      EXPECT_THAT(text, HasSubstr("= load f32x" + std::string(lanes.substr(16, lanes.size() - 17)) + " %1["));
      EXPECT_THAT(text, HasSubstr("store f32x" + std::string(lanes.substr(16, lanes.size() - 17)) + " %2["));
    }
  }
}

TEST(Vectorize, StandardKernelsKeepTheirResults) {
  // Hand-coarsened elementwise kernels are covered above; here every
  // standard kernel at an odd size, vectorized as it is (nothing or little
  // to group) and the results unchanged.
  for (std::string_view name : kernels::standard_kernel_names()) {
    const kernels::StandardKernel k = standard(name, {.m = 3, .n = 8, .k = 5});
    for (const OptStep& step : vectorize().configs(k.kernel, cpu_preset())) {
      SCOPED_TRACE(std::string(name) + " " + step.to_string());
      EXPECT_EQ(compare_standard(k, applied(k.kernel, step.to_string(), cpu_preset()), 5), "");
    }
  }
}

TEST(Vectorize, ConfigsAreTheWidthsThatFindGroups) {
  const ir::Kernel k = parse_valid(kExpChainBy2);
  EXPECT_THAT(config_texts(vectorize(), k, gpu_preset()), ::testing::ElementsAre("vectorize(lanes=2)"));
  EXPECT_THAT(config_texts(vectorize(), k, small_preset()), ::testing::ElementsAre("vectorize(lanes=2)"));
  // Pairs only: no group of 4.
  EXPECT_THAT(config_texts(vectorize(), k, cpu_preset()), ::testing::ElementsAre("vectorize(lanes=2)"));
  const kernels::StandardKernel blocked_source = standard("matmul", {.m = 8, .n = 64, .k = 8});
  const ir::Kernel blocked = applied(blocked_source.kernel, "register_block(loop=0,tm=2,tn=16)", cpu_preset());
  EXPECT_THAT(config_texts(vectorize(), blocked, cpu_preset()),
              ::testing::ElementsAre("vectorize(lanes=16)", "vectorize(lanes=8)", "vectorize(lanes=4)", "vectorize(lanes=2)"));
  // A dynamic length does not matter: indices stay affine in the group index.
  const kernels::StandardKernel dynamic = standard("add-dyn", {.n = 10});
  EXPECT_TRUE(vectorize().configs(dynamic.kernel, cpu_preset()).empty());
}

TEST(Vectorize, RefusesWhatItCannotProve) {
  // Misaligned: elements 2g+1 and 2g+2.
  const ir::Kernel shifted = parse_valid(R"(
%x = param 0 global f32[9]
%y = param 1 global_mut f32[9]
%four = const i64 4
%two = const i64 2
%one = const i64 1
%g = index group 0 %four
%i0 = mul %g, %two
%i1 = add %i0, %one
%i2 = add %i0, %two
%a = load f32 %x[%i1]
store %y[%i1], %a
%b = load f32 %x[%i2]
store %y[%i2], %b
)");
  EXPECT_THAT(step_error_message(shifted, "vectorize(lanes=2)", gpu_preset()), HasSubstr("no 2 consecutive aligned"));
  // In place through two GLOBAL_MUT params that may alias: the load of the
  // second element may read what the first store wrote.
  const ir::Kernel aliasing = parse_valid(R"(
%x = param 0 global_mut f32[8]
%y = param 1 global_mut f32[8]
%four = const i64 4
%two = const i64 2
%one = const i64 1
%g = index group 0 %four
%i0 = mul %g, %two
%i1 = add %i0, %one
%a = load f32 %x[%i0]
store %y[%i1], %a
%b = load f32 %x[%i1]
store %y[%i0], %b
)");
  EXPECT_THAT(step_error_message(aliasing, "vectorize(lanes=2)", gpu_preset()), HasSubstr("no 2 consecutive aligned"));
  const ir::Kernel k = parse_valid(kExpChainBy2);
  EXPECT_THAT(step_error_message(k, "vectorize(lanes=8)", gpu_preset()), HasSubstr("no 8-lane vectors (supported: 2, 4)"));
  EXPECT_THAT(step_error_message(k, "vectorize(lanes=4)", gpu_preset()), HasSubstr("no 4 consecutive aligned"));
  EXPECT_THAT(step_error_message(k, "vectorize()", gpu_preset()), HasSubstr("missing parameter 'lanes'"));
}
