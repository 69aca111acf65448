// The pipeline and the optimization infrastructure: pass lists, normalize
// reaching a fixed point without changing results, the registry, and the
// errors of apply_sequence / optimize.
#include "passes/pass_test_support.hpp"

#include "kiln/ir/hash.hpp"
#include "kiln/passes/optimization.hpp"

#include <gmock/gmock.h>

#include <set>

namespace {

using namespace kiln;
using ::testing::HasSubstr;

std::vector<kernels::StandardKernel> some_standard_kernels() {
  std::vector<kernels::StandardKernel> all;
  for (std::string_view name : kernels::standard_kernel_names())
    all.push_back(kernels::make_standard_kernel(name, {.m = 5, .n = 7, .k = 3}).value());
  return all;
}

}  // namespace

TEST(Pipeline, DceRunsLastAndEveryPassIsFoundByName) {
  const auto& passes = passes::always_on_passes();
  ASSERT_FALSE(passes.empty());
  EXPECT_EQ(passes.back().name, "dce");
  std::set<std::string_view> names;
  for (const auto* list : {&passes::always_on_passes(), &passes::finalize_passes()})
    for (const passes::Pass& pass : *list) {
      EXPECT_TRUE(names.insert(pass.name).second) << "duplicate pass name " << pass.name;
      EXPECT_EQ(passes::find_pass(pass.name), &pass);
    }
  EXPECT_EQ(passes::find_pass("no-such-pass"), nullptr);
}

TEST(Pipeline, NormalizeReachesAFixedPointAndKeepsResults) {
  for (const auto& device : {passes::cpu_preset(), passes::gpu_preset()}) {
    for (const kernels::StandardKernel& k : some_standard_kernels()) {
      SCOPED_TRACE(k.name + " on " + device.id);
      const ir::Kernel once = passes::normalize(k.kernel, device);
      ASSERT_TRUE(ir::verify(once).ok()) << ir::verify(once).error().to_string() << "\n" << ir::print(once);
      EXPECT_EQ(ir::hash(passes::normalize(once, device)), ir::hash(once)) << ir::print(once);
      EXPECT_EQ(passes::test::compare_outcomes(passes::test::run_on_interpreter(k.kernel, k.args, 3),
                                               passes::test::run_on_interpreter(once, k.args, 3), k.tolerance),
                "");
    }
  }
}

TEST(Pipeline, OptimizeWithoutStepsIsNormalizeThenFinalize) {
  const auto device = passes::gpu_preset();
  for (const kernels::StandardKernel& k : some_standard_kernels()) {
    SCOPED_TRACE(k.name);
    const ir::Kernel expected = passes::finalize(passes::normalize(k.kernel, device), device);
    EXPECT_EQ(ir::print(passes::optimize(k.kernel, {}, device).value()), ir::print(expected));
  }
}

TEST(Pipeline, OptimizeRejectsAnInvalidKernel) {
  ir::Kernel broken = passes::test::parse_valid("%0 = param 0 global_mut f32[4]\n%1 = const i64 4\n%2 = index group 0 %1\n");
  broken.ops[2].src[0] = 7;  // operand after its user
  auto result = passes::optimize(broken, {}, passes::cpu_preset());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::Verify);
}

TEST(Pipeline, NormalizeAndFinalizeLeaveInvalidKernelsAlone) {
  // Operands past the end, a missing operand: nothing to crash on.
  ir::Kernel broken = passes::test::parse_valid("%0 = param 0 global_mut f32[4]\n%1 = const i64 4\n%2 = index group 0 %1\n");
  broken.ops[2].src[0] = 77;
  broken.ops.push_back(broken.ops[1]);
  broken.ops.back().kind = ir::OpKind::Binary;
  broken.ops.back().src = {ir::kNoValue, 3, 9};
  for (const auto& device : {passes::cpu_preset(), passes::gpu_preset()}) {
    EXPECT_EQ(passes::normalize(broken, device), broken);
    EXPECT_EQ(passes::finalize(broken, device), broken);
  }
}

TEST(Pipeline, UnknownOptimizationIsAnErrorNamingTheStep) {
  const auto k = kernels::make_standard_kernel("add", {.n = 16}).value();
  auto result = passes::optimize(k.kernel, passes::parse_sequence("no_such_opt(x=1)").value(), passes::cpu_preset());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::NotFound);
  EXPECT_THAT(result.error().message, HasSubstr("step 1 `no_such_opt(x=1)`: unknown optimization 'no_such_opt'"));
}

TEST(Registry, NamesAreUniqueAndConfigsRoundTripThroughText) {
  std::set<std::string_view> names;
  for (const passes::Optimization* opt : passes::optimizations()) {
    EXPECT_TRUE(names.insert(opt->name()).second) << "duplicate optimization " << opt->name();
    EXPECT_EQ(passes::find_optimization(opt->name()), opt);
    EXPECT_FALSE(opt->description().empty()) << opt->name();
    for (const kernels::StandardKernel& k : some_standard_kernels()) {
      const ir::Kernel normalized = passes::normalize(k.kernel, passes::gpu_preset());
      for (const passes::OptStep& step : opt->configs(normalized, passes::gpu_preset())) {
        EXPECT_EQ(step.opt, opt->name());
        EXPECT_EQ(passes::OptStep::parse(step.to_string()).value(), step);
      }
    }
  }
  EXPECT_EQ(passes::find_optimization("no-such-optimization"), nullptr);
}

TEST(Registry, ConfigsAreFiniteOnHugeAndDynamicLengths) {
  // A grid of 2^40 threads, a reduction of 2^40 - 1 terms, and dynamic
  // lengths: every configs() must return (a loop over lengths or their
  // divisors would not), listing steps that parse back.
  const ir::Kernel huge = passes::test::parse_valid(R"(
%0 = param 0 global f32[1]
%1 = param 1 global_mut f32[1]
%2 = param 2 var i64
%3 = const i64 1099511627776
%4 = const i64 1099511627775
%5 = const i64 0
%6 = index group 0 %3
%7 = index group 1 %2
%8 = storage register f32[1]
%9 = const f32 0
store f32 %8[%5], %9
%11 = loop %4
  %12 = load f32 %0[%5]
  %13 = load f32 %8[%5]
  %14 = add f32 %13, %12
  store f32 %8[%5], %14
endloop %11
%17 = loop %2
  %18 = load f32 %8[%5]
  %19 = mul f32 %18, %18
  store f32 %8[%5], %19
endloop %17
%22 = load f32 %8[%5]
store f32 %1[%5], %22
)");
  for (const DeviceInfo& device : {passes::gpu_preset(), passes::small_preset(), passes::cpu_preset()}) {
    const ir::Kernel normalized = passes::normalize(huge, device);
    for (const passes::Optimization* opt : passes::optimizations())
      for (const passes::OptStep& step : opt->configs(normalized, device))
        EXPECT_EQ(passes::OptStep::parse(step.to_string()).value(), step) << opt->name();
  }
}
