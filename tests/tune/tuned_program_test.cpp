// get_tuned_program: the first call tunes and stores, later calls replay the
// stored sequence (launching nothing) and get the very kernel that was
// measured; stale entries are tuned again; db-only and off never tune.
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/ir/hash.hpp"
#include "kiln/tune/tuner.hpp"
#include "tune/dummy_device.hpp"
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
  TuneOptions options;
  int progress_reports = 0;

  explicit Fixture(fs::path db) {
    options.settings.n_launches = 8;
    options.settings.repeats = 2;
    options.settings.max_sequence_length = 2;
    options.space = &space;
    options.db_path = std::move(db);
    options.kernel_name = "elementwise";
    options.on_progress = [this](const TuneProgress&) { ++progress_reports; };
  }
};

}  // namespace

TEST(TunedProgram, FirstCallTunesLaterCallsHitTheDatabase) {
  Fixture f(fresh_db());
  const TunedProgram first = get_tuned_program(f.device, f.kernel, f.options).value();
  EXPECT_TRUE(first.tuned);
  EXPECT_FALSE(first.from_cache);
  EXPECT_GE(first.candidates_measured, 2u);
  EXPECT_GT(f.progress_reports, 0);
  ASSERT_TRUE(first.entry.has_value());
  EXPECT_GT(first.entry->id, 0);
  EXPECT_TRUE(first.program.valid());
  EXPECT_EQ(first.warnings, std::vector<std::string>{});

  f.progress_reports = 0;
  const int applied_before = f.split.applied + f.coarsen.applied;
  const TunedProgram second = get_tuned_program(f.device, f.kernel, f.options).value();
  EXPECT_TRUE(second.from_cache);
  EXPECT_FALSE(second.tuned);
  EXPECT_EQ(second.candidates_measured, 0u);
  EXPECT_EQ(f.progress_reports, 0) << "no search, no measurement";
  EXPECT_LE(f.split.applied + f.coarsen.applied - applied_before,
            static_cast<int>(passes::parse_sequence(first.entry->sequence)->size()))
      << "only the replay of the stored sequence";
  EXPECT_EQ(second.sequence, first.sequence);
  EXPECT_EQ(second.best_ns, first.best_ns);
  EXPECT_EQ(second.baseline_ns, first.baseline_ns);
  EXPECT_EQ(second.kernel, first.kernel) << "exactly what was measured is what is replayed";
  EXPECT_TRUE(second.program.valid());
}

TEST(TunedProgram, ReplayingTheStoredSequenceReproducesTheMeasuredHash) {
  Fixture f(fresh_db());
  const TunedProgram tuned = get_tuned_program(f.device, f.kernel, f.options).value();
  ASSERT_FALSE(tuned.sequence.empty()) << "a split wins on the dummy";
  const passes::OptSequence stored = passes::parse_sequence(tuned.entry->sequence).value();
  const ir::Kernel replayed = f.space.lower(f.kernel, stored, f.device.info()).value();
  EXPECT_EQ(ir::hash_hex(replayed), tuned.entry->final_hash);
  EXPECT_EQ(ir::hash_hex(tuned.kernel), tuned.entry->final_hash);
  // Every measured candidate's recorded hash is what its sequence lowers to.
  for (const CandidateRecord& r : tuned.entry->candidates) {
    const ir::Kernel k = f.space.lower(f.kernel, passes::parse_sequence(r.sequence).value(), f.device.info()).value();
    EXPECT_EQ(ir::hash_hex(k), r.final_hash) << r.sequence;
  }
}

