// The tuning database on SQLite: schema, lookups and atomic replacement of
// an entry with its candidates.
#include "kiln/tune/tuning_db.hpp"

#include "sqlite_connection.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <system_error>
#include <thread>

namespace kiln::tune {

namespace fs = std::filesystem;
using detail::Connection;
using detail::Statement;
using detail::Transaction;

namespace {

// PRAGMA user_version of the files this code writes. A file with a higher
// one was made by a newer kiln: refused rather than misread. 2: each
// candidate's cost features (the learned cost model's training data); a
// version-1 file gains the columns when opened for writing, and is read as
// it is (no features) when opened read-only.
constexpr int kSchemaVersion = 2;
constexpr int kFirstSchemaWithFeatures = 2;
constexpr int kBusyTimeoutMs = 60'000;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS entries (
  id                  INTEGER PRIMARY KEY,
  kernel_hash         TEXT NOT NULL,
  device_fingerprint  TEXT NOT NULL,
  space_version       TEXT NOT NULL,
  kernel_name         TEXT NOT NULL,
  kernel_text         TEXT NOT NULL,
  device_id           TEXT NOT NULL,
  device_name         TEXT NOT NULL,
  sequence            TEXT NOT NULL,
  final_hash          TEXT NOT NULL,
  best_ns             INTEGER NOT NULL,
  baseline_ns         INTEGER NOT NULL,
  timer               TEXT NOT NULL,
  statistic           TEXT NOT NULL,
  candidates_measured INTEGER NOT NULL,
  tune_seconds        REAL NOT NULL,
  created_at          TEXT NOT NULL,
  UNIQUE (kernel_hash, device_fingerprint, space_version)
);
CREATE TABLE IF NOT EXISTS candidates (
  entry_id   INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
  position   INTEGER NOT NULL,
  sequence   TEXT NOT NULL,
  final_hash TEXT NOT NULL,
  cost_ns    REAL NOT NULL,
  min_ns     INTEGER NOT NULL,
  median_ns  INTEGER NOT NULL,
  runs       INTEGER NOT NULL,
  status     TEXT NOT NULL,
  error      TEXT NOT NULL,
  max_error  REAL NOT NULL,
  features   TEXT NOT NULL DEFAULT '',
  features_version INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (entry_id, position)
);
)sql";

// From version 1: the features columns (old candidates have none).
constexpr const char* kAddFeatures = R"sql(
ALTER TABLE candidates ADD COLUMN features TEXT NOT NULL DEFAULT '';
ALTER TABLE candidates ADD COLUMN features_version INTEGER NOT NULL DEFAULT 0;
)sql";

// Features as text: shortest round-trip decimal of each, space-separated.
std::string features_to_text(const std::vector<double>& features) {
  std::string text;
  char number[32];
  for (double v : features) {
    std::snprintf(number, sizeof number, "%.17g", v);
    if (!text.empty()) text += ' ';
    text += number;
  }
  return text;
}

std::vector<double> features_from_text(const std::string& text) {
  std::vector<double> features;
  const char* p = text.c_str();
  while (*p != '\0') {
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end == p) return {};  // not ours: no features rather than wrong ones
    features.push_back(v);
    p = end;
    while (*p == ' ') ++p;
  }
  return features;
}

constexpr const char* kEntryColumns =
    "id, kernel_hash, device_fingerprint, space_version, kernel_name, kernel_text, device_id, device_name, "
    "sequence, final_hash, best_ns, baseline_ns, timer, statistic, candidates_measured, tune_seconds, created_at";

constexpr std::array<std::pair<CandidateStatus, std::string_view>, 8> kStatusNames = {{
    {CandidateStatus::Measured, "measured"},
    {CandidateStatus::Aborted, "aborted"},
    {CandidateStatus::Mismatch, "mismatch"},
    {CandidateStatus::LowerFailed, "lower-failed"},
    {CandidateStatus::Skipped, "skipped"},
    {CandidateStatus::CompileFailed, "compile-failed"},
    {CandidateStatus::LaunchFailed, "launch-failed"},
    {CandidateStatus::TimedOut, "timed-out"},
}};

std::int64_t as_int(std::uint64_t v) { return static_cast<std::int64_t>(v); }

TuningEntry read_entry(const Statement& row) {
  TuningEntry e;
  e.id = row.integer(0);
  e.key = {row.text(1), row.text(2), row.text(3)};
  e.kernel_name = row.text(4);
  e.kernel_text = row.text(5);
  e.device_id = row.text(6);
  e.device_name = row.text(7);
  e.sequence = row.text(8);
  e.final_hash = row.text(9);
  e.best_ns = static_cast<std::uint64_t>(row.integer(10));
  e.baseline_ns = static_cast<std::uint64_t>(row.integer(11));
  e.timer = row.text(12);
  e.statistic = row.text(13);
  e.candidates_measured = static_cast<std::uint32_t>(row.integer(14));
  e.tune_seconds = row.real(15);
  e.created_at = row.text(16);
  return e;
}

}  // namespace

