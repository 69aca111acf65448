// The autotuner on the dummy device's simulated timings, over a planted
// space (planted_space.hpp): it finds the known best, measurement beats a
// misleading cost model, the correctness guard disqualifies a faster wrong
// candidate, failures are recorded and skipped, the budget holds, and equal
// seeds give equal searches.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <set>
#include <mutex>
#include <thread>

#include "kiln/ir/hash.hpp"
#include "kiln/tune/heuristic.hpp"
#include "kiln/tune/learned_cost.hpp"
#include "kiln/tune/tournament_search.hpp"
#include "kiln/tune/tuner.hpp"
#include "tune/dummy_device.hpp"
#include "tune/planted_space.hpp"

using namespace kiln;
using namespace kiln::tune;

namespace {

constexpr std::int64_t kN = 1 << 15;

// Fast settings for the interpreter: every candidate of a small space fits.
AutotuneSettings small_settings() {
  AutotuneSettings s;
  s.n_launches = 64;
  s.max_sequence_length = 2;
  s.budget_s = 600;
  s.repeats = 3;
  s.noise_band = 0;
  return s;
}

TuneOptions options_for(const SearchSpace& space, AutotuneSettings settings = small_settings()) {
  TuneOptions o;
  o.settings = settings;
  o.space = &space;
  o.kernel_name = "planted";
  return o;
}

// A cost model that ranks sequences by how many steps of each optimization
// they hold: `favourite` cheapest, everything with test_split dearest.
CostModel misleading_cost(std::string favourite) {
  return [favourite](const ir::Kernel& kernel, const DeviceInfo&) {
    double cost = 1000;
    for (const ir::Op& op : kernel.ops) {
      if (op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Local) cost += 500;  // test_split's mark
      if (op.kind == ir::OpKind::Loop) cost += favourite == "test_coarsen" ? -100 : 100;
    }
    if (favourite == "test_wrong") {
      // The wrong kernel has half the groups: make that look best.
      for (const ir::Op& op : kernel.ops)
        if (op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Group)
          cost -= static_cast<double>(ir::constant_int(kernel, op.src[0]).value_or(0) < kN ? 900 : 0);
    }
    return cost;
  };
}

// Every sequence of up to two steps, measured directly: the ground truth.
struct Truth {
  std::uint64_t best_ns = 0;
  std::string best_sequence;
  std::size_t distinct = 0;
};

Truth exhaustive(const Device& device, const ir::Kernel& kernel, const SearchSpace& space) {
  const DeviceInfo& info = device.info();
  std::vector<passes::OptSequence> sequences{{}};
  const ir::Kernel base = space.normalize(kernel, info);
  for (const passes::Optimization* a : space.optimizations) {
    for (const passes::OptStep& sa : a->configs(base, info)) {
      sequences.push_back({sa});
      Result<ir::Kernel> after = space.apply(base, sa, info);
      if (!after) continue;
      for (const passes::Optimization* b : space.optimizations)
        for (const passes::OptStep& sb : b->configs(*after, info)) sequences.push_back({sa, sb});
    }
  }
  const std::vector<kernels::ArgSpec> args = kernels::args_of(kernel).value();
  const std::vector<kernels::HostBuffer> inputs = kernels::make_input_buffers(args, 3);
  std::vector<Buffer> buffers;
  std::vector<LaunchArg> launch;
  buffers.reserve(args.size());
  for (std::size_t slot = 0; slot < args.size(); ++slot) {
    buffers.push_back(device.allocate(args[slot].elements * 4).value());
    if (args[slot].role == kernels::ArgRole::Input) buffers.back().write(inputs[slot].data()).value();
    launch.push_back(LaunchArg::buffer(buffers.back()));
  }
  Truth truth;
  std::map<std::string, std::uint64_t> seen;  // final hash -> time
  for (const passes::OptSequence& sequence : sequences) {
    Result<ir::Kernel> lowered = space.lower(kernel, sequence, info);
    if (!lowered) continue;
    const std::string hash = ir::hash_hex(*lowered);
    if (seen.count(hash)) continue;
    Result<Program> program = device.compile(*lowered, {.mode = CompileMode::Frozen});
    if (!program) continue;
    TimedLaunchOptions timing;
    timing.repeats = 3;
    const std::uint64_t t = device.timed_launch(*program, launch, timing).value().median_ns;
    seen[hash] = t;
    const std::string text = passes::to_string(sequence);
    if (truth.best_ns == 0 || t < truth.best_ns ||
        (t == truth.best_ns && (sequence.size() < passes::parse_sequence(truth.best_sequence)->size() ||
                                (sequence.size() == passes::parse_sequence(truth.best_sequence)->size() &&
                                 text < truth.best_sequence)))) {
      truth.best_ns = t;
      truth.best_sequence = text;
    }
  }
  truth.distinct = seen.size();
  return truth;
}

const CandidateRecord* find_record(const TuningEntry& entry, const std::string& sequence) {
  for (const CandidateRecord& r : entry.candidates)
    if (r.sequence == sequence) return &r;
  return nullptr;
}

}  // namespace

