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