TEST(TunedProgram, AStaleEntryIsTunedAgainWithAWarning) {
  const fs::path db_path = fresh_db();
  Fixture f(db_path);
  const TunedProgram first = get_tuned_program(f.device, f.kernel, f.options).value();
  {
    // As if a pass had changed what the sequence lowers to.
    TuningDb db = TuningDb::open(db_path).value();
    TuningEntry entry = *first.entry;
    entry.final_hash = "0000000000000000";
    db.store(entry).value();
  }
  const TunedProgram second = get_tuned_program(f.device, f.kernel, f.options).value();
  EXPECT_TRUE(second.tuned);
  EXPECT_FALSE(second.from_cache);
  ASSERT_EQ(second.warnings.size(), 1u);
  EXPECT_NE(second.warnings[0].find("is stale: replaying"), std::string::npos) << second.warnings[0];
  EXPECT_NE(second.warnings[0].find("tuning again"), std::string::npos) << second.warnings[0];
  EXPECT_EQ(TuningDb::open(db_path).value().find(first.entry->key).value()->final_hash, first.entry->final_hash)
      << "the new result replaced the stale one";
}

TEST(TunedProgram, DbOnlyNeverTunes) {
  const fs::path db_path = fresh_db();
  Fixture f(db_path);
  f.options.settings.mode = TuneMode::DbOnly;
  const TunedProgram miss = get_tuned_program(f.device, f.kernel, f.options).value();
  EXPECT_FALSE(miss.tuned);
  EXPECT_FALSE(miss.from_cache);
  EXPECT_TRUE(miss.sequence.empty());
  EXPECT_EQ(f.progress_reports, 0);
  EXPECT_TRUE(TuningDb::open(db_path).value().list().value().empty());
  EXPECT_EQ(miss.kernel, f.space.lower(f.kernel, {}, f.device.info()).value());

  f.options.settings.mode = TuneMode::Tune;
  const TunedProgram tuned = get_tuned_program(f.device, f.kernel, f.options).value();
  f.options.settings.mode = TuneMode::DbOnly;
  const TunedProgram hit = get_tuned_program(f.device, f.kernel, f.options).value();
  EXPECT_TRUE(hit.from_cache);
  EXPECT_EQ(hit.kernel, tuned.kernel);
}

TEST(TunedProgram, OffUsesTheUntunedKernelAndNoDatabase) {
  const fs::path db_path = fresh_db();
  Fixture f(db_path);
  f.options.settings.mode = TuneMode::Off;
  const TunedProgram off = get_tuned_program(f.device, f.kernel, f.options).value();
  EXPECT_FALSE(off.tuned);
  EXPECT_FALSE(off.from_cache);
  EXPECT_TRUE(off.program.valid());
  EXPECT_EQ(off.kernel, f.space.lower(f.kernel, {}, f.device.info()).value());
  EXPECT_FALSE(fs::exists(db_path));
}

TEST(TunedProgram, AnUnusableDatabaseCostsTheCacheNotTheProgram) {
  Fixture f(fresh_db());
  f.options.db_path = "/proc/kiln-cannot-create-this/tuning.sqlite";
  const TunedProgram tuned = get_tuned_program(f.device, f.kernel, f.options).value();
  EXPECT_TRUE(tuned.tuned);
  ASSERT_FALSE(tuned.warnings.empty());
  EXPECT_NE(tuned.warnings[0].find("tuning without it"), std::string::npos) << tuned.warnings[0];
}

TEST(TunedProgram, ADifferentDeviceOrSpaceIsADifferentKey) {
  Fixture f(fresh_db());
  const TuningKey key = tuning_key(f.device, f.kernel, f.space).value();
  EXPECT_EQ(key.kernel_hash, ir::hash_hex(f.kernel));
  EXPECT_NE(key.device_fingerprint.find("plugin=dummy;device=sim-gpu;"), std::string::npos) << key.device_fingerprint;
  EXPECT_NE(key.device_fingerprint.find("compiler=dummy "), std::string::npos) << key.device_fingerprint;
  test::TestWrong wrong;
  const SearchSpace other = test::planted_space({&f.split, &f.coarsen, &wrong}, fewer_groups_first);
  EXPECT_NE(tuning_key(f.device, f.kernel, other).value().space_version, key.space_version);
}

TEST(TunedProgram, KernelsThatCannotBeMeasuredGiveClearErrors) {
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
  Result<TunedProgram> r = get_tuned_program(f.device, unknown, f.options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cannot make test inputs"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("has no element count"), std::string::npos) << r.error().message;
}