TEST(Tuner, FindsTheKnownBestOfASmallSpaceDespiteTheCostModel) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  // The cost model prefers coarsening and ranks every split last.
  const SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost("test_coarsen"));
  const Truth truth = exhaustive(device, kernel, space);
  ASSERT_GT(truth.distinct, 10u);
  ASSERT_NE(truth.best_sequence.find("test_split"), std::string::npos) << "the dummy rewards full warps";

  const TuneResult result = tune_kernel(device, kernel, options_for(space)).value();
  EXPECT_EQ(result.entry.best_ns, truth.best_ns);
  EXPECT_EQ(result.entry.sequence, truth.best_sequence);
  EXPECT_EQ(result.entry.candidates_measured, truth.distinct) << "the whole space fits in n_launches";
  EXPECT_LT(result.entry.best_ns, result.entry.baseline_ns);
  EXPECT_EQ(ir::hash_hex(result.kernel), result.entry.final_hash);
  EXPECT_TRUE(result.program.valid());
}

TEST(Tuner, AtLeastTwentyDistinctCandidatesAreLaunchedByDefault) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  const SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost(""));
  TuneOptions options = options_for(space, AutotuneSettings{});
  options.settings.repeats = 2;
  const TuneResult result = tune_kernel(device, kernel, options).value();
  EXPECT_GE(result.entry.candidates_measured, 20u);
  std::set<std::string> hashes;
  for (const CandidateRecord& r : result.entry.candidates) hashes.insert(r.final_hash);
  EXPECT_EQ(hashes.size(), result.entry.candidates.size()) << "each candidate a different kernel";
}

TEST(Tuner, TheUntunedKernelAndTheHeuristicChoiceAreAlwaysMeasured) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  const SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost("test_coarsen"));
  AutotuneSettings settings = small_settings();
  settings.n_launches = 2;
  const TuneResult result = tune_kernel(device, kernel, options_for(space, settings)).value();
  ASSERT_EQ(result.entry.candidates.size(), 2u);

  const SearchResult search = tournament_search(kernel, device.info(), space, settings);
  const std::vector<SearchCandidate> order = measurement_order(search, 2);
  const std::string heuristic = passes::to_string(order[1].sequence);
  EXPECT_NE(heuristic.find("test_coarsen"), std::string::npos) << "the cost model's favourite";
  ASSERT_NE(find_record(result.entry, ""), nullptr);
  ASSERT_NE(find_record(result.entry, heuristic), nullptr);
  EXPECT_EQ(find_record(result.entry, "")->status, CandidateStatus::Measured);
  EXPECT_LE(result.entry.best_ns, std::min(find_record(result.entry, "")->median_ns,
                                           find_record(result.entry, heuristic)->median_ns))
      << "never slower than either";
}

TEST(Tuner, AFasterWrongCandidateIsDisqualifiedAndReported) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestWrong wrong;
  // The cost model ranks the wrong kernel first: it is the heuristic choice.
  const SearchSpace space = test::planted_space({&wrong, &split}, misleading_cost("test_wrong"));
  const TuneResult result = tune_kernel(device, kernel, options_for(space)).value();

  const CandidateRecord* planted = find_record(result.entry, "test_wrong(keep=2)");
  ASSERT_NE(planted, nullptr);
  EXPECT_EQ(planted->status, CandidateStatus::Mismatch);
  EXPECT_NE(planted->error.find("differs from the reference interpreter's"), std::string::npos) << planted->error;
  EXPECT_LT(planted->median_ns, find_record(result.entry, "")->median_ns) << "it is faster";
  EXPECT_EQ(result.entry.sequence.find("test_wrong"), std::string::npos) << result.entry.sequence;
  for (const CandidateRecord& r : result.entry.candidates) {
    if (r.sequence.find("test_wrong") == std::string::npos) continue;
    // Wrong ones fast enough to win were compared and disqualified; slower
    // ones could not win and were not compared.
    if (r.status != CandidateStatus::Aborted) {
      EXPECT_TRUE(r.status == CandidateStatus::Mismatch || r.max_error == -1) << r.sequence;
    }
    if (r.max_error == -1) {
      EXPECT_GT(static_cast<double>(r.min_ns), static_cast<double>(result.entry.best_ns)) << r.sequence;
    }
    EXPECT_NE(r.sequence, result.entry.sequence);
  }
}

