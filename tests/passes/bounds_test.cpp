// The bounds analysis and policy (kiln/passes/bounds.hpp): the out-of-range
// kernels of issue 17 are refused or guarded, guarded kernels run on the
// interpreter without touching memory outside their buffers, and the
// standard kernels, also after the tuner's sequences and recipes, are proved
// in range (so they are never guarded: that would cost performance).
#include "kiln/passes/bounds.hpp"

#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/kernels/library.hpp"
#include "kiln/passes/device_presets.hpp"
#include "kiln/passes/optimization.hpp"
#include "kiln/passes/pipeline.hpp"
#include "kiln/tune/search_space.hpp"
#include "passes/pass_test_support.hpp"
#include "support/out_of_range_kernels.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace kiln;
using namespace kiln::passes;

namespace {

ir::Kernel parsed(std::string_view text) { return kiln::passes::test::parse_valid(text); }

AccessVerdict only_verdict(const ir::Kernel& kernel) {
  const auto accesses = classify_accesses(kernel);
  for (const AccessBounds& a : accesses)
    if (kernel[a.op].kind == ir::OpKind::Store) return a.verdict;
  return accesses.empty() ? AccessVerdict::InRange : accesses.back().verdict;
}

// The constant index -100000 under an IF (straight-line, the verifier's
// index-range rule already refuses it).
constexpr std::string_view kNegative = R"(
%0 = param 0 global_mut f32[1000]
%1 = param 1 var i64
%2 = const i64 0
%3 = cmpgt bool %1, %2
if %3
  %5 = const i64 -100000
  %6 = const f32 1
  store f32 %0[%5], %6
endif
)";

// %1[load(%0[i]) * 100000000]: data-dependent.
constexpr std::string_view kDataDependent = R"(
%0 = param 0 global i64[64]
%1 = param 1 global f32[64]
%2 = param 2 global_mut f32[64]
%3 = param 3 global_mut f32[64]
%4 = const i64 64
%5 = index group 0 %4
%6 = load i64 %0[%5]
%7 = const i64 100000000
%8 = mul i64 %6, %7
%9 = const f32 1
store f32 %2[%8], %9
%11 = load f32 %1[%8]
store f32 %3[%5], %11
)";

}  // namespace

TEST(Bounds, PolicyNamesRoundTrip) {
  for (BoundsPolicy p : {BoundsPolicy::Guard, BoundsPolicy::Prove, BoundsPolicy::Trust})
    EXPECT_EQ(parse_bounds_policy(bounds_policy_name(p)), p);
  EXPECT_EQ(parse_bounds_policy("Guard"), std::nullopt);
}

TEST(Bounds, ProvedOutOfRangeIsRefusedUnderEveryPolicy) {
  for (std::string_view text : {kiln::test::kStoreUnderIfPastTheEnd, kNegative}) {
    const ir::Kernel k = parsed(text);
    EXPECT_EQ(only_verdict(k), AccessVerdict::OutOfRange) << text;
    for (BoundsPolicy p : {BoundsPolicy::Guard, BoundsPolicy::Prove, BoundsPolicy::Trust}) {
      Result<BoundedKernel> r = apply_bounds_policy(k, p);
      ASSERT_FALSE(r.ok()) << bounds_policy_name(p) << "\n" << text;
      EXPECT_EQ(r.error().code, ErrorCode::Verify);
      EXPECT_NE(r.error().message.find("always outside its memory"), std::string::npos) << r.error().message;
      EXPECT_NE(r.error().message.find("has 1000 f32 elements"), std::string::npos) << r.error().message;
    }
  }
  // Names the op, the range and the buffer.
  Result<BoundedKernel> r = apply_bounds_policy(parsed(kiln::test::kStoreUnderIfPastTheEnd), BoundsPolicy::Guard);
  EXPECT_EQ(r.error().op, 10);
  EXPECT_NE(r.error().message.find("op 10 (`store f32 %1[%8], %9`): it touches elements [10000001, 10000999]"),
            std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("param slot 1 (%1)"), std::string::npos) << r.error().message;
  Result<BoundedKernel> n = apply_bounds_policy(parsed(kNegative), BoundsPolicy::Guard);
  EXPECT_NE(n.error().message.find("it touches element -100000"), std::string::npos) << n.error().message;
}

TEST(Bounds, IfConditionsNarrowTheIndex) {
  // i < 1000 on a padded grid of 1024: in range only thanks to the IF.
  const ir::Kernel k = parsed(R"(
%0 = param 0 global_mut f32[1000]
%1 = const i64 1024
%2 = index group 0 %1
%3 = const i64 4
%4 = mul i64 %2, %3
%5 = const i64 250
%6 = cmplt bool %2, %5
%7 = const f32 1
if %6
  store f32 %0[%4], %7
endif
)");
  EXPECT_EQ(only_verdict(k), AccessVerdict::InRange);
  // Without the IF the same store is unknown (part of it is outside).
  const ir::Kernel bare = ir::parse(R"(
%0 = param 0 global_mut f32[1000]
%1 = const i64 1024
%2 = index group 0 %1
%3 = const f32 1
store f32 %0[%2], %3
)").value();  // the verifier's index-range rule refuses it too
  EXPECT_EQ(only_verdict(bare), AccessVerdict::Unknown);
}

