// The tuning database: round trips, replacement, listing and clearing,
// export/import, refusing what it cannot read, and safety with several
// processes (two writers at once; a writer killed mid-way).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "kiln/tune/tuning_db.hpp"
#include "tune/child_process.hpp"

using namespace kiln;
using namespace kiln::tune;
namespace fs = std::filesystem;

namespace {

fs::path fresh_db(const std::string& name) {
  const fs::path dir = fs::path(KILN_BUILD_DIR) / "tests" / "tune-db" /
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir / name;
}

TuningEntry sample_entry(const std::string& hash, const std::string& device = "plugin=c;device=cpu") {
  TuningEntry e;
  e.key = {hash, device, "1-abcdef01"};
  e.kernel_name = "matmul 64x64x64 f32";
  e.kernel_text = "%0 = param 0 global f32[4096]\n%1 = param 1 global_mut f32[4096]\n";
  e.device_id = "c:0";
  e.device_name = "cpu";
  e.sequence = "split_local(axis=0,factor=64); unroll(loop=0,factor=4)";
  e.final_hash = "0123456789abcdef";
  e.best_ns = 12345;
  e.baseline_ns = 99999;
  e.timer = "host";
  e.statistic = "median";
  e.candidates_measured = 3;
  e.tune_seconds = 1.5;
  CandidateRecord untuned{"", "fedcba9876543210", 1e5, 99000, 99999, 5, CandidateStatus::Measured, "", 0};
  CandidateRecord best{e.sequence, e.final_hash, 2e4, 12000, 12345, 5, CandidateStatus::Measured, "", 1e-7};
  best.features = {9.25, 0.1234567890123456789, -3.5e-300, 0};  // every digit survives the text form
  best.features_version = 1;
  CandidateRecord wrong{"wrong(x=1)", "1111111111111111", 1e3, 10, 11, 5, CandidateStatus::Mismatch,
                        "output %1 (slot 1) differs", 0.5};
  CandidateRecord failed{"vectorize(width=8)", "2222222222222222", 5e3, 0, 0, 0, CandidateStatus::CompileFailed,
                         "plugin 'c': compile: unsupported", 0};
  e.candidates = {untuned, best, wrong, failed};
  return e;
}

// What store() fills in: the row id and (when empty) the time.
TuningEntry as_stored(TuningEntry e, const TuningEntry& stored) {
  e.id = stored.id;
  if (e.created_at.empty()) e.created_at = stored.created_at;
  return e;
}

std::string sqlite_text(const fs::path& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

void sqlite_exec(const fs::path& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &error);
  const std::string message = error != nullptr ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

// A database as kiln wrote it before schema 2 (no features): one entry, two candidates.
void write_schema_1_database(const fs::path& path) {
  sqlite_exec(path, R"sql(
CREATE TABLE entries (
  id INTEGER PRIMARY KEY, kernel_hash TEXT NOT NULL, device_fingerprint TEXT NOT NULL, space_version TEXT NOT NULL,
  kernel_name TEXT NOT NULL, kernel_text TEXT NOT NULL, device_id TEXT NOT NULL, device_name TEXT NOT NULL,
  sequence TEXT NOT NULL, final_hash TEXT NOT NULL, best_ns INTEGER NOT NULL, baseline_ns INTEGER NOT NULL,
  timer TEXT NOT NULL, statistic TEXT NOT NULL, candidates_measured INTEGER NOT NULL, tune_seconds REAL NOT NULL,
  created_at TEXT NOT NULL, UNIQUE (kernel_hash, device_fingerprint, space_version));
CREATE TABLE candidates (
  entry_id INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE, position INTEGER NOT NULL,
  sequence TEXT NOT NULL, final_hash TEXT NOT NULL, cost_ns REAL NOT NULL, min_ns INTEGER NOT NULL,
  median_ns INTEGER NOT NULL, runs INTEGER NOT NULL, status TEXT NOT NULL, error TEXT NOT NULL,
  max_error REAL NOT NULL, PRIMARY KEY (entry_id, position));
INSERT INTO entries VALUES (1, 'aaaa', 'plugin=c;device=cpu', '1-abcdef01', 'old add', 'text', 'c:0', 'cpu',
  'unroll(loop=0,factor=4)', 'ffff', 100, 400, 'host', 'median', 2, 1.0, '2026-01-01T00:00:00Z');
INSERT INTO candidates VALUES (1, 0, '', 'eeee', 5e3, 390, 400, 5, 'measured', '', 0);
INSERT INTO candidates VALUES (1, 1, 'unroll(loop=0,factor=4)', 'ffff', 1e3, 90, 100, 5, 'measured', '', 0);
PRAGMA user_version=1;
)sql");
}

ClearFilter filter(bool all, std::string kernel, std::string device) {
  ClearFilter f;
  f.all = all;
  f.kernel = std::move(kernel);
  f.device = std::move(device);
  return f;
}

std::string writer_path() { return std::string(KILN_BUILD_DIR) + "/bin/kiln_tune_db_writer"; }

}  // namespace

TEST(TuningDb, StoresAndFindsAnEntryWithItsCandidates) {
  const fs::path path = fresh_db("tuning.sqlite");
  TuningDb db = TuningDb::open(path).value();
  const TuningEntry entry = sample_entry("aaaa000000000001");
  const std::int64_t id = db.store(entry).value();
  EXPECT_GT(id, 0);

  const std::optional<TuningEntry> found = db.find(entry.key).value();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, id);
  EXPECT_EQ(found->created_at.size(), std::string("2026-01-01T00:00:00Z").size()) << found->created_at;
  EXPECT_EQ(*found, as_stored(entry, *found));
  EXPECT_EQ(db.get(id).value(), found);

