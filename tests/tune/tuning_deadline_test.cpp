// The budget as a deadline (core/tune/tuning_deadline.hpp): what may still
// start, judged by the costs measured so far, and how long one run may take.
// Plain numbers on a made-up clock: no timing of this machine.
#include <gtest/gtest.h>

#include "tune/tuning_deadline.hpp"

using kiln::tune::detail::TuningDeadline;

TEST(TuningDeadline, NothingStartsThatTheCheapestMeasurementAndATypicalCompileCannotFinish) {
  TuningDeadline d(100, 10);  // the deadline: 110, less the finishing share (5%): 109.5
  EXPECT_DOUBLE_EQ(d.deadline(), 100 + 10 * (1 - TuningDeadline::kFinishShare));
  EXPECT_TRUE(d.next_fits(109.4, true)) << "nothing measured yet: nothing to judge by";
  EXPECT_FALSE(d.next_fits(109.6, false)) << "past the deadline nothing starts";
  d.measured(3, true);
  d.measured(0.5, true);
  d.measured(0.01, false);  // failed before its first run: says nothing of what a run costs
  EXPECT_DOUBLE_EQ(d.next_needs(false), 0.5) << "the cheapest measurement";
  d.compiled(1);
  d.compiled(9);
  d.compiled(2);
  EXPECT_DOUBLE_EQ(d.next_needs(true), 2.5) << "plus the median compile";
  EXPECT_TRUE(d.next_fits(108.9, false));
  EXPECT_FALSE(d.next_fits(109.1, false));
  EXPECT_TRUE(d.next_fits(106.9, true));
  EXPECT_FALSE(d.next_fits(107.1, true)) << "a candidate still to compile needs its compile too";
  EXPECT_DOUBLE_EQ(d.left(104), 5.5);
  EXPECT_DOUBLE_EQ(d.left(120), 0);
}

TEST(TuningDeadline, RunsAreCappedByWhatIsLeftOnlyWhereATimeoutKeepsTheDevice) {
  const TuningDeadline d(100, 8);
  const std::uint64_t rule = 10'000'000'000;  // the settings' limit: 10 s
  EXPECT_EQ(d.run_timeout_ns(rule, false, 100), rule) << "where a timeout would lose the device, the rule alone";
  EXPECT_EQ(d.run_timeout_ns(rule, true, 100), 3'800'000'000u) << "half of the 7.6 s left (the finishing share kept)";
  EXPECT_EQ(d.run_timeout_ns(rule, true, 105), 1'300'000'000u) << "half of 2.6 s";
  EXPECT_EQ(d.run_timeout_ns(rule, true, 106), 1'000'000'000u) << "half of 1.6 s is below an eighth of the budget";
  EXPECT_EQ(d.run_timeout_ns(rule, true, 120), 1'000'000'000u) << "past the deadline: a share of the budget";
  EXPECT_DOUBLE_EQ(d.run_cap_s(120), 8 * TuningDeadline::kMinRunCapShare);
  EXPECT_EQ(d.run_timeout_ns(2'000'000'000, true, 100), 2'000'000'000u) << "the rule where it is tighter";
  EXPECT_EQ(d.run_timeout_ns(0, true, 100), 0u) << "timeout_factor 0 means no limit, budget or not";
  // A tiny budget (one kernel's share of several) still lets a run start a worker.
  const TuningDeadline tiny(100, 0.001);
  EXPECT_DOUBLE_EQ(tiny.run_cap_s(100), TuningDeadline::kMinRunCapSeconds);
}

// What follows the tuning (leaving the driver, the process's exit) costs
// about what opening the runtime did: where opening took longer than the
// finishing share, the reserve grows with it.
TEST(TuningDeadline, AnExpensiveOpeningReservesMoreForTheFinish) {
  TuningDeadline d(100, 2);
  d.opened(0.05);  // c:0: opening costs less than the share
  EXPECT_DOUBLE_EQ(d.finish_reserve_s(), 2 * TuningDeadline::kFinishShare);
  EXPECT_DOUBLE_EQ(d.deadline(), 102 - 2 * TuningDeadline::kFinishShare);
  d.opened(0.5);  // the H200's CUDA probe and driver
  EXPECT_DOUBLE_EQ(d.finish_reserve_s(), 0.5 * TuningDeadline::kLeaveShareOfOpen);
  EXPECT_DOUBLE_EQ(d.deadline(), 102 - 0.5 * TuningDeadline::kLeaveShareOfOpen);
  EXPECT_NEAR(d.left(101), 1 - 0.5 * TuningDeadline::kLeaveShareOfOpen, 1e-9);
}

// Compiles that overlap measurements are rarely waited for: whether one may
// still start is judged by what compiles take, or one started just before
// the deadline is joined after it.
TEST(TuningDeadline, ACompileStartsOnlyWhenItsOwnDurationFits) {
  TuningDeadline d(100, 10);  // deadline 109.5
  d.measured(0.1, true);
  d.compiled(0.01);  // the tuner barely waited
  EXPECT_TRUE(d.compile_fits(109.0)) << "judged by the waits alone";
  d.compile_took(1.0);
  d.compile_took(2.0);
  d.compile_took(1.5);
  EXPECT_FALSE(d.compile_fits(107.8)) << "107.8 + 2 (the longest compile) + 0.1 > 109.5";
  EXPECT_TRUE(d.compile_fits(107.4));
  EXPECT_TRUE(d.next_fits(109.0, true)) << "a candidate already in flight still only waits what waits took";
}