std::string_view candidate_status_name(CandidateStatus status) {
  for (const auto& [s, name] : kStatusNames)
    if (s == status) return name;
  return "measured";
}

std::optional<CandidateStatus> candidate_status_from_name(std::string_view name) {
  for (const auto& [s, n] : kStatusNames)
    if (n == name) return s;
  return std::nullopt;
}

struct TuningDb::State {
  Connection connection;
  std::string read_only_reason;  // empty: writable
  std::int64_t schema_version = kSchemaVersion;  // below 2 only for an old file opened read-only
};

TuningDb::TuningDb(std::unique_ptr<State> state) : state_(std::move(state)) {}
TuningDb::TuningDb(TuningDb&&) noexcept = default;
TuningDb& TuningDb::operator=(TuningDb&&) noexcept = default;
TuningDb::~TuningDb() = default;

const fs::path& TuningDb::path() const { return state_->connection.path(); }

namespace {

Result<std::int64_t> checked_schema_version(const Connection& connection, const fs::path& path) {
  KILN_TRY_ASSIGN(const std::int64_t found, connection.query_integer("PRAGMA user_version"));
  if (found > kSchemaVersion)
    return make_error(ErrorCode::Io, "tuning database " + path.string() + ": schema version " + std::to_string(found) +
                                         " was written by a newer kiln (this one reads " +
                                         std::to_string(kSchemaVersion) + ")");
  return found;
}

// Switching a new database to WAL takes an exclusive lock, and SQLite
// answers "database is locked" at once, without its busy handler, while
// another process is creating the same file: two `kiln tune` started
// together on a fresh database left one read-only (records lost). So the
// switch is retried until the busy timeout.
Result<void> enable_wal(const Connection& connection) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    Result<std::int64_t> switched = connection.query_integer("PRAGMA journal_mode=WAL");
    if (switched) return {};
    const bool locked = switched.error().message.find("locked") != std::string::npos ||
                        switched.error().message.find("busy") != std::string::npos;
    if (!locked || std::chrono::steady_clock::now() > give_up) return std::move(switched).error();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Result<Connection> open_writable(const fs::path& path) {
  if (path.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      return make_error(ErrorCode::Io, "tuning database " + path.string() + ": cannot create its folder: " + ec.message());
  }
  KILN_TRY_ASSIGN(Connection connection, Connection::open(path, kBusyTimeoutMs));
  // WAL: readers never block the writer, and a killed writer leaves only an
  // uncommitted tail that the next opener discards. NORMAL sync is safe
  // against process death (only power loss can lose the last commits).
  KILN_TRY(enable_wal(connection));
  KILN_TRY(connection.exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON"));
  KILN_TRY_ASSIGN(const std::int64_t found, checked_schema_version(connection, path));
  if (found < kSchemaVersion) {
    KILN_TRY_ASSIGN(Transaction transaction, Transaction::begin(connection));
    if (found >= 1 && found < kFirstSchemaWithFeatures) KILN_TRY(connection.exec(kAddFeatures));
    KILN_TRY(connection.exec(kSchema));
    KILN_TRY(connection.exec(("PRAGMA user_version=" + std::to_string(kSchemaVersion)).c_str()));
    KILN_TRY(transaction.commit());
  }
  return connection;
}

// mode=ro first (it sees a live writer's WAL); in a read-only folder without
// the WAL's -shm file that cannot open, and immutable=1 reads the file as it
// is (what a writer left after closing cleanly: SQLite folds the WAL back
// into the file on the last close).
Result<Connection> open_read_only(const fs::path& path) {
  Result<Connection> connection = Connection::open(path, kBusyTimeoutMs, detail::Access::ReadOnly);
  Result<std::int64_t> found = connection ? checked_schema_version(*connection, path) : Result<std::int64_t>(connection.error());
  if (!found && found.error().message.find("newer kiln") == std::string::npos) {
    connection = Connection::open(path, kBusyTimeoutMs, detail::Access::Immutable);
    found = connection ? checked_schema_version(*connection, path) : Result<std::int64_t>(connection.error());
  }
  if (!found) return std::move(found).error();
  if (*found < 1)
    return make_error(ErrorCode::Io, "tuning database " + path.string() +
                                         ": opened read-only, and it has no kiln tables (schema version " +
                                         std::to_string(*found) + ")");
  return connection;
}

}  // namespace

Result<TuningDb> TuningDb::open(const fs::path& path, DbAccess access) {
  std::string read_only_reason;
  Result<Connection> connection = make_error(ErrorCode::Io, "");
  if (access == DbAccess::ReadWrite) {
    connection = open_writable(path);
    std::error_code ec;
    if (!connection && fs::is_regular_file(path, ec)) {
      // A file that exists but cannot be written (a read-only file, or a
      // folder where SQLite cannot make its WAL files): its records can
      // still be used.
      Result<Connection> readable = open_read_only(path);
      if (!readable) return std::move(connection).error();
      read_only_reason = "opened read-only: " + connection.error().message;
      connection = std::move(readable);
    }
  } else {
    connection = open_read_only(path);
    read_only_reason = "opened read-only as asked";
  }
  if (!connection) return std::move(connection).error();
  KILN_TRY_ASSIGN(const std::int64_t schema_version, connection->query_integer("PRAGMA user_version"));
  auto state = std::make_unique<State>(
      State{std::move(connection).value(), std::move(read_only_reason), schema_version});
  return TuningDb(std::move(state));
}

bool TuningDb::read_only() const { return !state_->read_only_reason.empty(); }
const std::string& TuningDb::read_only_reason() const { return state_->read_only_reason; }

namespace {

Error refused_write(const TuningDb& db) {
  return make_error(ErrorCode::Io, "tuning database " + db.path().string() + " is read-only (" + db.read_only_reason() +
                                       "): records cannot be stored");
}

}  // namespace

namespace {

Result<void> read_candidates(const Connection& c, std::int64_t schema_version, TuningEntry& entry) {
  const bool with_features = schema_version >= kFirstSchemaWithFeatures;
  KILN_TRY_ASSIGN(Statement s, c.prepare(std::string("SELECT sequence, final_hash, cost_ns, min_ns, median_ns, runs, "
                                                     "status, error, max_error, ") +
                                         (with_features ? "features, features_version" : "'', 0") +
                                         " FROM candidates WHERE entry_id = ? ORDER BY position"));
  s.bind(1, entry.id);
  while (true) {
    KILN_TRY_ASSIGN(const bool row, s.step());
    if (!row) return {};
    CandidateRecord r;
    r.sequence = s.text(0);
    r.final_hash = s.text(1);
    r.cost_ns = s.real(2);
    r.min_ns = static_cast<std::uint64_t>(s.integer(3));
    r.median_ns = static_cast<std::uint64_t>(s.integer(4));
    r.runs = static_cast<std::uint32_t>(s.integer(5));
    r.status = candidate_status_from_name(s.text(6)).value_or(CandidateStatus::LaunchFailed);
    r.error = s.text(7);
    r.max_error = s.real(8);
    r.features = features_from_text(s.text(9));
    r.features_version = r.features.empty() ? 0 : static_cast<std::uint32_t>(s.integer(10));
    entry.candidates.push_back(std::move(r));
  }
}

Result<std::optional<TuningEntry>> find_one(const Connection& c, std::int64_t schema_version, Statement& s) {
  KILN_TRY_ASSIGN(const bool row, s.step());
  if (!row) return std::optional<TuningEntry>();
  TuningEntry entry = read_entry(s);
  s = Statement();
  KILN_TRY(read_candidates(c, schema_version, entry));
  return std::optional<TuningEntry>(std::move(entry));
}

}  // namespace

Result<std::optional<TuningEntry>> TuningDb::find(const TuningKey& key) const {
  const Connection& c = state_->connection;
  KILN_TRY_ASSIGN(Statement s, c.prepare(std::string("SELECT ") + kEntryColumns +
                                         " FROM entries WHERE kernel_hash = ? AND device_fingerprint = ? AND "
                                         "space_version = ?"));
  s.bind(1, key.kernel_hash).bind(2, key.device_fingerprint).bind(3, key.space_version);
  return find_one(c, state_->schema_version, s);
}

Result<std::optional<TuningEntry>> TuningDb::get(std::int64_t id) const {
  const Connection& c = state_->connection;
  KILN_TRY_ASSIGN(Statement s, c.prepare(std::string("SELECT ") + kEntryColumns + " FROM entries WHERE id = ?"));
  s.bind(1, id);
  return find_one(c, state_->schema_version, s);
}

Result<std::vector<TuningEntry>> TuningDb::list(bool with_candidates, std::string_view device_fingerprint) const {
  const Connection& c = state_->connection;
  std::vector<TuningEntry> entries;
  {
    KILN_TRY_ASSIGN(Statement s, c.prepare(std::string("SELECT ") + kEntryColumns + " FROM entries" +
                                           (device_fingerprint.empty() ? "" : " WHERE device_fingerprint = ?") +
                                           " ORDER BY id"));
    if (!device_fingerprint.empty()) s.bind(1, device_fingerprint);
    while (true) {
      KILN_TRY_ASSIGN(const bool row, s.step());
      if (!row) break;
      entries.push_back(read_entry(s));
    }
  }
  if (with_candidates)
    for (TuningEntry& e : entries) KILN_TRY(read_candidates(c, state_->schema_version, e));
  return entries;
}

Result<std::int64_t> TuningDb::store(const TuningEntry& entry) {
  if (read_only()) return refused_write(*this);
  const Connection& c = state_->connection;
  KILN_TRY_ASSIGN(Transaction transaction, Transaction::begin(c));
  {
    KILN_TRY_ASSIGN(Statement remove, c.prepare("DELETE FROM entries WHERE kernel_hash = ? AND device_fingerprint = ? "
                                                "AND space_version = ?"));
    remove.bind(1, entry.key.kernel_hash).bind(2, entry.key.device_fingerprint).bind(3, entry.key.space_version);
    KILN_TRY(remove.run());
  }
  KILN_TRY_ASSIGN(Statement insert,
                  c.prepare("INSERT INTO entries (kernel_hash, device_fingerprint, space_version, kernel_name, "
                            "kernel_text, device_id, device_name, sequence, final_hash, best_ns, baseline_ns, timer, "
                            "statistic, candidates_measured, tune_seconds, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
                            "?, ?, ?, ?, ?, ?, ?, COALESCE(NULLIF(?, ''), strftime('%Y-%m-%dT%H:%M:%SZ', 'now')))"));
  insert.bind(1, entry.key.kernel_hash)
      .bind(2, entry.key.device_fingerprint)
      .bind(3, entry.key.space_version)
      .bind(4, entry.kernel_name)
      .bind(5, entry.kernel_text)
      .bind(6, entry.device_id)
      .bind(7, entry.device_name)
      .bind(8, entry.sequence)
      .bind(9, entry.final_hash)
      .bind(10, as_int(entry.best_ns))
      .bind(11, as_int(entry.baseline_ns))
      .bind(12, entry.timer)
      .bind(13, entry.statistic)
      .bind(14, static_cast<std::int64_t>(entry.candidates_measured))
      .bind(15, entry.tune_seconds)
      .bind(16, entry.created_at);
  KILN_TRY(insert.run());
  const std::int64_t id = c.last_insert_rowid();

  KILN_TRY_ASSIGN(Statement candidate,
                  c.prepare("INSERT INTO candidates (entry_id, position, sequence, final_hash, cost_ns, min_ns, "
                            "median_ns, runs, status, error, max_error, features, features_version) VALUES (?, ?, ?, "
                            "?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  for (std::size_t i = 0; i < entry.candidates.size(); ++i) {
    const CandidateRecord& r = entry.candidates[i];
    candidate.bind(1, id)
        .bind(2, static_cast<std::int64_t>(i))
        .bind(3, r.sequence)
        .bind(4, r.final_hash)
        .bind(5, r.cost_ns)
        .bind(6, as_int(r.min_ns))
        .bind(7, as_int(r.median_ns))
        .bind(8, static_cast<std::int64_t>(r.runs))
        .bind(9, candidate_status_name(r.status))
        .bind(10, r.error)
        .bind(11, r.max_error)
        .bind(12, features_to_text(r.features))
        .bind(13, static_cast<std::int64_t>(r.features.empty() ? 0 : r.features_version));
    KILN_TRY(candidate.run());
  }
  KILN_TRY(transaction.commit());
  return id;
}

Result<std::size_t> TuningDb::clear(const ClearFilter& filter) {
  if (read_only()) return refused_write(*this);
  const Connection& c = state_->connection;
  if (!filter.all && filter.kernel.empty() && filter.device.empty())
    return make_error(ErrorCode::InvalidArgument, "clear: name a kernel, a device, or all");
  KILN_TRY_ASSIGN(Transaction transaction, Transaction::begin(c));
  std::string sql = "DELETE FROM entries";
  if (!filter.all) {
    sql += " WHERE 1";
    // substr() rather than LIKE: kernel names may hold '%' and '_'.
    if (!filter.kernel.empty())
      sql += " AND (substr(kernel_hash, 1, length(?1)) = ?1 OR substr(kernel_name, 1, length(?1)) = ?1)";
    if (!filter.device.empty()) sql += " AND (device_id = ?2 OR device_name = ?2)";
  }
  KILN_TRY_ASSIGN(Statement s, c.prepare(sql));
  if (!filter.all) {
    if (!filter.kernel.empty()) s.bind(1, filter.kernel);
    if (!filter.device.empty()) s.bind(2, filter.device);
  }
  KILN_TRY(s.run());
  const std::size_t removed = static_cast<std::size_t>(c.changes());
  KILN_TRY(transaction.commit());
  return removed;
}

}  // namespace kiln::tune
