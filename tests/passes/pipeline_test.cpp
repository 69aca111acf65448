// The pipeline and the optimization infrastructure: pass lists, normalize
// reaching a fixed point without changing results, the registry, and the
// errors of apply_sequence / optimize.
#include "passes/always_on.hpp"
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

namespace {

// A copy of 16 elements, and passes with deliberate bugs for the checked
// pipeline (detail::run_passes_checked, what normalize_checked and
// finalize_checked run).
constexpr std::string_view kCopy16 = R"(%0 = param 0 global f32[16]
%1 = param 1 global_mut f32[16]
%2 = const i64 16
%3 = index group 0 %2
%4 = load f32 %0[%3]
store f32 %1[%3], %4
)";

ir::Kernel with_grid(const ir::Kernel& kernel, std::uint64_t length) {
  ir::Kernel out = kernel;
  out.ops[2].imm = length;
  return out;
}
// 17 threads over 16 elements: valid in form, out of range (rule index-range).
ir::Kernel widen_grid(const ir::Kernel& kernel, const DeviceInfo&) { return with_grid(kernel, 17); }
ir::Kernel narrow_grid(const ir::Kernel& kernel, const DeviceInfo&) { return with_grid(kernel, 16); }
ir::Kernel unchanged(const ir::Kernel& kernel, const DeviceInfo&) { return kernel; }
// The load's index names the store after it (rule operand-order).
ir::Kernel forward_operand(const ir::Kernel& kernel, const DeviceInfo&) {
  ir::Kernel out = kernel;
  out.ops[4].src[1] = 5;
  return out;
}
int kernels_seen_out_of_order = 0;
ir::Kernel reads_operands(const ir::Kernel& kernel, const DeviceInfo&) {
  for (ir::ValueId id = 0; id < kernel.size(); ++id)
    for (const ir::ValueId v : kernel[id].operands()) kernels_seen_out_of_order += v >= id;
  return kernel;
}

}  // namespace

TEST(CheckedPasses, TheErrorNamesThePassThatBrokeTheKernelAndShowsTheKernelBeforeIt) {
  const ir::Kernel kernel = passes::test::parse_valid(kCopy16);
  const std::vector<passes::Pass> list = {{"unchanged", unchanged}, {"widen_grid", widen_grid}, {"unchanged_too", unchanged}};
  const auto result = passes::detail::run_passes_checked(kernel, list, passes::cpu_preset());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::Internal);
  EXPECT_THAT(result.error().message, HasSubstr("pass 'widen_grid' produced an invalid kernel (a bug in the pass): "));
  EXPECT_THAT(result.error().message, HasSubstr("rule index-range"));
  EXPECT_THAT(result.error().message, HasSubstr("kernel before the pass:\n" + ir::print(kernel)));
}

// Between passes only the operands' order is checked (the whole kernel is
// verified at the end): a pass that breaks it is named before the next
// pass reads the kernel, in the first run and in the run that names it.
TEST(CheckedPasses, APassThatBreaksOperandOrderIsNamedBeforeTheNextPassReadsTheKernel) {
  const ir::Kernel kernel = passes::test::parse_valid(kCopy16);
  kernels_seen_out_of_order = 0;
  const std::vector<passes::Pass> list = {{"forward_operand", forward_operand}, {"reads_operands", reads_operands}};
  const auto result = passes::detail::run_passes_checked(kernel, list, passes::cpu_preset());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.error().message, HasSubstr("pass 'forward_operand' produced an invalid kernel"));
  EXPECT_THAT(result.error().message, HasSubstr("rule operand-order"));
  EXPECT_EQ(kernels_seen_out_of_order, 0);
}

// What is verified is the kernel the passes give: an invalid kernel between
// two passes that a later pass makes valid again is no error.
TEST(CheckedPasses, TheResultIsWhatIsVerified) {
  const ir::Kernel kernel = passes::test::parse_valid(kCopy16);
  const std::vector<passes::Pass> list = {{"widen_grid", widen_grid}, {"narrow_grid", narrow_grid}};
  const auto result = passes::detail::run_passes_checked(kernel, list, passes::cpu_preset());
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  EXPECT_EQ(*result, kernel);
}

// An input that fails verify is the caller's error (apply_sequence blames
// the step that made it), whatever the passes do.
TEST(CheckedPasses, AnInvalidInputIsAVerifyError) {
  const ir::Kernel kernel = with_grid(passes::test::parse_valid(kCopy16), 17);
  for (const std::vector<passes::Pass>& list :
       {std::vector<passes::Pass>{{"unchanged", unchanged}}, std::vector<passes::Pass>{{"widen_grid", widen_grid}},
        std::vector<passes::Pass>{{"forward_operand", forward_operand}}}) {
    const auto result = passes::detail::run_passes_checked(kernel, list, passes::cpu_preset());
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::Verify) << result.error().to_string();
    EXPECT_THAT(result.error().message, HasSubstr("rule index-range"));
  }
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
