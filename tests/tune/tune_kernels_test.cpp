// tune_kernels (kiln/tune/tune_kernels.hpp): several kernels under one
// budget on the dummy device's simulated timings. A kernel the database
// has costs nothing; the costlier of the others (untuned time x weight) is
// tuned first with more than an equal share; every share comes out of what
// is left of the budget at the time; a kernel that fails keeps its error
// while the others are tuned.
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/tune/tune_kernels.hpp"
#include "tune/dummy_device.hpp"
#include "tune/planted_space.hpp"

using namespace kiln;
using namespace kiln::tune;
namespace fs = std::filesystem;

namespace {

fs::path fresh_db() {
  const fs::path dir = fs::path(KILN_BUILD_DIR) / "tests" / "tune-kernels" /
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir / "tuning.sqlite";
}

struct Fixture {
  Device device = test::dummy_device();
  test::TestSplit split;
  test::TestCoarsen coarsen;
  SearchSpace space = test::planted_space({&split, &coarsen}, [](const ir::Kernel&, const DeviceInfo&) { return 1.0; });
  TuneOptions options;

  explicit Fixture(double budget_s) {
    options.settings.n_launches = 6;
    options.settings.repeats = 2;
    options.settings.max_sequence_length = 2;
    options.settings.budget_s = budget_s;
    options.space = &space;
    options.db_path = fresh_db();
  }
  static KernelTask task(const std::string& name, std::int64_t n, double weight = 1) {
    return {name, test::parse_ir(test::elementwise_ir(n)), std::nullopt, 0, weight};
  }
};

TEST(TuneKernels, TheCostlierKernelGoesFirstWithTheLargerShareAndSharesComeOutOfWhatIsLeft) {
  Fixture f(4);
  const std::vector<KernelTask> tasks = {Fixture::task("small", 1 << 10), Fixture::task("large", 1 << 16)};
  std::vector<TaskProgress> seen;
  const auto outcomes = tune_kernels(f.device, tasks, f.options, [&](const TaskProgress& p) { seen.push_back(p); });
  ASSERT_EQ(outcomes.size(), 2u);
  for (const KernelTaskOutcome& o : outcomes) {
    ASSERT_FALSE(o.error) << o.name << ": " << o.error->to_string();
    ASSERT_TRUE(o.program.has_value()) << o.name;
    EXPECT_FALSE(o.from_database) << o.name;
    EXPECT_GT(o.untuned_ns, 0u) << o.name;
    EXPECT_GT(o.best_ns, 0u) << o.name;
  }
  EXPECT_EQ(outcomes[0].name, "small");  // outcomes in the order given
  EXPECT_GT(outcomes[1].untuned_ns, outcomes[0].untuned_ns);
  ASSERT_EQ(seen.size(), 3u);  // one per kernel, then the end
  EXPECT_EQ(seen[0].name, "large");
  EXPECT_EQ(seen[1].name, "small");
  EXPECT_EQ(seen[2].index, 2u);
  EXPECT_EQ(seen[2].total, 2u);
  EXPECT_GT(seen[0].budget_s, 0.5 * (4.0 - seen[0].elapsed_s));  // more than an equal share of what was left
  for (int i = 0; i < 2; ++i) {
    EXPECT_LE(seen[i].budget_s, 4.0 - seen[i].elapsed_s + 1e-9) << i;
    EXPECT_EQ(seen[i].total_budget_s, 4.0);
  }
  EXPECT_EQ(outcomes[1].budget_s, seen[0].budget_s);
  EXPECT_EQ(outcomes[0].budget_s, seen[1].budget_s);
}

TEST(TuneKernels, AWeightMakesACheapKernelTheCostlierOne) {
  Fixture f(2);
  const std::vector<KernelTask> tasks = {Fixture::task("small, run 1000 times", 1 << 10, 1000),
                                         Fixture::task("large", 1 << 14)};
  std::vector<TaskProgress> seen;
  const auto outcomes = tune_kernels(f.device, tasks, f.options, [&](const TaskProgress& p) { seen.push_back(p); });
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].name, "small, run 1000 times");
  EXPECT_GT(seen[0].budget_s, 0.5 * (2.0 - seen[0].elapsed_s));
  EXPECT_LT(outcomes[0].untuned_ns, outcomes[1].untuned_ns);  // cheaper per run, costlier in all
}

TEST(TuneKernels, KernelsInTheDatabaseCostNothingAndAFailureStaysWithItsKernel) {
  Fixture f(2);
  const std::vector<KernelTask> first = {Fixture::task("a", 1 << 12)};
  ASSERT_TRUE(tune_kernels(f.device, first, f.options)[0].program.has_value());

  // "a" again (from the database), and a kernel the dummy device cannot
  // run: past its memory (the heuristic compile refuses it).
  KernelTask too_big{"too big", test::parse_ir("%0 = param 0 global_mut f32[1]\n%1 = storage local f32[1073741824]\n"
                                               "%2 = const i64 0\n%3 = const f32 1\nstore f32 %1[%2], %3\n"
                                               "%5 = load f32 %1[%2]\nstore f32 %0[%2], %5\n"),
                     std::nullopt, 0, 1};
  const std::vector<KernelTask> tasks = {Fixture::task("a", 1 << 12), too_big, Fixture::task("b", 1 << 13)};
  const auto outcomes = tune_kernels(f.device, tasks, f.options);
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_TRUE(outcomes[0].from_database);
  EXPECT_EQ(outcomes[0].budget_s, 0.0);
  EXPECT_TRUE(outcomes[0].program.has_value());
  ASSERT_TRUE(outcomes[1].error.has_value());
  EXPECT_FALSE(outcomes[1].program.has_value());
  EXPECT_NE(outcomes[1].error->message.find("local memory"), std::string::npos) << outcomes[1].error->to_string();
  EXPECT_TRUE(outcomes[2].program.has_value()) << (outcomes[2].error ? outcomes[2].error->to_string() : "");
  EXPECT_FALSE(outcomes[2].from_database);
}

}  // namespace