TEST(Tuner, CandidatesThatFailToCompileAreRecordedAndSkipped) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  // Ignores the device's limit of 1024 threads per group.
  test::TestSplit oversize("test_oversize", false, {4096, 2048});
  const SearchSpace space = test::planted_space({&oversize, &split}, misleading_cost(""));
  const TuneResult result = tune_kernel(device, kernel, options_for(space)).value();
  const CandidateRecord* refused = find_record(result.entry, "test_oversize(factor=4096)");
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->status, CandidateStatus::CompileFailed);
  EXPECT_NE(refused->error.find("dummy"), std::string::npos) << refused->error;
  EXPECT_EQ(refused->runs, 0u);
  EXPECT_NE(result.entry.sequence.find("test_split"), std::string::npos) << "the search went on";
}

TEST(Tuner, EqualSeedsGiveEqualSearchesAndWinners) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  const SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost(""));
  AutotuneSettings settings;  // the defaults: a pool larger than what is measured
  settings.max_sequence_length = 3;
  settings.n_launches = 12;
  settings.repeats = 2;
  settings.seed = 42;
  const TuneResult first = tune_kernel(device, kernel, options_for(space, settings)).value();
  const TuneResult second = tune_kernel(device, kernel, options_for(space, settings)).value();
  ASSERT_EQ(first.entry.candidates.size(), second.entry.candidates.size());
  for (std::size_t i = 0; i < first.entry.candidates.size(); ++i) {
    EXPECT_EQ(first.entry.candidates[i].sequence, second.entry.candidates[i].sequence) << i;
    EXPECT_EQ(first.entry.candidates[i].median_ns, second.entry.candidates[i].median_ns) << i;
  }
  EXPECT_EQ(first.entry.sequence, second.entry.sequence);
  EXPECT_EQ(first.entry.final_hash, second.entry.final_hash);

  const SearchResult a = tournament_search(kernel, device.info(), space, settings);
  const SearchResult b = tournament_search(kernel, device.info(), space, settings);
  ASSERT_EQ(a.candidates.size(), b.candidates.size());
  for (std::size_t i = 0; i < a.candidates.size(); ++i) EXPECT_EQ(a.candidates[i].hash, b.candidates[i].hash) << i;
}

// A planted split that takes longer for small factors (so a step's variants
// finish on the search's workers in another order than they were drawn) and
// notes whether a search worker applied it.
class SlowSmallSplits : public test::TestSplit {
 public:
  Result<ir::Kernel> apply(const ir::Kernel& kernel, const passes::OptStep& step,
                           const DeviceInfo& device) const override {
    if (on_search_thread()) on_worker_ = true;
    std::this_thread::sleep_for(std::chrono::microseconds(4096 / std::max<std::int64_t>(step.param("factor"), 1)));
    return test::TestSplit::apply(kernel, step, device);
  }
  bool applied_on_a_worker() const { return on_worker_; }

 private:
  mutable std::atomic<bool> on_worker_{false};
};

// The search applies a step's variants on worker threads and keeps them in
// the order they were drawn: the same candidates, costs and counts on one
// thread as on four, whichever variant finishes first.
TEST(Tuner, TheSearchIsTheSameOnOneThreadAndOnMany) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  SlowSmallSplits split;
  test::TestCoarsen coarsen;
  SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost(""));
  space.recipes = {passes::parse_sequence("test_coarsen(factor=2); test_split(factor=2)").value()};
  AutotuneSettings settings;
  settings.max_sequence_length = 3;
  settings.seed = 7;
  const SearchResult one = tournament_search(kernel, device.info(), space, settings, {}, 1);
  EXPECT_FALSE(split.applied_on_a_worker()) << "one thread: the variants applied on the caller's";
  const SearchResult four = tournament_search(kernel, device.info(), space, settings, {}, 4);
  EXPECT_TRUE(split.applied_on_a_worker());
  ASSERT_GT(one.candidates.size(), 10u);
  ASSERT_EQ(one.candidates.size(), four.candidates.size());
  for (std::size_t i = 0; i < one.candidates.size(); ++i) {
    EXPECT_EQ(passes::to_string(one.candidates[i].sequence), passes::to_string(four.candidates[i].sequence)) << i;
    EXPECT_EQ(one.candidates[i].hash, four.candidates[i].hash) << i;
    EXPECT_EQ(one.candidates[i].cost_ns, four.candidates[i].cost_ns) << i;
    EXPECT_EQ(one.candidates[i].recipe, four.candidates[i].recipe) << i;
  }
  EXPECT_EQ(one.stats.steps, four.stats.steps);
  EXPECT_EQ(one.stats.generated, four.stats.generated);
  EXPECT_EQ(one.stats.duplicates, four.stats.duplicates);
  EXPECT_EQ(one.stats.failed, four.stats.failed);
  EXPECT_EQ(one.stats.removed, four.stats.removed);
  EXPECT_GT(one.stats.duplicates + one.stats.failed, 0u) << "the bookkeeping the order decides was exercised";
}

