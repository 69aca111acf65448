// The learned cost model (kiln/tune/learned_cost.hpp): it recovers a known
// monotone relation between features and times and ranks held-out tunings
// by it; too few records leave the analytic model in charge; a tuning with
// enough records in its database is ranked by the learned model and stores
// its candidates' features for the next one.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "kiln/passes/cost.hpp"
#include "kiln/passes/cost_features.hpp"
#include "kiln/tune/learned_cost.hpp"
#include "kiln/tune/search_space.hpp"
#include "kiln/tune/tuner.hpp"
#include "tune/dummy_device.hpp"
#include "tune/planted_space.hpp"

using namespace kiln;
using namespace kiln::tune;
namespace fs = std::filesystem;

namespace {

// splitmix64 in [0, 1): the same records on every platform.
class Uniform {
 public:
  explicit Uniform(std::uint64_t seed) : state_(seed) {}
  double next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }

 private:
  std::uint64_t state_;
};

const std::size_t kFeatures = passes::cost_feature_names().size();

// The hidden truth: log time rises with feature 3 and falls with feature 7;
// each tuning (a kernel of its own size) adds a level of its own. The
// analytic estimate (feature 0) is unrelated noise here.
double true_log_time(const std::vector<double>& f) { return 2.0 * f[3] - 1.5 * f[7]; }

std::vector<CostRecord> planted_records(std::size_t tunings, std::size_t per_tuning, std::uint64_t seed) {
  Uniform u(seed);
  std::vector<CostRecord> records;
  for (std::size_t g = 0; g < tunings; ++g) {
    const double level = 8 + 10 * u.next();  // times of at least e^2 ns: whole ns in a record
    for (std::size_t i = 0; i < per_tuning; ++i) {
      CostRecord r;
      r.group = static_cast<std::int64_t>(g + 1);
      for (std::size_t j = 0; j < kFeatures; ++j) r.features.push_back(4 * u.next());
      r.time_ns = std::exp(level + true_log_time(r.features) + 0.05 * u.next());
      records.push_back(std::move(r));
    }
  }
  return records;
}

fs::path fresh_db() {
  const fs::path dir = fs::path(KILN_BUILD_DIR) / "tests" / "learned-cost" /
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir / "tuning.sqlite";
}

// Entries of `records`, as tunings of `fingerprint` would have stored them.
std::vector<TuningEntry> entries_of(const std::vector<CostRecord>& records, const std::string& fingerprint) {
  std::vector<TuningEntry> entries;
  for (const CostRecord& r : records) {
    if (entries.empty() || entries.back().id != r.group) {
      TuningEntry e;
      e.id = r.group;
      e.key = {"k" + std::to_string(r.group), fingerprint, "space"};
      e.kernel_name = "planted " + std::to_string(r.group);
      e.statistic = "median";
      e.timer = "model";
      entries.push_back(std::move(e));
    }
    CandidateRecord c;
    c.sequence = "s" + std::to_string(entries.back().candidates.size());
    c.median_ns = c.min_ns = static_cast<std::uint64_t>(r.time_ns);
    c.runs = 3;
    c.features = r.features;
    c.features_version = passes::kCostFeaturesVersion;
    entries.back().candidates.push_back(std::move(c));
  }
  return entries;
}

}  // namespace

TEST(CostFeatures, OneFiniteValuePerNameTheFirstBeingTheAnalyticEstimate) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(1 << 20));
  const std::vector<double> f = passes::cost_features(kernel, device.info());
  ASSERT_EQ(f.size(), kFeatures);
  EXPECT_DOUBLE_EQ(f[0], std::log1p(passes::estimate_cost(kernel, device.info()).total_ns));
  for (double v : f) EXPECT_TRUE(std::isfinite(v));
  // More work, larger features: twice the elements, more groups or threads and bytes.
  const std::vector<double> twice = passes::cost_features(test::parse_ir(test::elementwise_ir(1 << 21)), device.info());
  EXPECT_GT(twice[0], f[0]);
}

