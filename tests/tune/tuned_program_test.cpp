// Device::compile in Tuned mode: with tune_on_miss the first call tunes and
// stores, later calls replay the stored sequence (launching nothing) and get
// the very kernel that was measured; stale entries are tuned again; without
// tune_on_miss a miss falls back to the heuristic program and says why.
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/ir/hash.hpp"
#include "kiln/tune/tuner.hpp"
#include "tune/dummy_device.hpp"
#include "tune/nearby_records.hpp"
#include "tune/planted_space.hpp"

using namespace kiln;
using namespace kiln::tune;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kN = 1 << 13;

fs::path fresh_db() {
  const fs::path dir = fs::path(KILN_BUILD_DIR) / "tests" / "tune-program" /
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir / "tuning.sqlite";
}

double fewer_groups_first(const ir::Kernel& kernel, const DeviceInfo&) {
  double groups = 1;
  for (const ir::Op& op : kernel.ops)
    if (op.kind == ir::OpKind::Index && op.scope() == ir::Scope::Group)
      groups *= static_cast<double>(ir::constant_int(kernel, op.src[0]).value_or(1));
  return groups;
}

struct Fixture {
  Device device = test::dummy_device();
  ir::Kernel kernel = test::parse_ir(test::elementwise_ir(kN));
  test::TestSplit split;
  test::TestCoarsen coarsen;
  SearchSpace space = test::planted_space({&split, &coarsen}, fewer_groups_first);
  CompileOptions options{.mode = CompileMode::Tuned, .tune_on_miss = true};
  int progress_reports = 0;

  explicit Fixture(fs::path db) {
    options.tuning.settings.n_launches = 8;
    options.tuning.settings.repeats = 2;
    options.tuning.settings.max_sequence_length = 2;
    options.tuning.space = &space;
    options.tuning.db_path = std::move(db);
    options.tuning.kernel_name = "elementwise";
    options.tuning.on_progress = [this](const TuneProgress&) { ++progress_reports; };
  }

  // The program and what compile reported.
  struct Compiled {
    Program program;
    CompileReport report;
  };
  Result<Compiled> compile(const ir::Kernel& k) {
    KILN_TRY_ASSIGN(Program program, device.compile(k, options));
    CompileReport report = program.compile_report();
    return Compiled{std::move(program), std::move(report)};
  }
  Compiled compile() { return compile(kernel).value(); }
};

}  // namespace

TEST(CompileTuned, FirstCallTunesLaterCallsHitTheDatabase) {
  Fixture f(fresh_db());
  const Fixture::Compiled first = f.compile();
  EXPECT_TRUE(first.report.tuned_now);
  EXPECT_FALSE(first.report.from_database);
  EXPECT_GE(first.report.candidates_measured, 2u);
  EXPECT_GT(f.progress_reports, 0);
  ASSERT_TRUE(first.report.record.has_value());
  EXPECT_GT(first.report.record->id, 0);
  EXPECT_TRUE(first.program.valid());
  EXPECT_EQ(first.report.warnings, std::vector<std::string>{});

  f.progress_reports = 0;
  const int applied_before = f.split.applied + f.coarsen.applied;
  const Fixture::Compiled second = f.compile();
  EXPECT_TRUE(second.report.from_database);
  EXPECT_FALSE(second.report.tuned_now);
  EXPECT_EQ(second.report.candidates_measured, 0u);
  EXPECT_EQ(f.progress_reports, 0) << "no search, no measurement";
  EXPECT_LE(f.split.applied + f.coarsen.applied - applied_before,
            static_cast<int>(passes::parse_sequence(first.report.record->sequence)->size()))
      << "only the replay of the stored sequence";
  EXPECT_EQ(second.report.sequence, first.report.sequence);
  EXPECT_EQ(second.report.best_ns, first.report.best_ns);
  EXPECT_EQ(second.report.baseline_ns, first.report.baseline_ns);
  EXPECT_EQ(second.report.kernel, first.report.kernel) << "exactly what was measured is what is replayed";
  EXPECT_TRUE(second.program.valid());
}