TEST(Tuner, TiesWithinTheNoiseBandGoToTheSimplerSequence) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  const SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost(""));
  AutotuneSettings settings = small_settings();
  const TuneResult exact = tune_kernel(device, kernel, options_for(space, settings)).value();
  settings.noise_band = 1.0;  // everything up to twice the best ties
  const TuneResult banded = tune_kernel(device, kernel, options_for(space, settings)).value();
  const passes::OptSequence exact_sequence = passes::parse_sequence(exact.entry.sequence).value();
  const passes::OptSequence banded_sequence = passes::parse_sequence(banded.entry.sequence).value();
  EXPECT_LE(banded_sequence.size(), exact_sequence.size());
  EXPECT_LE(banded.entry.best_ns, 2 * exact.entry.best_ns);
  for (const CandidateRecord& r : banded.entry.candidates) {
    if (r.status != CandidateStatus::Measured || r.median_ns > 2 * exact.entry.best_ns) continue;
    EXPECT_GE(passes::parse_sequence(r.sequence)->size(), banded_sequence.size()) << r.sequence;
  }
}

TEST(Tuner, StopsStartingCandidatesWhenTheBudgetIsSpent) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  const SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost(""));
  AutotuneSettings settings = small_settings();
  settings.budget_s = 5;
  TuneOptions options = options_for(space, settings);
  // A clock that moves one second per candidate measured (and stands still
  // otherwise): the budget is reached after a known amount of work, whatever
  // the machine's speed.
  auto now = std::make_shared<double>(100);
  options.clock = [now] { return *now; };
  options.on_progress = [now](const TuneProgress& p) {
    if (p.phase == TuneProgress::Phase::Measure) *now += 1;
  };
  const TuneResult result = tune_kernel(device, kernel, options).value();
  // Candidates start at 0, 1, .. 4 s; at 5 s the tuning's deadline (the
  // budget of 5 s less its finishing share, 4.75 s) has passed.
  EXPECT_EQ(result.entry.candidates_measured, 5u);
  EXPECT_DOUBLE_EQ(result.entry.tune_seconds, 5);
  const Truth truth = exhaustive(device, kernel, space);
  EXPECT_GT(truth.distinct, 6u) << "there was more to measure";
  bool warned = false;
  for (const std::string& w : result.warnings) warned |= w.find("the budget ran out after 5 of") != std::string::npos;
  EXPECT_TRUE(warned);

  // The untuned kernel and the heuristic choice are measured even when the
  // budget is gone before measurement begins.
  *now = 100;
  options.on_progress = [now](const TuneProgress& p) {
    if (p.phase == TuneProgress::Phase::Measure) *now += 100;
  };
  EXPECT_EQ(tune_kernel(device, kernel, options).value().entry.candidates_measured, 2u);
}

// The budget covers what the caller did before the call (kiln tune starts
// it on entry: TuneOptions::started_at): the same tuning as above, with 4 of
// its 5 s spent before it was called, measures only what is always measured.
TEST(Tuner, TheBudgetStartsWhereTheCallerSaysSetUpIncluded) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  const SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost(""));
  AutotuneSettings settings = small_settings();
  settings.budget_s = 5;
  TuneOptions options = options_for(space, settings);
  auto now = std::make_shared<double>(100);
  options.clock = [now] { return *now; };
  options.on_progress = [now](const TuneProgress& p) {
    if (p.phase == TuneProgress::Phase::Measure) *now += 1;
  };
  options.started_at = 96;
  const TuneResult result = tune_kernel(device, kernel, options).value();
  // The heuristic choice at 100 s, the untuned kernel at 101 s; at 102 s
  // the budget (96 + 5) is spent.
  EXPECT_EQ(result.entry.candidates_measured, 2u);
  EXPECT_DOUBLE_EQ(result.entry.tune_seconds, 6);
  EXPECT_DOUBLE_EQ(result.times.setup_s, 4) << "what the caller spent is set-up";
  EXPECT_DOUBLE_EQ(result.times.measure_s, 0) << "this clock moves only between measurements";
  bool warned = false;
  for (const std::string& w : result.warnings) warned |= w.find("the budget ran out after 2 of") != std::string::npos;
  EXPECT_TRUE(warned);
}

