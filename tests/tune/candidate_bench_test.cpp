// The bench candidates are measured on: random inputs, the untuned kernel's
// outputs as the reference, outputs reset and in-place buffers restored
// before every candidate, and every failure an outcome rather than an error.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "kiln/kernels/library.hpp"
#include "tune/candidate_bench.hpp"
#include "tune/dummy_device.hpp"

using namespace kiln;
using kiln::tune::CandidateStatus;
using kiln::tune::detail::CandidateBench;

namespace {

// The kernels here are compiled exactly as written: the bench measures what it is given.
const CompileOptions kFrozen{.mode = CompileMode::Frozen};

constexpr const char* kAdd = R"(
%a = param 0 global f32[1000]
%b = param 1 global f32[1000]
%c = param 2 global_mut f32[1000]
%n = const i64 1000
%i = index group 0 %n
%x = load f32 %a[%i]
%y = load f32 %b[%i]
%s = add f32 %x, %y
store f32 %c[%i], %s
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TimedLaunchOptions timed(std::uint32_t warmups, std::uint32_t repeats, std::uint64_t abort_ns = 0) {
  TimedLaunchOptions options;
  options.warmups = warmups;
  options.repeats = repeats;
  options.abort_ns = abort_ns;
  return options;
}

CandidateBench bench_for(const Device& device, const ir::Kernel& kernel, double tolerance = 0) {
  std::vector<kernels::ArgSpec> args = kernels::args_of(kernel).value();
  return CandidateBench::create(device, kernel, std::move(args), 7, tolerance).value();
}

}  // namespace

TEST(CandidateBench, TheUntunedKernelMatchesItself) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(kAdd);
  CandidateBench bench = bench_for(device, kernel);
  const Program program = device.compile(kernel, kFrozen).value();
  bench.record_reference(program).value();
  const tune::detail::BenchOutcome outcome = bench.measure(program, timed(1, 3));
  EXPECT_EQ(outcome.status, CandidateStatus::Measured) << outcome.error;
  EXPECT_EQ(outcome.max_error, 0);
  EXPECT_EQ(outcome.timing.runs, 3u);
  EXPECT_GT(outcome.timing.median_ns, 0u);
  EXPECT_EQ(outcome.timing.timer, TimerKind::Model);
}

TEST(CandidateBench, AWrongResultIsAMismatchNamingTheOutput) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(kAdd);
  CandidateBench bench = bench_for(device, kernel);
  bench.record_reference(device.compile(kernel, kFrozen).value()).value();
  const ir::Kernel wrong = test::parse_ir(replace(kAdd, "add f32", "sub f32"));
  const tune::detail::BenchOutcome outcome = bench.measure(device.compile(wrong, kFrozen).value(), {});
  EXPECT_EQ(outcome.status, CandidateStatus::Mismatch);
  EXPECT_NE(outcome.error.find("output %2 (slot 2) differs from the untuned kernel's"), std::string::npos)
      << outcome.error;
  EXPECT_GT(outcome.max_error, 0.01);
}

TEST(CandidateBench, OutputsAreResetSoUnwrittenElementsFail) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(kAdd);
  CandidateBench bench = bench_for(device, kernel);
  const Program untuned = device.compile(kernel, kFrozen).value();
  bench.record_reference(untuned).value();
  // The buffer now holds correct results; a kernel that writes only half of
  // them must not pass on what the previous run left behind.
  ASSERT_EQ(bench.measure(untuned, {}).status, CandidateStatus::Measured);
  const ir::Kernel half = test::parse_ir(replace(kAdd, "%n = const i64 1000\n%i = index group 0 %n",
                                                 "%n = const i64 500\n%i = index group 0 %n"));
  const tune::detail::BenchOutcome outcome = bench.measure(device.compile(half, kFrozen).value(), {});
  EXPECT_EQ(outcome.status, CandidateStatus::Mismatch);
  EXPECT_TRUE(std::isinf(outcome.max_error)) << "NaN where the reference has numbers";
}

