// vectorize: consecutive aligned scalar accesses become vector accesses, the
// element-wise ops between them vector ops.
#include "passes/opt_perf_support.hpp"

#include <gmock/gmock.h>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::HasSubstr;
using ::testing::Not;

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

// Thread g (of 4) copies elements read at `from` * g and `from` * g + 1 of
// x to `to` * g and `to` * g + 1 of y, through a REGISTER array at the read
// indices where `staged`.
std::string pair_copy(int from, int to, bool staged) {
  const std::string read = staged ? "%r" : "%x";
  std::string text = "%x = param 0 global f32[12]\n%y = param 1 global_mut f32[12]\n";
  if (staged) text += "%r = storage register f32[12]\n";
  text += "%four = const i64 4\n%from = const i64 " + std::to_string(from) + "\n%to = const i64 " + std::to_string(to) +
          "\n%one = const i64 1\n%g = index group 0 %four\n%a0 = mul %g, %from\n%a1 = add %a0, %one\n"
          "%s0 = mul %g, %to\n%s1 = add %s0, %one\n";
  if (staged)
    text += "%c0 = load f32 %x[%a0]\nstore %r[%a0], %c0\n%c1 = load f32 %x[%a1]\nstore %r[%a1], %c1\n";
  return text + "%v0 = load f32 " + read + "[%a0]\nstore %y[%s0], %v0\n%v1 = load f32 " + read + "[%a1]\nstore %y[%s1], %v1\n";
}

TEST(Vectorize, ReadsBuffersAtAnyIndexWhereTheDeviceTakesSuchLoads) {
  // The H200 preset claims vector loads of buffers at any element index
  // (KILN_FEATURE_UNALIGNED_VECTOR_LOADS, as the CUDA plugin: aligned words
  // shifted into place), not stores; preset:gpu claims neither.
  ASSERT_TRUE(h200_preset().has_feature(KILN_FEATURE_UNALIGNED_VECTOR_LOADS));
  ASSERT_FALSE(h200_preset().has_feature(KILN_FEATURE_UNALIGNED_VECTORS));
  const auto vectorized = [](const ir::Kernel& k, const DeviceInfo& device) {
    return ir::print(without_dead_code(applied(k, "vectorize(lanes=2)", device)));
  };
  // Reads at 3g, 3g + 1 (every residue mod 2), writes at 2g: the loads
  // become one unaligned vector, the store an aligned one.
  const ir::Kernel strided = parse_valid(pair_copy(3, 2, false));
  EXPECT_THAT(vectorized(strided, h200_preset()), HasSubstr("load unaligned f32x2 %0["));
  EXPECT_THAT(vectorized(strided, h200_preset()), Not(HasSubstr("store unaligned")));
  EXPECT_EQ(compare_runs(strided, applied(strided, "vectorize(lanes=2)", h200_preset())), "");
  EXPECT_THAT(step_error_message(strided, "vectorize(lanes=2)", gpu_preset()), HasSubstr("no 2 consecutive aligned"));
  // Writes at 3g stay scalar there (a CPU writes them as one vector).
  const ir::Kernel scattered = parse_valid(pair_copy(2, 3, false));
  EXPECT_THAT(vectorized(scattered, h200_preset()), HasSubstr("load f32x2 %0["));  // aligned, lanes extracted
  EXPECT_THAT(vectorized(scattered, h200_preset()), Not(HasSubstr("unaligned")));
  EXPECT_THAT(vectorized(scattered, cpu_preset()), HasSubstr("store unaligned f32x2"));
  // Nor loads of kernel storage (the words around them are not the kernel's to read).
  const ir::Kernel staged = parse_valid(pair_copy(3, 2, true));
  EXPECT_THAT(vectorized(staged, h200_preset()), HasSubstr("load unaligned f32x2 %0["));
  EXPECT_THAT(vectorized(staged, h200_preset()), Not(HasSubstr("load unaligned f32x2 %2[")));
}