// On a device where a run past its time limit would lose the device (the
// dummy, as OpenCL, Vulkan and CUDA), the budget cannot cut a slow untuned
// kernel short: it is not run when the cost model, scaled by the fastest
// measured candidate, puts it past what the budget gives a run. The
// reference is the interpreter's, so the wrong candidate is still caught.
TEST(Tuner, AnUntunedKernelPredictedPastItsCapIsNotRunAndIsNotTheReference) {
  const Device device = test::dummy_device();
  ASSERT_FALSE(device.info().survives_timeout());
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestWrong wrong;
  // Split kernels cheapest (the heuristic choice), the wrong one next, and
  // the untuned kernel 1e15 times dearer: a run of some years.
  const CostModel untuned_looks_slow = [](const ir::Kernel& k, const DeviceInfo&) {
    bool local = false;
    bool fewer_groups = false;
    for (const ir::Op& op : k.ops) {
      if (op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Local) local = true;
      if (op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Group)
        fewer_groups |= ir::constant_int(k, op.src[0]).value_or(kN) < kN;
    }
    return local ? 1.0 : fewer_groups ? 2.0 : 1e15;
  };
  const SearchSpace space = test::planted_space({&split, &wrong}, untuned_looks_slow);
  const TuneResult result = tune_kernel(device, kernel, options_for(space)).value();
  const CandidateRecord* untuned = find_record(result.entry, "");
  ASSERT_NE(untuned, nullptr);
  EXPECT_EQ(untuned->status, CandidateStatus::Skipped);
  EXPECT_EQ(untuned->runs, 0u);
  EXPECT_NE(untuned->error.find("would lose the device"), std::string::npos) << untuned->error;
  EXPECT_EQ(result.entry.baseline_ns, 0u) << "its time is unknown";
  bool warned = false;
  for (const std::string& w : result.warnings)
    warned |= w.find("skipped without a measurement (the first, the untuned kernel: not run:") != std::string::npos;
  EXPECT_TRUE(warned) << "a skip is said, not only recorded";
  std::size_t caught = 0;
  for (const CandidateRecord& r : result.entry.candidates)
    if (r.sequence.find("test_wrong") != std::string::npos && r.status == CandidateStatus::Mismatch) {
      EXPECT_NE(r.error.find("differs from the reference interpreter's"), std::string::npos) << r.error;
      ++caught;
    }
  EXPECT_GT(caught, 0u) << "the wrong kernels fast enough to win are caught";
  EXPECT_EQ(result.entry.sequence.find("test_wrong"), std::string::npos) << result.entry.sequence;
  EXPECT_NE(result.entry.sequence.find("test_split"), std::string::npos) << result.entry.sequence;
}

// The run-time prediction that keeps slow candidates off such a device
// scales the space's own cost model by the fastest candidate's time, even
// when a learned model ranks the search: the learned model is fitted to
// the order of a tuning's candidates, not to their ratios, and a far-off
// one must not make candidates look like runs of years. Here the space's
// model puts the split kernels cheapest (the heuristic choice among them)
// and the others at 3x; the learned one puts the others at e^40 x: none
// is skipped, and the untuned kernel is run.
TEST(Tuner, ALearnedModelsRatiosDoNotSkipCandidatesAsTooSlowToRun) {
  const Device device = test::dummy_device();
  ASSERT_FALSE(device.info().survives_timeout());
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  const auto has_local = [](const ir::Kernel& k) {
    return std::any_of(k.ops.begin(), k.ops.end(), [](const ir::Op& op) {
      return op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Local;
    });
  };
  SearchSpace space = test::planted_space(
      {&split, &coarsen}, [&](const ir::Kernel& k, const DeviceInfo&) { return has_local(k) ? 1.0 : 3.0; });
  space.features = [&](const ir::Kernel& k, const DeviceInfo&) { return std::vector<double>{has_local(k) ? 0.0 : 1.0}; };
  auto far_off = std::make_shared<LearnedCostModel>();
  far_off->weights = {40.0};
  TuneOptions options = options_for(space);
  options.cost_model = far_off;
  const TuneResult result = tune_kernel(device, kernel, options).value();
  ASSERT_EQ(result.ranked_by, "learned");
  for (const CandidateRecord& r : result.entry.candidates)
    EXPECT_NE(r.status, CandidateStatus::Skipped) << r.sequence << ": " << r.error;
  const CandidateRecord* untuned = find_record(result.entry, "");
  ASSERT_NE(untuned, nullptr);
  EXPECT_GT(untuned->runs, 0u) << untuned->error;
  EXPECT_GT(result.entry.baseline_ns, 0u);
}