  TuningKey other = entry.key;
  other.space_version = "2-abcdef01";
  EXPECT_FALSE(db.find(other).value().has_value());
  other = entry.key;
  other.device_fingerprint += ";driver=2";
  EXPECT_FALSE(db.find(other).value().has_value());
}

TEST(TuningDb, PersistsAcrossConnectionsInWalMode) {
  const fs::path path = fresh_db("tuning.sqlite");
  const TuningEntry entry = sample_entry("aaaa000000000002");
  { TuningDb::open(path).value().store(entry).value(); }
  TuningDb reopened = TuningDb::open(path).value();
  const std::optional<TuningEntry> found = reopened.find(entry.key).value();
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->candidates.size(), 4u);
  EXPECT_EQ(sqlite_text(path, "PRAGMA journal_mode"), "wal");
}

TEST(TuningDb, StoringAKeyAgainReplacesItsEntryAndCandidates) {
  TuningDb db = TuningDb::open(fresh_db("tuning.sqlite")).value();
  TuningEntry first = sample_entry("aaaa000000000003");
  db.store(first).value();
  TuningEntry second = first;
  second.sequence = "";
  second.best_ns = 777;
  second.candidates.resize(1);
  db.store(second).value();

  const std::vector<TuningEntry> all = db.list(true).value();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].best_ns, 777u);
  EXPECT_EQ(all[0].sequence, "");
  EXPECT_EQ(all[0].candidates.size(), 1u);
}

TEST(TuningDb, ListsAndClearsByKernelDeviceOrAll) {
  TuningDb db = TuningDb::open(fresh_db("tuning.sqlite")).value();
  TuningEntry a = sample_entry("abc0000000000001");
  TuningEntry b = sample_entry("abd0000000000002");
  b.kernel_name = "exp-chain 4096 f32";
  TuningEntry c = sample_entry("abc0000000000001", "plugin=dummy;device=sim");
  c.device_id = "dummy:0";
  c.device_name = "sim";
  for (const TuningEntry& e : {a, b, c}) db.store(e).value();

  const std::vector<TuningEntry> listed = db.list().value();
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_TRUE(listed[0].candidates.empty()) << "candidates only on request";
  EXPECT_LT(listed[0].id, listed[1].id);

  Result<std::size_t> nothing = db.clear({});
  ASSERT_FALSE(nothing.ok());
  EXPECT_NE(nothing.error().message.find("name a kernel, a device, or all"), std::string::npos);

  EXPECT_EQ(db.clear(filter(false, "abc", "dummy:0")).value(), 1u);  // both filters must match
  EXPECT_EQ(db.clear(filter(false, "exp-chain", "")).value(), 1u);                // by name prefix
  ASSERT_EQ(db.list().value().size(), 1u);
  EXPECT_EQ(db.list().value()[0].key, a.key);
  EXPECT_EQ(db.clear(filter(true, "", "")).value(), 1u);
  EXPECT_TRUE(db.list().value().empty());
  EXPECT_EQ(sqlite_text(db.path(), "SELECT count(*) FROM candidates"), "0") << "candidates go with their entry";
}