TEST(CompileTuned, ReplayingTheStoredSequenceReproducesTheMeasuredHash) {
  Fixture f(fresh_db());
  const Fixture::Compiled tuned = f.compile();
  ASSERT_FALSE(tuned.report.sequence.empty()) << "a split wins on the dummy";
  const passes::OptSequence stored = passes::parse_sequence(tuned.report.record->sequence).value();
  const ir::Kernel replayed = f.space.lower(f.kernel, stored, f.device.info()).value();
  EXPECT_EQ(ir::hash_hex(replayed), tuned.report.record->final_hash);
  EXPECT_EQ(ir::hash_hex(tuned.report.kernel), tuned.report.record->final_hash);
  // Every measured candidate's recorded hash is what its sequence lowers to.
  for (const CandidateRecord& r : tuned.report.record->candidates) {
    const ir::Kernel k = f.space.lower(f.kernel, passes::parse_sequence(r.sequence).value(), f.device.info()).value();
    EXPECT_EQ(ir::hash_hex(k), r.final_hash) << r.sequence;
  }
}

TEST(CompileTuned, AStaleEntryIsTunedAgainWithAWarning) {
  const fs::path db_path = fresh_db();
  Fixture f(db_path);
  const Fixture::Compiled first = f.compile();
  {
    // As if a pass had changed what the sequence lowers to.
    TuningDb db = TuningDb::open(db_path).value();
    TuningEntry entry = *first.report.record;
    entry.final_hash = "0000000000000000";
    db.store(entry).value();
  }
  const Fixture::Compiled second = f.compile();
  EXPECT_TRUE(second.report.tuned_now);
  EXPECT_FALSE(second.report.from_database);
  ASSERT_EQ(second.report.warnings.size(), 1u);
  EXPECT_NE(second.report.warnings[0].find("is stale: replaying"), std::string::npos) << second.report.warnings[0];
  EXPECT_NE(second.report.warnings[0].find("tuning again"), std::string::npos) << second.report.warnings[0];
  EXPECT_EQ(TuningDb::open(db_path).value().find(first.report.record->key).value()->final_hash, first.report.record->final_hash)
      << "the new result replaced the stale one";
}

TEST(CompileTuned, AMissFallsBackToTheHeuristicProgramAndSaysWhy) {
  const fs::path db_path = fresh_db();
  Fixture f(db_path);
  f.options.tune_on_miss = false;
  const Fixture::Compiled miss = f.compile();
  EXPECT_EQ(miss.report.requested, CompileMode::Tuned);
  EXPECT_EQ(miss.report.used, CompileMode::Heuristic);
  EXPECT_FALSE(miss.report.tuned_now);
  EXPECT_FALSE(miss.report.from_database);
  // The heuristic schedule's sequence (the same as a plain compile's, below).
  EXPECT_NE(miss.report.fallback_reason.find("has no record of kernel " + ir::hash_hex(f.kernel)), std::string::npos)
      << miss.report.fallback_reason;
  EXPECT_EQ(f.progress_reports, 0);
  EXPECT_TRUE(TuningDb::open(db_path).value().list().value().empty());
  const Program heuristic = f.device.compile(f.kernel).value();
  EXPECT_EQ(miss.report.kernel, heuristic.compile_report().kernel);
  EXPECT_EQ(miss.report.sequence, heuristic.compile_report().sequence);

  f.options.tune_on_miss = true;
  const Fixture::Compiled tuned = f.compile();
  EXPECT_EQ(tuned.report.used, CompileMode::Tuned);
  f.options.tune_on_miss = false;
  const Fixture::Compiled hit = f.compile();
  EXPECT_TRUE(hit.report.from_database);
  EXPECT_EQ(hit.report.used, CompileMode::Tuned);
  EXPECT_TRUE(hit.report.fallback_reason.empty());
  EXPECT_EQ(hit.report.kernel, tuned.report.kernel);
}

TEST(CompileTuned, TheConfigsModeOffGivesHeuristicOptions) {
  Config config = parse_config("{}", "test.json").value();
  config.autotune.settings.mode = TuneMode::Off;
  EXPECT_EQ(tuned_compile_options(config).mode, CompileMode::Heuristic);
  config.autotune.settings.mode = TuneMode::DbOnly;
  EXPECT_EQ(tuned_compile_options(config).mode, CompileMode::Tuned);
  EXPECT_FALSE(tuned_compile_options(config).tune_on_miss);
  config.autotune.settings.mode = TuneMode::Tune;
  EXPECT_TRUE(tuned_compile_options(config).tune_on_miss);
}

TEST(CompileTuned, AnUnusableDatabaseCostsTheCacheNotTheProgram) {
  Fixture f(fresh_db());
  f.options.tuning.db_path = "/proc/kiln-cannot-create-this/tuning.sqlite";
  const Fixture::Compiled tuned = f.compile();
  EXPECT_TRUE(tuned.report.tuned_now);
  ASSERT_FALSE(tuned.report.warnings.empty());
  EXPECT_NE(tuned.report.warnings[0].find("tuning without it"), std::string::npos) << tuned.report.warnings[0];
}