// Seed sequences (the winners of nearby shapes, from Device::compile) are
// measured right after the heuristic choice, however the cost model ranks
// them: here it ranks every split last, and only three launches fit.
TEST(Tuner, SeedSequencesAreMeasuredRightAfterTheHeuristicChoice) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  const SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost("test_coarsen"));
  AutotuneSettings settings = small_settings();
  settings.n_launches = 3;
  TuneOptions options = options_for(space, settings);
  const TuneResult unseeded = tune_kernel(device, kernel, options).value();
  EXPECT_EQ(find_record(unseeded.entry, "test_split(factor=128)"), nullptr) << "the cost model alone does not reach it";

  options.seed_sequences = {"test_split(factor=128)", "no_such_step("};
  const TuneResult seeded = tune_kernel(device, kernel, options).value();
  ASSERT_EQ(seeded.entry.candidates.size(), 3u);
  EXPECT_EQ(seeded.entry.candidates[0].sequence, unseeded.entry.candidates[0].sequence) << "the heuristic choice";
  EXPECT_EQ(seeded.entry.candidates[1].sequence, "") << "the untuned kernel";
  EXPECT_EQ(seeded.entry.candidates[2].sequence, "test_split(factor=128)");
  EXPECT_EQ(seeded.entry.candidates[2].status, CandidateStatus::Measured);
  bool warned = false;
  for (const std::string& w : seeded.warnings) warned |= w.find("seed sequence 'no_such_step(' does not parse") == 0;
  EXPECT_TRUE(warned);
}

// A planted optimization that notes whether a compile job has applied it:
// a thread other than the tuner's own and the search's workers (the tuner's
// thread lowers the heuristic choice and runs the search, whose workers
// apply its variants; compile jobs run on threads of their own).
template <class Planted>
class NotingCompileThreads : public Planted {
 public:
  explicit NotingCompileThreads(std::thread::id tuner) : tuner_(tuner) {}
  Result<ir::Kernel> apply(const ir::Kernel& kernel, const passes::OptStep& step,
                           const DeviceInfo& device) const override {
    if (std::this_thread::get_id() != tuner_ && !on_search_thread()) {
      std::lock_guard lock(mutex_);
      off_tuner_thread_ = true;
      applied_elsewhere_.notify_all();
    }
    return Planted::apply(kernel, step, device);
  }
  // Whether a compile job applies it within `seconds`.
  bool applied_on_a_compile_thread_within(double seconds) const {
    std::unique_lock lock(mutex_);
    return applied_elsewhere_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return off_tuner_thread_; });
  }

 private:
  std::thread::id tuner_;
  mutable std::mutex mutex_;
  mutable std::condition_variable applied_elsewhere_;
  mutable bool off_tuner_thread_ = false;
};
using SplitNotingCompileThreads = NotingCompileThreads<test::TestSplit>;

// The heuristic choice is measured first whatever the search finds, so its
// compile starts with the set-up, not after the search: on the H200 a 2 s
// matmul tuning waited 1.48 s for it behind the search's own compiles.
// Here the search cannot start until a compile job has lowered it (the
// progress report of the search phase waits for that, up to 20 s).
TEST(Tuner, TheHeuristicChoiceCompilesDuringTheSetUpAndTheSearch) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  SplitNotingCompileThreads split(std::this_thread::get_id());
  SearchSpace space = test::planted_space({&split}, misleading_cost(""));
  space.recipes = {passes::parse_sequence("test_split(factor=64)").value()};
  TuneOptions options = options_for(space, small_settings());
  bool compiled_before_the_search = false;
  options.on_progress = [&](const TuneProgress& p) {
    if (p.phase == TuneProgress::Phase::Search)
      compiled_before_the_search = split.applied_on_a_compile_thread_within(20);
  };
  const TuneResult result = tune_kernel(device, kernel, options).value();
  EXPECT_TRUE(compiled_before_the_search);
  ASSERT_FALSE(result.entry.candidates.empty());
  EXPECT_EQ(result.entry.candidates[0].sequence, "test_split(factor=64)") << "the heuristic choice, measured first";
  EXPECT_EQ(result.entry.candidates[0].status, CandidateStatus::Measured);
}

// The heuristic choice (a test_split recipe) never uses test_coarsen, so a
// coarsen applied off the tuner's thread is a compile job of the candidate
// pipeline lowering a search candidate.
using CoarsenNotingCompileThreads = NotingCompileThreads<test::TestCoarsen>;