TEST(TuningDb, ExportImportRoundTrip) {
  TuningDb source = TuningDb::open(fresh_db("source.sqlite")).value();
  TuningEntry a = sample_entry("aaaa000000000004");
  a.kernel_name = "quotes \" and \\ and\nnewlines";
  const TuningEntry b = sample_entry("aaaa000000000005");
  source.store(a).value();
  source.store(b).value();
  const std::vector<TuningEntry> exported = source.list(true).value();
  const std::string text = entries_to_json(exported);

  const std::vector<TuningEntry> parsed = entries_from_json(text, "export.json").value();
  ASSERT_EQ(parsed.size(), 2u);
  TuningDb target = TuningDb::open(fresh_db("target.sqlite")).value();
  for (const TuningEntry& e : parsed) target.store(e).value();
  const std::vector<TuningEntry> imported = target.list(true).value();
  ASSERT_EQ(imported.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    TuningEntry expected = exported[i];
    expected.id = imported[i].id;
    EXPECT_EQ(imported[i], expected) << i;  // created_at kept from the export
  }
}

TEST(TuningDb, ImportErrorsNameTheSourceAndField) {
  Result<std::vector<TuningEntry>> malformed = entries_from_json("{\"kiln_tuning_db\": 1, ", "in.json");
  ASSERT_FALSE(malformed.ok());
  EXPECT_NE(malformed.error().message.find("in.json: malformed JSON"), std::string::npos);

  Result<std::vector<TuningEntry>> foreign = entries_from_json("{\"entries\": []}", "in.json");
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.error().message.find("not a kiln tuning export"), std::string::npos);

  const TuningEntry e = sample_entry("aaaa000000000006");
  std::string text = entries_to_json(std::span(&e, 1));
  const std::string field = "\"best_ns\":12345";
  ASSERT_NE(text.find(field), std::string::npos);
  text.replace(text.find(field), field.size(), "\"best_ns\":\"fast\"");
  Result<std::vector<TuningEntry>> wrong = entries_from_json(text, "in.json");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("in.json: entries[0].best_ns: expected an integer"), std::string::npos)
      << wrong.error().message;

  text = entries_to_json(std::span(&e, 1));
  const std::string status = "\"status\":\"mismatch\"";
  text.replace(text.find(status), status.size(), "\"status\":\"great\"");
  Result<std::vector<TuningEntry>> bad_status = entries_from_json(text, "in.json");
  ASSERT_FALSE(bad_status.ok());
  EXPECT_NE(bad_status.error().message.find("entries[0].candidates[2].status: unknown status 'great'"),
            std::string::npos)
      << bad_status.error().message;
}

TEST(TuningDb, RefusesAFileThatIsNotADatabase) {
  const fs::path path = fresh_db("notes.sqlite");
  std::ofstream(path) << "these are my notes, not a database\n" << std::string(4096, 'x');
  Result<TuningDb> db = TuningDb::open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, ErrorCode::Io);
  EXPECT_NE(db.error().message.find(path.string()), std::string::npos) << db.error().message;
}

TEST(TuningDb, RefusesASchemaFromANewerKiln) {
  const fs::path path = fresh_db("tuning.sqlite");
  { TuningDb::open(path).value(); }
  sqlite_text(path, "PRAGMA user_version=99");
  Result<TuningDb> db = TuningDb::open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message.find("schema version 99 was written by a newer kiln"), std::string::npos)
      << db.error().message;
}