TEST(CandidateBench, InPlaceBuffersAreRestoredBeforeEveryCandidate) {
  const Device device = test::dummy_device();
  // x[i] = x[i] * 2 + 1: running it twice on the same data gives another result.
  const ir::Kernel kernel = test::parse_ir(R"(
%x = param 0 global_mut f32[256]
%n = const i64 256
%i = index group 0 %n
%v = load f32 %x[%i]
%two = const f32 2
%one = const f32 1
%m = mad f32 %v, %two, %one
store f32 %x[%i], %m
)");
  CandidateBench bench = bench_for(device, kernel);
  EXPECT_TRUE(bench.has_in_place_buffers());
  const Program program = device.compile(kernel, kFrozen).value();
  bench.record_reference(program).value();
  for (int candidate = 0; candidate < 3; ++candidate) {
    const tune::detail::BenchOutcome outcome = bench.measure(program, timed(2, 4));
    EXPECT_EQ(outcome.status, CandidateStatus::Measured) << candidate << ": " << outcome.error;
    EXPECT_EQ(outcome.max_error, 0) << candidate;
  }
}

TEST(CandidateBench, RandomInputsAreNotZeros) {
  const Device device = test::dummy_device();
  // y[i] = x[i]: if the inputs were all zeros, a kernel writing 0 would pass.
  const std::string copy = R"(
%x = param 0 global f32[64]
%y = param 1 global_mut f32[64]
%n = const i64 64
%i = index group 0 %n
%v = load f32 %x[%i]
store f32 %y[%i], %v
)";
  const ir::Kernel kernel = test::parse_ir(copy);
  CandidateBench bench = bench_for(device, kernel);
  bench.record_reference(device.compile(kernel, kFrozen).value()).value();
  const ir::Kernel zeros = test::parse_ir(replace(copy, "store f32 %y[%i], %v", "%z = const f32 0\nstore f32 %y[%i], %z"));
  EXPECT_EQ(bench.measure(device.compile(zeros, kFrozen).value(), {}).status, CandidateStatus::Mismatch);
}

TEST(CandidateBench, SlowCandidatesAreAbortedAndFaultsAreLaunchFailures) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(kAdd);
  CandidateBench bench = bench_for(device, kernel);
  const Program program = device.compile(kernel, kFrozen).value();
  bench.record_reference(program).value();
  const tune::detail::BenchOutcome aborted = bench.measure(program, timed(0, 5, 1));
  EXPECT_EQ(aborted.status, CandidateStatus::Aborted);
  EXPECT_LT(aborted.timing.runs, 5u);
  EXPECT_NE(aborted.error.find("longer than 1 ns"), std::string::npos) << aborted.error;

  // Reads b at an index made from a's data, mostly out of range: a fault
  // only a run finds (compiled under "trust": the default bounds guard would
  // clamp the index, and the candidate would merely mismatch).
  const ir::Kernel faulty = test::parse_ir(replace(kAdd, "%y = load f32 %b[%i]",
                                                   "%big = const f32 100000\n%f = mul f32 %x, %big\n"
                                                   "%j = cast i64 %f\n%y = load f32 %b[%j]"));
  const tune::detail::BenchOutcome failed = bench.measure(
      device.compile(faulty, {.mode = CompileMode::Frozen, .bounds = passes::BoundsPolicy::Trust}).value(), {});
  EXPECT_EQ(failed.status, CandidateStatus::LaunchFailed);
  EXPECT_NE(failed.error.find("dummy"), std::string::npos) << failed.error;
}

TEST(CandidateBench, ToleranceFollowsTheLongestLoopNest) {
  EXPECT_EQ(tune::detail::longest_loop_nest(test::parse_ir(kAdd)), 1);
  const ir::Kernel nested = test::parse_ir(R"(
%x = param 0 global_mut f32[1]
%a = const i64 8
%b = const i64 16
%i = loop %a
  %j = loop %b
  endloop %j
endloop %i
%k = loop %a
endloop %k
)");
  EXPECT_EQ(tune::detail::longest_loop_nest(nested), 128);
}