TEST(LearnedCost, SpearmanCountsRanksAndTies) {
  const std::vector<double> a = {1, 2, 3, 4}, up = {10, 20, 30, 1000}, down = {4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(spearman(a, up), 1.0);
  EXPECT_DOUBLE_EQ(spearman(a, down), -1.0);
  EXPECT_NEAR(spearman(std::vector<double>{1, 2, 2, 3}, std::vector<double>{1, 2, 3, 4}), 0.9487, 1e-4);
  EXPECT_TRUE(std::isnan(spearman(a, std::vector<double>{5, 5, 5, 5})));
}

TEST(LearnedCost, RecoversAMonotoneRelationAndRanksHeldOutTuningsByIt) {
  const std::vector<CostRecord> records = planted_records(40, 8, 1);
  const DeviceCostModel chosen = device_cost_model(records);
  const CostModelEvaluation& ev = chosen.evaluation;
  EXPECT_TRUE(ev.trained);
  EXPECT_EQ(ev.held_out_groups, 40u);
  EXPECT_GT(ev.learned_spearman, 0.95);
  EXPECT_LT(std::abs(ev.analytic_spearman), 0.3);
  ASSERT_TRUE(chosen.model.has_value()) << ev.why_not;
  EXPECT_TRUE(ev.use_learned);
  // The relation itself: the weights of features 3 and 7 dominate, with their signs.
  EXPECT_NEAR(chosen.model->weights[3], 2.0, 0.3);
  EXPECT_NEAR(chosen.model->weights[7], -1.5, 0.3);
  // A new tuning it never saw is ranked as the truth ranks it.
  const std::vector<CostRecord> unseen = planted_records(1, 12, 99);
  std::vector<double> predicted, truth;
  for (const CostRecord& r : unseen) {
    predicted.push_back(chosen.model->predict_ns(r.features));
    truth.push_back(r.time_ns);
  }
  EXPECT_GT(spearman(predicted, truth), 0.95);
  // Deterministic: the same records give the same model.
  EXPECT_EQ(device_cost_model(records).model->weights, chosen.model->weights);
}

TEST(LearnedCost, TooFewRecordsLeaveTheAnalyticModel) {
  const std::vector<CostRecord> records = planted_records(4, 7, 2);  // 28 < 30
  EXPECT_FALSE(train_cost_model(records).has_value());
  const DeviceCostModel chosen = device_cost_model(records);
  EXPECT_FALSE(chosen.evaluation.trained);
  EXPECT_FALSE(chosen.model.has_value());
  EXPECT_NE(chosen.evaluation.why_not.find("needs 30"), std::string::npos) << chosen.evaluation.why_not;
}

TEST(LearnedCost, AModelNoBetterThanTheAnalyticOneIsNotUsed) {
  // Times that follow the analytic estimate exactly: nothing to improve on.
  std::vector<CostRecord> records = planted_records(10, 6, 3);
  for (CostRecord& r : records) r.time_ns = std::exp(r.features[0]);
  const DeviceCostModel chosen = device_cost_model(records);
  EXPECT_TRUE(chosen.evaluation.trained);
  EXPECT_DOUBLE_EQ(chosen.evaluation.analytic_spearman, 1.0);
  EXPECT_FALSE(chosen.model.has_value());
  EXPECT_NE(chosen.evaluation.why_not.find("no better"), std::string::npos) << chosen.evaluation.why_not;
}

TEST(LearnedCost, RecordsAreTheTimedCandidatesWithCurrentFeaturesOfOneDevice) {
  std::vector<TuningEntry> entries = entries_of(planted_records(3, 4, 4), "dev-a");
  entries[1].key.device_fingerprint = "dev-b";          // another device: left out
  entries[2].candidates[0].status = CandidateStatus::Mismatch;  // not a valid time: left out
  entries[2].candidates[1].features_version = 0;        // old features: left out
  entries[2].candidates[2].features.pop_back();         // another feature count: left out
  const std::vector<CostRecord> records = cost_records(entries, "dev-a");
  // Entry 0's four; entry 2 keeps one record, too few to compare within it.
  EXPECT_EQ(records.size(), 4u);
  for (const CostRecord& r : records) EXPECT_EQ(r.group, entries[0].id);
}

// Through Device::compile: a database with enough records of the device
// makes the learned model rank the tuning, which stores every candidate's
// features; an empty one leaves the analytic model, saying why.
TEST(LearnedCost, ATuningIsRankedByTheLearnedModelWhenTheDatabaseHasEnoughRecords) {
  Device device = test::dummy_device();
  const ir::Kernel kernel = test::parse_ir(test::elementwise_ir(1 << 16));
  const TuningKey key = tuning_key(device, kernel, default_search_space()).value();
  CompileOptions options{.mode = CompileMode::Tuned, .tune_on_miss = true};
  options.tuning.settings.n_launches = 6;
  options.tuning.settings.repeats = 2;
  options.tuning.db_path = fresh_db();
  options.tuning.kernel_name = "elementwise";

  const Program analytic = device.compile(kernel, options).value();
  EXPECT_EQ(analytic.compile_report().ranked_by, "analytic");
  EXPECT_NE(analytic.compile_report().cost_model_note.find("needs 30"), std::string::npos)
      << analytic.compile_report().cost_model_note;
  // The candidates it measured carry this kiln's features.
  const TuningEntry stored = analytic.compile_report().record.value();
  std::size_t with_features = 0;
  for (const CandidateRecord& r : stored.candidates)
    if (r.features.size() == kFeatures && r.features_version == passes::kCostFeaturesVersion) ++with_features;
  EXPECT_GE(with_features, 2u);

  {
    TuningDb db = TuningDb::open(options.tuning.db_path).value();
    for (const TuningEntry& e : entries_of(planted_records(8, 6, 5), key.device_fingerprint)) db.store(e).value();
  }
  options.tuning.force = true;
  const Program learned = device.compile(kernel, options).value();
  EXPECT_EQ(learned.compile_report().ranked_by, "learned");
  EXPECT_NE(learned.compile_report().cost_model_note.find("learned from"), std::string::npos)
      << learned.compile_report().cost_model_note;

  options.tuning.settings.learned_cost_model = false;
  const Program off = device.compile(kernel, options).value();
  EXPECT_EQ(off.compile_report().ranked_by, "analytic");
}
