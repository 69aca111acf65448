// Helpers optimizations share: divisors within bounds (fast on huge
// lengths), step errors, loop and index handles.
#include "passes/opt_support.hpp"
#include "passes/pass_test_support.hpp"

#include <gmock/gmock.h>

using namespace kiln::passes;

TEST(OptSupport, DivisorsWithinBoundsDescending) {
  EXPECT_EQ(opts::divisors(1000, 2, 64), (std::vector<std::int64_t>{50, 40, 25, 20, 10, 8, 5, 4, 2}));
  EXPECT_EQ(opts::divisors(7, 2, 64), (std::vector<std::int64_t>{7}));
  EXPECT_EQ(opts::divisors(0, 1, 64), (std::vector<std::int64_t>{}));
  EXPECT_EQ(opts::divisors(36, 6, 6), (std::vector<std::int64_t>{6}));
  // 2^62: bounded by hi, not by sqrt(n).
  EXPECT_EQ(opts::divisors(std::int64_t{1} << 62, 1, 8), (std::vector<std::int64_t>{8, 4, 2, 1}));
}

TEST(OptSupport, StepErrorsNameTheStep) {
  const OptStep step = opts::make_step("split_local", {{"axis", 0}, {"factor", 3}});
  const kiln::Error e = opts::step_error(step, "3 does not divide 1000");
  EXPECT_EQ(e.code, kiln::ErrorCode::InvalidArgument);
  EXPECT_EQ(e.message, "split_local(axis=0,factor=3): 3 does not divide 1000");
  auto missing = opts::require_param(step, "loop");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, ::testing::HasSubstr("missing parameter 'loop'"));
  EXPECT_EQ(opts::require_param(step, "factor").value(), 3);
}

TEST(OptSupport, FindsIndicesAndLoopsInProgramOrder) {
  const kiln::ir::Kernel k = test::parse_valid(R"(
%0 = param 0 global_mut f32[4]
%1 = const i64 4
%2 = index group 1 %1
%3 = loop %1
  %4 = loop %1
  endloop %4
endloop %3
%7 = loop %1
endloop %7
)");
  EXPECT_EQ(opts::find_index(k, kiln::ir::Scope::Group, 1), 2u);
  EXPECT_EQ(opts::find_index(k, kiln::ir::Scope::Group, 0), std::nullopt);
  EXPECT_EQ(opts::loops_in_order(k), (std::vector<kiln::ir::ValueId>{3, 4, 7}));
}