TEST(TuningDb, ASchema1DatabaseIsReadAsItIsAndGainsFeaturesWhenOpenedForWriting) {
  const fs::path path = fresh_db("tuning.sqlite");
  write_schema_1_database(path);
  {
    // Read-only: no change to the file, the old records with no features.
    TuningDb db = TuningDb::open(path, DbAccess::ReadOnly).value();
    const std::vector<TuningEntry> entries = db.list(true).value();
    ASSERT_EQ(entries.size(), 1u);
    ASSERT_EQ(entries[0].candidates.size(), 2u);
    EXPECT_TRUE(entries[0].candidates[1].features.empty());
    EXPECT_EQ(entries[0].candidates[1].median_ns, 100u);
  }
  EXPECT_EQ(sqlite_text(path, "PRAGMA user_version"), "1");
  TuningDb db = TuningDb::open(path).value();
  EXPECT_EQ(sqlite_text(path, "PRAGMA user_version"), "2");
  const std::optional<TuningEntry> old = db.find({"aaaa", "plugin=c;device=cpu", "1-abcdef01"}).value();
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->kernel_name, "old add");
  EXPECT_EQ(old->candidates.size(), 2u);
  EXPECT_EQ(old->candidates[0].features_version, 0u);
  // New entries keep their features beside the old ones.
  const TuningEntry e = sample_entry("bbbb");
  db.store(e).value();
  const std::optional<TuningEntry> back = db.find(e.key).value();
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->candidates[1].features, e.candidates[1].features);
  EXPECT_EQ(back->candidates[1].features_version, 1u);
  EXPECT_EQ(db.list().value().size(), 2u);
  EXPECT_EQ(db.list(false, "plugin=c;device=cpu").value().size(), 2u);
  EXPECT_EQ(db.list(false, "plugin=c;device=other").value().size(), 0u);
}

TEST(TuningDb, CreatesMissingFolders) {
  const fs::path path = fresh_db("x") / "deeper" / "still" / "tuning.sqlite";
  fs::remove_all(path.parent_path().parent_path().parent_path());
  ASSERT_TRUE(TuningDb::open(path).ok());
  EXPECT_TRUE(fs::exists(path));
}

TEST(TuningDbProcesses, TwoProcessesWriteAtOnce) {
  const fs::path path = fresh_db("tuning.sqlite");
  constexpr int kEntries = 150;
  // Two on different keys, two on the same keys (each store replaces).
  test::ChildProcess a({writer_path(), path.string(), "a", std::to_string(kEntries), "3"});
  test::ChildProcess b({writer_path(), path.string(), "b", std::to_string(kEntries), "3"});
  test::ChildProcess c({writer_path(), path.string(), "same", std::to_string(kEntries), "2"});
  test::ChildProcess d({writer_path(), path.string(), "same", std::to_string(kEntries), "2"});
  ASSERT_TRUE(a.started() && b.started() && c.started() && d.started());
  for (test::ChildProcess* p : {&a, &b, &c, &d}) {
    const std::string out = p->read_all();
    EXPECT_EQ(p->wait(), 0) << out;
    EXPECT_NE(out.find("stored " + std::to_string(kEntries - 1)), std::string::npos);
  }

  EXPECT_EQ(sqlite_text(path, "PRAGMA integrity_check"), "ok");
  TuningDb db = TuningDb::open(path).value();
  const std::vector<TuningEntry> all = db.list(true).value();
  EXPECT_EQ(all.size(), 3u * kEntries);
  std::set<std::string> hashes;
  for (const TuningEntry& e : all) {
    hashes.insert(e.key.kernel_hash);
    EXPECT_EQ(e.candidates.size(), e.candidates_measured) << e.key.kernel_hash;
  }
  EXPECT_EQ(hashes.size(), 3u * kEntries);
}

TEST(TuningDbProcesses, AWriterKilledMidWayLeavesACompleteDatabase) {
  const fs::path path = fresh_db("tuning.sqlite");
  std::size_t committed = 0;
  for (int round = 0; round < 3; ++round) {
    // COUNT 0: writes until killed. Candidates are large, so the kill most
    // likely lands inside a transaction.
    test::ChildProcess writer({writer_path(), path.string(), "round" + std::to_string(round), "0", "40"});
    ASSERT_TRUE(writer.started());
    std::string line;
    for (int i = 0; i < 10 + 7 * round; ++i) ASSERT_TRUE(writer.read_line(line));
    writer.kill_now();
    EXPECT_EQ(writer.wait(), 128 + SIGKILL);
    committed += static_cast<std::size_t>(10 + 7 * round);

    EXPECT_EQ(sqlite_text(path, "PRAGMA integrity_check"), "ok");
    TuningDb db = TuningDb::open(path).value();
    const std::vector<TuningEntry> all = db.list(true).value();
    EXPECT_GE(all.size(), committed) << "every commit it reported survives";
    for (const TuningEntry& e : all) {
      if (e.key.kernel_hash.rfind("round", 0) != 0) continue;
      EXPECT_EQ(e.candidates.size(), 40u) << "no entry is half written: " << e.key.kernel_hash;
    }
    committed = all.size();
    db.store(sample_entry("after" + std::to_string(round))).value();  // and it stays writable
    ++committed;
  }
}
