// Device::compile's modes apart from Tuned (tuned_program_test.cpp): the
// heuristic program is the always-on pipeline's kernel, a frozen one is the
// kernel as given, and the report says which; bad requests are errors.
#include <gtest/gtest.h>

#include "kiln/compile_options.hpp"
#include "kiln/passes/optimization.hpp"
#include "kiln/tune/heuristic.hpp"
#include "tune/dummy_device.hpp"

using namespace kiln;

namespace {

// `2 * 3` folds away under the always-on passes, so the heuristic kernel
// differs from the one given.
constexpr const char* kFoldable = R"(
%a = param 0 global f32[64]
%y = param 1 global_mut f32[64]
%n = const i64 64
%i = index group 0 %n
%x = load f32 %a[%i]
%two = const f32 2
%three = const f32 3
%six = mul f32 %two, %three
%v = mul f32 %x, %six
store f32 %y[%i], %v
)";

}  // namespace

TEST(DeviceCompile, HeuristicIsTheDefaultAndRunsTheAlwaysOnPasses) {
  const Device device = test::dummy_device();
  const ir::Kernel given = test::parse_ir(kFoldable);
  const Program program = device.compile(given).value();
  const CompileReport& report = program.compile_report();
  EXPECT_EQ(report.requested, CompileMode::Heuristic);
  EXPECT_EQ(report.used, CompileMode::Heuristic);
  // The heuristic schedule (kiln/tune/heuristic.hpp) after the always-on passes.
  const passes::OptSequence sequence = passes::parse_sequence(report.sequence).value();
  EXPECT_EQ(report.kernel, passes::optimize(given, sequence, device.info()).value());
  EXPECT_EQ(report.sequence, passes::to_string(tune::heuristic_schedule(given, device.info())->sequence));
  EXPECT_NE(report.kernel, given);
  EXPECT_TRUE(report.fallback_reason.empty());
  EXPECT_EQ(ir::Kernel::from_wire(program.wire()), report.kernel) << "the report names what the device compiled";
}

TEST(DeviceCompile, FrozenCompilesTheKernelExactlyAsGiven) {
  const Device device = test::dummy_device();
  const ir::Kernel given = test::parse_ir(kFoldable);
  const Program program = device.compile(given, {.mode = CompileMode::Frozen}).value();
  EXPECT_EQ(program.compile_report().used, CompileMode::Frozen);
  EXPECT_EQ(program.compile_report().kernel, given);
  EXPECT_EQ(ir::Kernel::from_wire(program.wire()), given);
}

TEST(DeviceCompile, BadRequestsAreErrors) {
  const ir::Kernel given = test::parse_ir(kFoldable);
  Result<Program> empty = Device().compile(given);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(empty.error().message.find("no device"), std::string::npos) << empty.error().message;

  Result<Program> bad_mode = test::dummy_device().compile(given, {.mode = static_cast<CompileMode>(7)});
  ASSERT_FALSE(bad_mode.ok());
  EXPECT_NE(bad_mode.error().message.find("mode 7 is not a CompileMode"), std::string::npos) << bad_mode.error().message;
}

TEST(DeviceCompile, ModeNamesRoundTrip) {
  for (CompileMode mode : {CompileMode::Heuristic, CompileMode::Tuned, CompileMode::Frozen})
    EXPECT_EQ(compile_mode_from_name(compile_mode_name(mode)), mode);
  EXPECT_EQ(compile_mode_from_name("fast"), std::nullopt);
}