TEST(CandidateBench, SlowCandidatesGetAsManyRunsAsFitTheirAllowance) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(kAdd);
  CandidateBench bench = bench_for(device, kernel);
  const Program program = device.compile(kernel, kFrozen).value();
  bench.record_reference(program).value();
  // A clock on which every timed_launch call takes one second, whatever
  // its runs (the dummy's simulated runs take microseconds): the second is
  // the launch's fixed cost.
  auto now = std::make_shared<double>(0);
  tune::detail::TimeAllowance allowance;
  allowance.clock = [now] { return *now += 1; };  // read before and after a call
  auto runs_with = [&](double seconds) {
    allowance.seconds = seconds;
    const tune::detail::BenchOutcome outcome = bench.measure(program, timed(1, 5), allowance);
    EXPECT_EQ(outcome.status, CandidateStatus::Measured) << outcome.error;
    return outcome.timing.runs;
  };
  EXPECT_EQ(runs_with(100), 5u) << "1 + 5 runs fit: the full timing";
  EXPECT_EQ(runs_with(2.5), 5u) << "one more launch fits, and its runs cost next to nothing";
  EXPECT_EQ(runs_with(1.5), 1u) << "another launch does not fit: the first run alone";
  EXPECT_EQ(runs_with(0.5), 1u) << "nothing fits: the first run alone";
  EXPECT_EQ(runs_with(-1), 5u) << "no allowance";

  allowance.seconds = 100;
  const tune::detail::BenchOutcome slow = bench.measure(program, timed(1, 5, 1), allowance);
  EXPECT_EQ(slow.status, CandidateStatus::Aborted) << "a first run past the abort threshold ends it";
  EXPECT_EQ(slow.timing.runs, 1u);
}