TEST(Bounds, DataDependentIsRefusedByProveAndGuardedByGuard) {
  const ir::Kernel k = parsed(kDataDependent);
  Result<BoundedKernel> proved = apply_bounds_policy(k, BoundsPolicy::Prove);
  ASSERT_FALSE(proved.ok());
  EXPECT_NE(proved.error().message.find("the index is computed from a load"), std::string::npos) << proved.error().message;
  EXPECT_NE(proved.error().message.find("bounds policy \"prove\""), std::string::npos);
  Result<BoundedKernel> trusted = apply_bounds_policy(k, BoundsPolicy::Trust);
  ASSERT_TRUE(trusted.ok());
  EXPECT_EQ(trusted->kernel, k);

  Result<BoundedKernel> guarded = apply_bounds_policy(k, BoundsPolicy::Guard);
  ASSERT_TRUE(guarded.ok()) << guarded.error().to_string();
  EXPECT_EQ(guarded->guarded, 2u);
  EXPECT_TRUE(ir::verify(guarded->kernel).ok());
  for (const AccessBounds& a : classify_accesses(guarded->kernel))
    EXPECT_EQ(a.verdict, AccessVerdict::InRange) << describe_access(guarded->kernel, a);

  // On the interpreter (which faults on any access outside a buffer): the
  // guarded kernel runs. A store at index * 1e8 writes only when that is 0;
  // the load reads x at the index clamped into [0, 63].
  std::vector<std::int64_t> index(64);
  std::vector<float> x(64), stored(64, 5.0f), loaded(64, -1.0f);
  std::mt19937_64 rng(17);
  for (auto& v : index) v = static_cast<std::int64_t>(rng() % 3) - 1;  // -1, 0, 1: only 0 is in range
  for (auto& v : x) v = static_cast<float>(rng() % 1000) / 7.0f + 1.0f;
  const std::vector<kiln_op> wire = guarded->kernel.to_wire();
  std::vector<kiln_arg> args = {sdk::host_buffer_arg(index.data(), index.size() * 8), sdk::host_buffer_arg(x.data(), 256),
                                sdk::host_buffer_arg(stored.data(), 256), sdk::host_buffer_arg(loaded.data(), 256)};
  ASSERT_NO_THROW(sdk::InterpretedProgram(wire).run(args));
  const bool some_zero = std::count(index.begin(), index.end(), 0) > 0;
  ASSERT_TRUE(some_zero);
  EXPECT_EQ(stored[0], 1.0f);
  for (std::size_t i = 1; i < 64; ++i) EXPECT_EQ(stored[i], 5.0f) << i;
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(loaded[i], index[i] > 0 ? x[63] : x[0]) << i;
  // The unguarded kernel faults on the interpreter.
  const std::vector<kiln_op> raw = k.to_wire();
  EXPECT_THROW(sdk::InterpretedProgram(raw).run(args), sdk::PluginError);
}

TEST(Bounds, VariableOffsetIsProvedAtLaunchOrGuarded) {
  const ir::Kernel k = parsed(kiln::test::kStoreAtVariableOffset);
  EXPECT_EQ(only_verdict(k), AccessVerdict::AtLaunch);
  Result<BoundedKernel> proved = apply_bounds_policy(k, BoundsPolicy::Prove);
  ASSERT_TRUE(proved.ok());
  ASSERT_EQ(proved->launch_checks.size(), 1u);
  const std::vector<std::uint64_t> elements = {1000, 1000, 0};
  EXPECT_TRUE(check_launch_bounds(proved->kernel, proved->launch_checks, std::vector<std::uint64_t>{0, 0, 0}, elements).ok());
  Result<void> far = check_launch_bounds(proved->kernel, proved->launch_checks,
                                         std::vector<std::uint64_t>{0, 0, 10000000}, elements);
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.error().message.find("[10000000, 10000999]"), std::string::npos) << far.error().message;
  Result<void> one = check_launch_bounds(proved->kernel, proved->launch_checks, std::vector<std::uint64_t>{0, 0, 1}, elements);
  EXPECT_FALSE(one.ok());  // i + 1 reaches 1000

  Result<BoundedKernel> guarded = apply_bounds_policy(k, BoundsPolicy::Guard);
  ASSERT_TRUE(guarded.ok());
  EXPECT_EQ(guarded->guarded, 1u);
  EXPECT_TRUE(guarded->launch_checks.empty());
  std::vector<float> x(1000), y(1000, -1.0f);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) + 0.5f;
  const std::vector<kiln_op> wire = guarded->kernel.to_wire();
  std::vector<kiln_arg> args = {sdk::host_buffer_arg(x.data(), 4000), sdk::host_buffer_arg(y.data(), 4000),
                                sdk::scalar_arg(KILN_DTYPE_I64, 990)};
  ASSERT_NO_THROW(sdk::InterpretedProgram(wire).run(args));
  for (std::size_t i = 0; i < 1000; ++i) EXPECT_EQ(y[i], i >= 990 ? x[i - 990] : -1.0f) << i;
}