// Where compiles must not overlap measurements (overlap_compile "never",
// what "auto" gives CPUs), no search candidate compiles while the heuristic
// choice and the untuned kernel are measured: on c:0 two compiles beside
// them made each of their runs a scheduler slice, and a tuning with a cold
// compile cache returned a kernel 2.4x slower than the heuristic choice.
// Where they may overlap ("always", GPUs) the first candidates compile
// meanwhile. Each progress report of those two measurements gives compile
// jobs a second to show themselves.
TEST(Tuner, CandidatesCompileDuringTheFirstMeasurementsOnlyWhereCompilesMayOverlapThem) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  for (const auto overlap : {AutotuneSettings::Overlap::Never, AutotuneSettings::Overlap::Always}) {
    SCOPED_TRACE(overlap == AutotuneSettings::Overlap::Never ? "never" : "always");
    test::TestSplit split;
    CoarsenNotingCompileThreads coarsen(std::this_thread::get_id());
    SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost("test_coarsen"));
    space.recipes = {passes::parse_sequence("test_split(factor=64)").value()};
    AutotuneSettings settings = small_settings();
    settings.overlap_compile = overlap;
    TuneOptions options = options_for(space, settings);
    bool compiled_during_the_first_two = false;
    options.on_progress = [&](const TuneProgress& p) {
      if (p.phase == TuneProgress::Phase::Measure && p.measured <= 2)
        compiled_during_the_first_two = compiled_during_the_first_two || coarsen.applied_on_a_compile_thread_within(1);
    };
    const TuneResult result = tune_kernel(device, kernel, options).value();
    ASSERT_GE(result.entry.candidates.size(), 3u);
    EXPECT_EQ(result.entry.candidates[0].sequence, "test_split(factor=64)") << "the heuristic choice, measured first";
    EXPECT_EQ(result.entry.candidates[1].sequence, "") << "the untuned kernel, second";
    EXPECT_NE(result.entry.candidates[2].sequence.find("test_coarsen"), std::string::npos)
        << "a search candidate the noting coarsen lowered";
    EXPECT_EQ(compiled_during_the_first_two, overlap == AutotuneSettings::Overlap::Always);
  }
}

TEST(Tuner, TheSearchAsksTheClockBeforeEveryVariant) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  const SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost(""));
  AutotuneSettings settings;
  settings.max_sequence_length = 4;
  int reads = 0;
  const SearchResult search = tournament_search(kernel, device.info(), space, settings, [&] { return ++reads > 5; });
  EXPECT_TRUE(search.stats.out_of_time);
  EXPECT_EQ(search.stats.generated + search.stats.duplicates + search.stats.failed + search.stats.too_large, 5u)
      << "one application of a large optimization may take long: none starts after the deadline";
  EXPECT_EQ(search.candidates.size(), 1u + search.stats.generated);
}

TEST(Tuner, KernelsOverMaxKernelOpsAreNeitherExpandedNorMeasured) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  const SearchSpace space = test::planted_space({&split, &coarsen}, misleading_cost(""));
  AutotuneSettings settings = small_settings();
  // The untuned kernel fits; every rewrite adds ops and does not.
  settings.max_kernel_ops = static_cast<std::uint32_t>(space.normalize(kernel, device.info()).size());
  const SearchResult search = tournament_search(kernel, device.info(), space, settings);
  EXPECT_GT(search.stats.too_large, 0u);
  EXPECT_EQ(search.candidates.size(), 1u);
  const TuneResult result = tune_kernel(device, kernel, options_for(space, settings)).value();
  EXPECT_EQ(result.entry.sequence, "");
  EXPECT_EQ(result.entry.candidates_measured, 1u);

  // A recipe is exempt: chosen by hand at its size, it is searched and measured.
  SearchSpace with_recipe = space;
  with_recipe.recipes.push_back(passes::parse_sequence("test_split(factor=64)").value());
  const SearchResult searched = tournament_search(kernel, device.info(), with_recipe, settings);
  ASSERT_EQ(searched.candidates.size(), 2u);
  EXPECT_TRUE(searched.candidates[1].recipe);
  const TuneResult measured = tune_kernel(device, kernel, options_for(with_recipe, settings)).value();
  EXPECT_EQ(measured.entry.candidates_measured, 2u);
  const CandidateRecord* recipe = find_record(measured.entry, "test_split(factor=64)");
  ASSERT_NE(recipe, nullptr);
  EXPECT_EQ(recipe->status, CandidateStatus::Measured) << recipe->error;
}

// The heuristic choice is measured first and carries the cost model's
// estimate of it: that estimate scales the predictions of the candidates
// after it (the untuned kernel's above all), which keep a run the device
// cannot cut short from eating a short budget.
TEST(Tuner, TheHeuristicChoiceCarriesItsCostEstimate) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  const Result<HeuristicSchedule> heuristic = heuristic_schedule(kernel, device.info());
  ASSERT_TRUE(heuristic);
  ASSERT_FALSE(heuristic->sequence.empty()) << "the dummy is GPU-shaped: the heuristic splits the grid";
  AutotuneSettings settings = small_settings();
  settings.n_launches = 2;
  TuneOptions options;
  options.settings = settings;
  const TuneResult result = tune_kernel(device, kernel, options).value();
  ASSERT_FALSE(result.entry.candidates.empty());
  const CandidateRecord& first = result.entry.candidates.front();
  EXPECT_EQ(first.sequence, passes::to_string(heuristic->sequence));
  EXPECT_GT(first.cost_ns, 0) << "measured first, with its estimate";
}