// Plain numbers: a first launch's wall time splits into a fixed cost and
// its runs, and only the runs repeat.
TEST(CandidateBench, RunsThatFitSeparateALaunchsFixedCostFromItsRuns) {
  using tune::detail::runs_that_fit;
  const TimedLaunchOptions options = timed(1, 5);
  bool full = false;
  // A run of 1 s and nothing else: the first run, then as many as fit.
  EXPECT_EQ(runs_that_fit(options, 3.5, 1, 1, 1'000'000'000, 0, full), 2u);
  EXPECT_FALSE(full);
  EXPECT_EQ(runs_that_fit(options, 7, 1, 1, 1'000'000'000, 0, full), 5u);
  EXPECT_TRUE(full) << "the first run, then 1 warm-up + 5 runs";
  EXPECT_EQ(runs_that_fit(options, 3.5, 1, 1, 1'000'000'000, 1, full), 1u) << "the next launch warms up first";
  EXPECT_EQ(runs_that_fit(options, 0.5, 1, 1, 1'000'000'000, 0, full), 0u);
  // c:0's isolated launch: 50 ms of worker start, 0.5 ms a run (a warm-up
  // and a timed run in the first launch).
  EXPECT_EQ(runs_that_fit(options, 0.11, 0.051, 2, 500'000, 1, full), 5u);
  EXPECT_TRUE(full) << "before, judged by 25 ms a run, none fitted";
  // Too little left for another launch's fixed cost: none.
  EXPECT_EQ(runs_that_fit(options, 0.06, 0.051, 2, 500'000, 1, full), 0u);
  EXPECT_FALSE(full);
  // No run time known (0): the wall time is all per run, as before.
  EXPECT_EQ(runs_that_fit(options, 3.5, 1, 1, 0, 0, full), 2u);
}

TEST(CandidateBench, TheTimedReferenceRunServesTheUntunedKernel) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(kAdd);
  CandidateBench bench = bench_for(device, kernel);
  const Program program = device.compile(kernel, kFrozen).value();
  auto now = std::make_shared<double>(0);
  tune::detail::TimeAllowance allowance;
  allowance.clock = [now] { return *now += 1; };
  bench.record_reference(program, allowance.clock).value();
  const double after_reference = *now;

  allowance.seconds = 0.5;  // no run fits: the reference run is the measurement
  const tune::detail::BenchOutcome reused = bench.measure(program, timed(0, 5), allowance, true);
  EXPECT_EQ(reused.status, CandidateStatus::Measured);
  EXPECT_EQ(reused.timing.runs, 1u);
  EXPECT_GT(reused.timing.median_ns, 0u);
  EXPECT_EQ(*now, after_reference) << "nothing ran";

  allowance.seconds = 100;
  const tune::detail::BenchOutcome full = bench.measure(program, timed(0, 5), allowance, true);
  EXPECT_EQ(full.status, CandidateStatus::Measured) << full.error;
  EXPECT_EQ(full.timing.runs, 5u);
  EXPECT_EQ(full.max_error, 0);
}

TEST(CandidateBench, OnlyCandidatesThatCouldWinAreCompared) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(kAdd);
  CandidateBench bench = bench_for(device, kernel);
  bench.record_reference(device.compile(kernel, kFrozen).value()).value();
  const Program wrong = device.compile(test::parse_ir(replace(kAdd, "add f32", "sub f32")), kFrozen).value();
  tune::detail::TimeAllowance allowance;
  allowance.check_below_ns = 1;  // the best so far: 1 ns; this one cannot win
  const tune::detail::BenchOutcome slow = bench.measure(wrong, timed(0, 2), allowance);
  EXPECT_EQ(slow.status, CandidateStatus::Measured);
  EXPECT_EQ(slow.max_error, -1) << "not compared";
  allowance.check_below_ns = 1'000'000'000;
  EXPECT_EQ(bench.measure(wrong, timed(0, 2), allowance).status, CandidateStatus::Mismatch);
}

// The interpreted reference: the interpreter's outputs on a sample of the
// groups (1000 here, one element each) within an op budget, compared on the
// elements the sample wrote.
TEST(CandidateBench, AnInterpretedSampleIsTheReferenceOfALargeGrid) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(kAdd);
  CandidateBench bench = bench_for(device, kernel);
  // About 10 ops per group: room for a few dozen groups, not all 1000.
  ASSERT_TRUE(bench.record_interpreted_reference(kernel, 300));
  EXPECT_TRUE(bench.interpreted_reference());
  const tune::detail::BenchOutcome right = bench.measure(device.compile(kernel, kFrozen).value(), timed(0, 1));
  EXPECT_EQ(right.status, CandidateStatus::Measured) << right.error;
  EXPECT_EQ(right.max_error, 0);
  // Wrong only in the last element: the sample always holds the last group.
  const std::string last_wrong = replace(replace(kAdd, "store f32 %c[%i], %s", "%e = eq %i, %last\n"
                                                                              "%one = const f32 1\n"
                                                                              "%t = add f32 %s, %one\n"
                                                                              "%v = select f32 %e, %t, %s\n"
                                                                              "store f32 %c[%i], %v"),
                                         "%n = const i64 1000", "%n = const i64 1000\n%last = const i64 999");
  const tune::detail::BenchOutcome wrong = bench.measure(device.compile(test::parse_ir(last_wrong), kFrozen).value(), {});
  EXPECT_EQ(wrong.status, CandidateStatus::Mismatch);
  EXPECT_NE(wrong.error.find("differs from the reference interpreter's"), std::string::npos) << wrong.error;
}

// A sampled output is reset and read back only in the ranges that hold the
// sampled elements: still, an element a candidate leaves unwritten fails
// (the previous candidate's correct value there was reset), and one it gets
// wrong in the last group is read back and caught.
TEST(CandidateBench, ASampledOutputIsResetAndReadInItsSampledRanges) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(kAdd);
  CandidateBench bench = bench_for(device, kernel);
  ASSERT_TRUE(bench.record_interpreted_reference(kernel, 300));
  const Program untuned = device.compile(kernel, kFrozen).value();
  ASSERT_EQ(bench.measure(untuned, timed(0, 1)).status, CandidateStatus::Measured);
  // The device buffer now holds right values everywhere; this one writes
  // only the first half, so the sampled elements of the second half must
  // come back as the reset left them.
  const ir::Kernel half = test::parse_ir(replace(kAdd, "%n = const i64 1000\n%i = index group 0 %n",
                                                 "%n = const i64 500\n%i = index group 0 %n"));
  const tune::detail::BenchOutcome outcome = bench.measure(device.compile(half, kFrozen).value(), {});
  EXPECT_EQ(outcome.status, CandidateStatus::Mismatch);
  EXPECT_TRUE(std::isinf(outcome.max_error)) << "NaN where the reference has numbers";
  // And the right kernel passes again after it.
  EXPECT_EQ(bench.measure(untuned, timed(0, 1)).status, CandidateStatus::Measured);
}

// What a sample wrote comes from the interpreter's write log, not from
// comparing values: elements it writes as +0.0 (the bits of fresh memory)
// are sampled and checked like any other, so a candidate that leaves them
// unwritten fails.
TEST(CandidateBench, ASampledOutputWrittenWithZerosIsStillChecked) {
  const Device device = test::dummy_device();
  const ir::Kernel zeros = test::parse_ir(replace(kAdd, "%s = add f32 %x, %y", "%zero = const f32 0\n%s = mul f32 %x, %zero"));
  CandidateBench bench = bench_for(device, zeros);
  ASSERT_TRUE(bench.record_interpreted_reference(zeros, 300));
  EXPECT_EQ(bench.measure(device.compile(zeros, kFrozen).value(), timed(0, 1)).status, CandidateStatus::Measured);
  const ir::Kernel half = test::parse_ir(replace(replace(kAdd, "%s = add f32 %x, %y", "%zero = const f32 0\n%s = mul f32 %x, %zero"),
                                                 "%n = const i64 1000\n%i = index group 0 %n",
                                                 "%n = const i64 500\n%i = index group 0 %n"));
  EXPECT_EQ(bench.measure(device.compile(half, kFrozen).value(), {}).status, CandidateStatus::Mismatch);
}

// Outputs only written start as poison written from one block of it: an
// output longer than the block is poisoned all the way to its end.
TEST(CandidateBench, AnOutputLongerThanThePoisonBlockIsResetToItsEnd) {
  const std::string n = std::to_string(CandidateBench::kPoisonBlockElements * 2 + 3);
  std::string text = kAdd;
  for (std::size_t at; (at = text.find("1000")) != std::string::npos;) text.replace(at, 4, n);
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(text);
  CandidateBench bench = bench_for(device, kernel);
  // Every group fits the budget: the whole output is the reference.
  ASSERT_TRUE(bench.record_interpreted_reference(kernel, 100'000'000));
  EXPECT_EQ(bench.measure(device.compile(kernel, kFrozen).value(), timed(0, 1)).status, CandidateStatus::Measured);
  // Leaves the last element unwritten: it must read as poison, not as the
  // right value the previous candidate left there.
  const ir::Kernel short_by_one = test::parse_ir(replace(text, "%i = index group 0 %n",
                                                         "%m = const i64 " + std::to_string(std::stoull(n) - 1) +
                                                             "\n%i = index group 0 %m"));
  EXPECT_EQ(bench.measure(device.compile(short_by_one, kFrozen).value(), {}).status, CandidateStatus::Mismatch);
}

TEST(CandidateBench, AGroupPastTheBudgetLeavesTheReferenceToTheDevice) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(kAdd);
  CandidateBench bench = bench_for(device, kernel);
  EXPECT_FALSE(bench.record_interpreted_reference(kernel, 2));
  EXPECT_FALSE(bench.interpreted_reference());
  // A grid that fits is run whole: every element is compared.
  EXPECT_TRUE(bench.record_interpreted_reference(kernel, 1'000'000));
  const ir::Kernel wrong = test::parse_ir(replace(kAdd, "add f32", "sub f32"));
  EXPECT_EQ(bench.measure(device.compile(wrong, kFrozen).value(), {}).status, CandidateStatus::Mismatch);
}

// The time limit of a candidate run: the floor until something is measured,
// then timeout_factor x the best, never below the floor; none for factor 0.
TEST(AutotuneConfig, CandidateTimeoutIsTheFactorOfTheBestAboveTheFloor) {
  kiln::tune::AutotuneSettings s;
  s.timeout_factor = 50;
  s.timeout_floor_s = 0.5;
  EXPECT_EQ(kiln::tune::detail::candidate_timeout_ns(s, 0), 500'000'000u);
  EXPECT_EQ(kiln::tune::detail::candidate_timeout_ns(s, 1'000'000), 500'000'000u);     // 50 ms < the floor
  EXPECT_EQ(kiln::tune::detail::candidate_timeout_ns(s, 20'000'000), 1'000'000'000u);  // 50 x 20 ms
  s.timeout_factor = 0;
  EXPECT_EQ(kiln::tune::detail::candidate_timeout_ns(s, 20'000'000), 0u);
}