TEST(Bounds, UnknownLengthBuffersAreProvedAtLaunch) {
  const kernels::StandardKernel add_dyn = kernels::make_standard_kernel("add-dyn", {.n = 100}).value();
  Result<BoundedKernel> r = apply_bounds_policy(add_dyn.kernel, BoundsPolicy::Guard);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->guarded, 0u);
  EXPECT_EQ(r->launch_checks.size(), 3u);
  const std::vector<std::uint64_t> scalars = {0, 0, 0, 100};
  EXPECT_TRUE(check_launch_bounds(r->kernel, r->launch_checks, scalars, std::vector<std::uint64_t>{100, 100, 100, 0}).ok());
  Result<void> small = check_launch_bounds(r->kernel, r->launch_checks, scalars, std::vector<std::uint64_t>{100, 99, 100, 0});
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.error().message.find("param slot 1"), std::string::npos) << small.error().message;
}

// The standard kernels, normalized, after the tuner's recipes and after
// random sequences of every optimization: nothing is unknown, so the
// default policy compiles them exactly as the tuner measured them.
TEST(Bounds, StandardKernelsAndTunedSequencesAreProvedInRange) {
  const std::pair<std::string_view, kernels::KernelSize> cases[] = {
      {"add", {.n = 1000}},                        {"add-dyn", {.n = 1000}},
      {"exp-chain", {.n = 777}},                   {"sum-rows", {.m = 5, .n = 70}},
      {"max-rows", {.m = 4, .n = 33}},             {"softmax-rows", {.m = 3, .n = 50}},
      {"layernorm-rows", {.m = 3, .n = 40}},       {"rmsnorm-rows", {.m = 3, .n = 33}},
      {"matmul", {.m = 16, .n = 32, .k = 8}},      {"matmul-bt", {.m = 8, .n = 16, .k = 12}},
      {"matmul", {.m = 33, .n = 65, .k = 17}},     {"transpose", {.m = 9, .n = 16}},
  };
  const DeviceInfo devices[] = {gpu_preset(), small_preset(), cpu_preset()};
  const tune::SearchSpace& space = tune::default_search_space();
  std::mt19937_64 rng(20261202);
  int checked = 0;
  auto expect_proved = [&](const ir::Kernel& kernel, std::string_view name, const std::string& what) {
    for (const AccessBounds& a : classify_accesses(kernel)) {
      const bool ok = a.verdict == AccessVerdict::InRange || (name == "add-dyn" && a.verdict == AccessVerdict::AtLaunch);
      EXPECT_TRUE(ok) << name << " " << what << ": " << describe_access(kernel, a) << "\n" << ir::print(kernel);
      ++checked;
    }
  };
  for (const auto& [name, size] : cases) {
    const kernels::StandardKernel k = kernels::make_standard_kernel(name, size).value();
    expect_proved(k.kernel, name, "as built");
    for (const DeviceInfo& device : devices) {
      for (const OptSequence& recipe : space.recipes)
        if (Result<ir::Kernel> lowered = optimize(k.kernel, recipe, device); lowered.ok())
          expect_proved(*lowered, name, device.id + " recipe " + to_string(recipe));
      for (int sequence = 0; sequence < 2; ++sequence) {
        ir::Kernel current = normalize(k.kernel, device);
        OptSequence steps;
        for (int step = 0; step < 3; ++step) {
          std::vector<OptStep> candidates;
          for (const Optimization* optimization : optimizations())
            for (OptStep& s : optimization->configs(current, device)) candidates.push_back(std::move(s));
          if (candidates.empty()) break;
          const OptStep chosen = candidates[rng() % candidates.size()];
          Result<ir::Kernel> next = apply_sequence(current, {chosen}, device);
          if (!next.ok()) break;
          steps.push_back(chosen);
          current = std::move(next).value();
        }
        if (Result<ir::Kernel> lowered = optimize(k.kernel, steps, device); lowered.ok())
          expect_proved(*lowered, name, device.id + " sequence " + to_string(steps));
      }
    }
  }
  EXPECT_GT(checked, 500);
}