// With a budget that gives candidates fewer runs than the three asked for,
// the finalists (within 15% of the fastest, at most three) so timed are
// timed once more before the choice, with what the main loop left for it;
// finalists timed in full keep their timing, and with a budget that times
// every candidate in full none is timed again.
TEST(Tuner, FinalistsTimedWithFewerRunsThanAskedAreTimedAgainBeforeTheChoice) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split("test_split", true, {256, 128});
  test::TestCoarsen coarsen;
  // Splits ranked first: test_split(factor=256) and (128) time alike.
  const SearchSpace space = test::planted_space({&split, &coarsen}, [](const ir::Kernel& kernel, const DeviceInfo&) {
    for (const ir::Op& op : kernel.ops)
      if (op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Local) return 500.0;
    return 1000.0;
  });
  for (const double budget_s : {0.7, 600.0}) {
    SCOPED_TRACE("budget " + std::to_string(budget_s) + " s");
    AutotuneSettings settings = small_settings();
    settings.budget_s = budget_s;
    TuneOptions options = options_for(space, settings);
    // The clock stands still until the first candidate is measured; from
    // then on every reading moves it by 20 ms: a candidate's first run
    // "takes" 20 ms of wall time, so where its share of the budget is under
    // twice that it keeps that one run (CandidateBench: what a further
    // launch costs is what the first cost beyond its run).
    auto now = std::make_shared<double>(100);
    auto step = std::make_shared<double>(0);
    options.clock = [now, step] { return *now += *step; };
    std::vector<CandidateRecord> retimed;
    std::map<std::string, std::uint32_t> first_runs;  // by sequence, before any re-timing
    std::uint32_t measured_before_retiming = 0;
    options.on_progress = [&](const TuneProgress& p) {
      if (p.phase == TuneProgress::Phase::Measure) {
        *step = 0.02;
        measured_before_retiming = p.measured;
        if (p.last != nullptr) first_runs[p.last->sequence] = p.last->runs;
      }
      if (p.phase != TuneProgress::Phase::Retime) return;
      ASSERT_NE(p.last, nullptr);
      EXPECT_EQ(p.retimed, retimed.size() + 1);
      retimed.push_back(*p.last);
    };
    const TuneResult result = tune_kernel(device, kernel, options).value();
    const CandidateRecord* winner = find_record(result.entry, result.entry.sequence);
    ASSERT_NE(winner, nullptr);
    EXPECT_EQ(result.entry.candidates_measured, measured_before_retiming) << "re-timing is not another candidate";
    if (budget_s > 100) {
      EXPECT_TRUE(retimed.empty()) << retimed.front().sequence;
      EXPECT_EQ(winner->runs, settings.repeats);
      continue;
    }
    ASSERT_FALSE(retimed.empty()) << "a finalist timed short";
    EXPECT_LE(retimed.size(), 3u);
    // The stop that kept time for the re-timing says so (else "0.2 s needed,
    // 1.0 s left" reads as a stop for nothing).
    bool stop_named_the_reserve = false;
    for (const std::string& w : result.warnings)
      stop_named_the_reserve |= w.starts_with("the budget ran out") && w.find("re-timing the finalists about") != std::string::npos;
    EXPECT_TRUE(stop_named_the_reserve);
    std::uint64_t fastest = 0;
    for (const CandidateRecord& r : result.entry.candidates)
      if (r.status == CandidateStatus::Measured && (fastest == 0 || r.median_ns < fastest)) fastest = r.median_ns;
    std::set<std::string> retimed_sequences;
    for (const CandidateRecord& r : retimed) {
      SCOPED_TRACE(r.sequence);
      retimed_sequences.insert(r.sequence);
      ASSERT_TRUE(first_runs.contains(r.sequence));
      EXPECT_LT(first_runs[r.sequence], settings.repeats) << "timed short at first";
      EXPECT_GT(r.runs, first_runs[r.sequence]) << "runs added to the first timing's";
      EXPECT_LE(static_cast<double>(r.median_ns), 1.15 * static_cast<double>(fastest)) << "a finalist";
      const CandidateRecord* stored = find_record(result.entry, r.sequence);
      ASSERT_NE(stored, nullptr);
      EXPECT_EQ(stored->runs, r.runs) << "the stored record holds both timings";
    }
    // The finalists timed in full the first time keep that timing.
    std::size_t full_finalists = 0;
    for (const CandidateRecord& r : result.entry.candidates) {
      if (r.status != CandidateStatus::Measured || first_runs[r.sequence] < settings.repeats ||
          static_cast<double>(r.median_ns) > 1.15 * static_cast<double>(fastest))
        continue;
      ++full_finalists;
      EXPECT_FALSE(retimed_sequences.contains(r.sequence)) << r.sequence;
      EXPECT_EQ(r.runs, settings.repeats) << r.sequence;
    }
    EXPECT_GE(full_finalists + retimed.size(), 2u) << "re-timed only where there is a choice";
    EXPECT_LE(result.entry.tune_seconds, budget_s);
  }
}
