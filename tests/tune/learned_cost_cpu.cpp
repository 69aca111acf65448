// The learned cost model on real measurements: tunings on the C plugin
// (small sizes, short budgets) fill a database whose records the model
// trains on (kiln/tune/learned_cost.hpp). A binary of its own: the runtime
// initialises a plugin once per process, and the C plugin tests of
// kiln_tune_tests give it options (a cache folder they remove) that this
// test must not inherit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kiln/kernels/library.hpp"
#include "kiln/runtime.hpp"
#include "kiln/tune/learned_cost.hpp"
#include "kiln/tune/tuner.hpp"

using namespace kiln;
using namespace kiln::tune;
namespace fs = std::filesystem;

namespace {

fs::path fresh_db() {
  const fs::path dir = fs::path(KILN_BUILD_DIR) / "tests" / "learned-cost-cpu" /
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir / "tuning.sqlite";
}

}  // namespace

// Real tunings on the C plugin (small sizes, short budgets) fill a database
// whose records the model trains on: its held-out rank correlation is
// computed and printed beside the analytic model's. Timing noise decides
// the figures, so no threshold is asserted on them: only that the model was
// trained on these records and both correlations are finite.
TEST(LearnedCostOnCpu, RealTuningsTrainAModelWhoseHeldOutCorrelationIsReported) {
  const fs::path plugin = fs::path(KILN_PLUGIN_DIR) / "libkiln-c.so";
  if (!fs::exists(plugin)) GTEST_SKIP() << "the C plugin was not built (" << plugin << ")";
  const fs::path db_path = fresh_db();
  const fs::path config = db_path.parent_path() / "config.json";
  std::ofstream(config) << R"({"plugins": {"c": {"enabled": false}, "cblas": {"enabled": false},
      "cuda": {"enabled": false}, "opencl": {"enabled": false}, "vulkan": {"enabled": false},
      "dummy": {"enabled": false}, "cpu": {"library": ")" << plugin.string() << R"(", "options": {"cache_dir": ")"
                        << (db_path.parent_path() / "cache").string() << R"("}}}})";
  Result<Runtime> runtime = Runtime::create(load_config_file(config).value());
  ASSERT_TRUE(runtime.ok()) << runtime.error().to_string();
  Result<Device> device = runtime->device("cpu:0");
  if (!device) GTEST_SKIP() << "no C compiler device: " << device.error().to_string();

  const std::vector<std::pair<std::string, kernels::KernelSize>> tunings = {
      {"add", {.m = 1 << 16}},           {"exp-chain", {.m = 1 << 16}},     {"sum-rows", {.m = 128, .n = 128}},
      {"transpose", {.m = 128, .n = 128}}, {"softmax-rows", {.m = 64, .n = 256}}, {"rmsnorm-rows", {.m = 64, .n = 256}}};
  std::size_t measured = 0;
  for (const auto& [name, size] : tunings) {
    const kernels::StandardKernel k = kernels::make_standard_kernel(name, size).value();
    CompileOptions options{.mode = CompileMode::Tuned, .tune_on_miss = true};
    options.tuning.settings.budget_s = 2;
    options.tuning.settings.n_launches = 8;
    options.tuning.settings.repeats = 3;
    options.tuning.db_path = db_path;
    options.tuning.args = k.args;
    options.tuning.tolerance = 2 * k.tolerance;
    options.tuning.kernel_name = name;
    Result<Program> program = device->compile(k.kernel, options);
    ASSERT_TRUE(program.ok()) << name << ": " << program.error().to_string();
    measured += program->compile_report().candidates_measured;
  }
  TuningDb db = TuningDb::open(db_path).value();
  const std::vector<TuningEntry> entries = db.list(true).value();
  ASSERT_EQ(entries.size(), tunings.size());
  const std::vector<CostRecord> records = cost_records(entries, entries.front().key.device_fingerprint);
  // Fewer records than a tuning would wait for (30): this is about the
  // computation on real data, not the threshold.
  const DeviceCostModel chosen = device_cost_model(records, {.min_records = 10});
  const CostModelEvaluation& ev = chosen.evaluation;
  std::printf("learned cost model on %s: %zu records of %zu tunings (%zu candidates measured); held out on %zu "
              "tunings: Spearman learned %.3f, analytic %.3f; ranks by %s\n",
              device->id().c_str(), ev.records, ev.groups, measured, ev.held_out_groups, ev.learned_spearman,
              ev.analytic_spearman, chosen.model ? "learned" : "analytic");
  ASSERT_TRUE(ev.trained) << ev.why_not << " (" << ev.records << " records)";
  ASSERT_GT(ev.held_out_groups, 0u) << ev.why_not;
  EXPECT_TRUE(std::isfinite(ev.learned_spearman));
  EXPECT_TRUE(std::isfinite(ev.analytic_spearman));
  // The trained model itself predicts finite times for every record.
  const LearnedCostModel model = train_cost_model(records, {.min_records = 10}).value();
  for (const CostRecord& r : records) EXPECT_TRUE(std::isfinite(model.predict_log_ns(r.features)));
}
