// A tuning database that cannot be written (a read-only file or folder, or
// opened DbAccess::ReadOnly) is still read: `kiln run --tuned` uses its
// records instead of tuning again, and store/clear fail naming why.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kiln/tune/tuning_db.hpp"

using namespace kiln;
using namespace kiln::tune;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir() {
  const fs::path dir = fs::path(KILN_BUILD_DIR) / "tests" / "tune-db-ro" /
                       ::testing::UnitTest::GetInstance()->current_test_info()->name();
  if (fs::exists(dir)) fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TuningEntry entry(const std::string& hash) {
  TuningEntry e;
  e.key = {hash, "plugin=c;device=cpu", "1-abcdef01"};
  e.kernel_name = "add";
  e.kernel_text = "%0 = param 0 global f32[8]\n";
  e.device_id = "c:0";
  e.device_name = "cpu";
  e.sequence = "unroll(loop=0,factor=4)";
  e.final_hash = "0123456789abcdef";
  e.best_ns = 10;
  e.baseline_ns = 20;
  e.timer = "host";
  e.statistic = "median";
  return e;
}

// A database with one record, closed (SQLite folds its WAL back in).
fs::path written_db(const fs::path& dir) {
  const fs::path path = dir / "tuning.sqlite";
  TuningDb::open(path).value().store(entry("aaaa")).value();
  return path;
}

void expect_reads_and_refuses_writes(TuningDb& db) {
  EXPECT_TRUE(db.read_only());
  Result<std::optional<TuningEntry>> found = db.find(entry("aaaa").key);
  ASSERT_TRUE(found.ok()) << found.error().to_string();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->sequence, "unroll(loop=0,factor=4)");
  Result<std::int64_t> stored = db.store(entry("bbbb"));
  ASSERT_FALSE(stored.ok());
  EXPECT_NE(stored.error().message.find("is read-only"), std::string::npos) << stored.error().message;
  EXPECT_NE(stored.error().message.find("records cannot be stored"), std::string::npos) << stored.error().message;
  ClearFilter all;
  all.all = true;
  EXPECT_FALSE(db.clear(all).ok());
}

TEST(TuningDbReadOnly, OpenedReadOnlyItReadsAndRefusesWrites) {
  const fs::path path = written_db(fresh_dir());
  Result<TuningDb> db = TuningDb::open(path, DbAccess::ReadOnly);
  ASSERT_TRUE(db.ok()) << db.error().to_string();
  expect_reads_and_refuses_writes(*db);
  EXPECT_EQ(TuningDb::open(path).value().list().value().size(), 1u);  // nothing was written
}

TEST(TuningDbReadOnly, AReadOnlyFolderIsReadWithTheReasonGiven) {
  const fs::path dir = fresh_dir();
  const fs::path path = written_db(dir);
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec);
  if (::access(dir.c_str(), W_OK) == 0) {
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add);
    GTEST_SKIP() << "running as root (or with CAP_DAC_OVERRIDE): chmod does not stop writes here; "
                    "OpenedReadOnlyItReadsAndRefusesWrites covers the read-only open";
  }
  Result<TuningDb> db = TuningDb::open(path);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add);
  ASSERT_TRUE(db.ok()) << db.error().to_string();
  EXPECT_NE(db->read_only_reason().find("opened read-only"), std::string::npos) << db->read_only_reason();
  expect_reads_and_refuses_writes(*db);
}

TEST(TuningDbReadOnly, WhatCannotBeReadIsAnErrorNamingTheFile) {
  const fs::path dir = fresh_dir();
  Result<TuningDb> missing = TuningDb::open(dir / "absent.sqlite", DbAccess::ReadOnly);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("absent.sqlite"), std::string::npos) << missing.error().message;
  EXPECT_FALSE(fs::exists(dir / "absent.sqlite"));  // a read-only open creates nothing

  std::ofstream(dir / "empty.sqlite").flush();
  Result<TuningDb> empty = TuningDb::open(dir / "empty.sqlite", DbAccess::ReadOnly);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("has no kiln tables"), std::string::npos) << empty.error().message;
}

}  // namespace