TEST(CompileTuned, ADifferentDeviceOrSpaceIsADifferentKey) {
  Fixture f(fresh_db());
  const TuningKey key = tuning_key(f.device, f.kernel, f.space).value();
  EXPECT_EQ(key.kernel_hash, ir::hash_hex(f.kernel));
  EXPECT_NE(key.device_fingerprint.find("plugin=dummy;device=sim-gpu;"), std::string::npos) << key.device_fingerprint;
  EXPECT_NE(key.device_fingerprint.find("compiler=dummy "), std::string::npos) << key.device_fingerprint;
  test::TestWrong wrong;
  const SearchSpace other = test::planted_space({&f.split, &f.coarsen, &wrong}, fewer_groups_first);
  EXPECT_NE(tuning_key(f.device, f.kernel, other).value().space_version, key.space_version);
}

TEST(CompileTuned, KernelsThatCannotBeMeasuredGiveClearErrors) {
  Fixture f(fresh_db());
  // A buffer of unknown length: no test inputs can be made for it.
  const ir::Kernel unknown = test::parse_ir(R"(
%a = param 0 global f32[?]
%y = param 1 global_mut f32[16]
%n = const i64 16
%i = index group 0 %n
%x = load f32 %a[%i]
store f32 %y[%i], %x
)");
  Result<Fixture::Compiled> r = f.compile(unknown);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cannot make test inputs"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("has no element count"), std::string::npos) << r.error().message;
}

// A record of the same kernel at another shape seeds the new shape's
// tuning: looked up by structure (lengths aside), on the same device and
// space, and measured right after the heuristic choice.
TEST(CompileTuned, TheWinnerOfANearbyShapeSeedsTheNewShape) {
  Fixture f(fresh_db());
  const Fixture::Compiled first = f.compile();
  ASSERT_TRUE(first.report.record.has_value());
  const std::string winner = first.report.record->sequence;
  ASSERT_FALSE(winner.empty()) << "the planted space beats the untuned kernel";

  const ir::Kernel wider = test::parse_ir(test::elementwise_ir(2 * kN));
  std::string other_text = test::elementwise_ir(2 * kN);
  other_text.replace(other_text.find("mul f32"), 7, "sub f32");
  const ir::Kernel other = test::parse_ir(other_text);
  EXPECT_EQ(tune::detail::structure_hash(wider), tune::detail::structure_hash(f.kernel));
  EXPECT_NE(tune::detail::structure_hash(other), tune::detail::structure_hash(f.kernel)) << "another op is another kernel";
  const TuningDb db = TuningDb::open(f.options.tuning.db_path).value();
  const TuningKey wider_key = tuning_key(f.device, wider, f.space).value();
  EXPECT_EQ(tune::detail::nearby_winners(db, wider_key, wider, 3).value(), std::vector<std::string>{winner});
  EXPECT_TRUE(tune::detail::nearby_winners(db, tuning_key(f.device, other, f.space).value(), other, 3).value().empty());
  TuningKey elsewhere = wider_key;
  elsewhere.device_fingerprint += ";another";
  EXPECT_TRUE(tune::detail::nearby_winners(db, elsewhere, wider, 3).value().empty()) << "records of another device";

  // The new shape's tuning ranks by the opposite cost (the same
  // optimizations: the same space version) and has room for three
  // launches: the heuristic choice, the untuned kernel, and the seed.
  const SearchSpace reversed = test::planted_space(
      {&f.split, &f.coarsen}, [](const ir::Kernel& k, const DeviceInfo& d) { return 1 / fewer_groups_first(k, d); });
  ASSERT_EQ(reversed.version, f.space.version);
  f.options.tuning.space = &reversed;
  f.options.tuning.settings.n_launches = 3;
  const Fixture::Compiled second = f.compile(wider).value();
  ASSERT_TRUE(second.report.record.has_value());
  const std::vector<CandidateRecord>& measured = second.report.record->candidates;
  ASSERT_EQ(measured.size(), 3u);
  EXPECT_NE(measured[0].sequence, winner) << "the heuristic choice is another";
  EXPECT_EQ(measured[1].sequence, "");
  EXPECT_EQ(measured[2].sequence, winner);
}
