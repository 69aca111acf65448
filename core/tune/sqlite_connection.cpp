#include "sqlite_connection.hpp"

#include <utility>

namespace kiln::tune::detail {

Statement& Statement::bind(int index, std::string_view text) {
  sqlite3_bind_text(stmt_.get(), index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_.get(), index, value);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(stmt_.get(), index, value);
  return *this;
}

Result<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) {
    sqlite3_reset(stmt_.get());
    return false;
  }
  Error e = connection_->error(std::string("running `") + sqlite3_sql(stmt_.get()) + "`");
  sqlite3_reset(stmt_.get());
  return e;
}

Result<void> Statement::run() {
  while (true) {
    KILN_TRY_ASSIGN(const bool row, step());
    if (!row) return {};
  }
}

std::string Statement::text(int column) const {
  const auto* bytes = sqlite3_column_text(stmt_.get(), column);
  const int size = sqlite3_column_bytes(stmt_.get(), column);
  return bytes != nullptr ? std::string(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(size)) : "";
}

std::int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_.get(), column); }

double Statement::real(int column) const { return sqlite3_column_double(stmt_.get(), column); }

namespace {

// "file:<path>?<query>", the path percent-encoded where a URI needs it.
std::string file_uri(const std::filesystem::path& path, std::string_view query) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (const char c : path.string()) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '%' || c == '?' || c == '#' || byte < 0x20 || byte >= 0x7f) {
      uri += '%';
      uri += kHex[byte >> 4];
      uri += kHex[byte & 15];
    } else {
      uri += c;
    }
  }
  return uri + "?" + std::string(query);
}

}  // namespace

Result<Connection> Connection::open(const std::filesystem::path& path, int busy_timeout_ms, Access access) {
  Connection c;
  c.path_ = path;
  sqlite3* raw = nullptr;
  int rc = SQLITE_OK;
  if (access == Access::ReadWrite) {
    rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  } else {
    const std::string uri = file_uri(path, access == Access::ReadOnly ? "mode=ro" : "mode=ro&immutable=1");
    rc = sqlite3_open_v2(uri.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  }
  c.db_.reset(raw);
  if (rc != SQLITE_OK) {
    if (raw == nullptr) return make_error(ErrorCode::Io, "tuning database " + path.string() + ": cannot open (out of memory)");
    return c.error("cannot open");
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  return c;
}

Result<Statement> Connection::prepare(std::string_view sql) const {
  Statement s;
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_.get(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr) != SQLITE_OK)
    return error("preparing `" + std::string(sql) + "`");
  s.stmt_.reset(raw);
  s.connection_ = this;
  return s;
}

Result<std::int64_t> Connection::query_integer(std::string_view sql) const {
  KILN_TRY_ASSIGN(Statement s, prepare(sql));
  KILN_TRY_ASSIGN(const bool row, s.step());
  return row ? s.integer(0) : 0;
}

Result<void> Connection::exec(const char* sql) const {
  char* message = nullptr;
  if (sqlite3_exec(db_.get(), sql, nullptr, nullptr, &message) != SQLITE_OK) {
    sqlite3_free(message);
    return error(std::string("running `") + sql + "`");
  }
  return {};
}

Error Connection::error(std::string_view what) const {
  return make_error(ErrorCode::Io, "tuning database " + path_.string() + ": " + std::string(what) + ": " +
                                       sqlite3_errmsg(db_.get()));
}

Result<Transaction> Transaction::begin(const Connection& connection) {
  KILN_TRY(connection.exec("BEGIN IMMEDIATE"));
  return Transaction(&connection);
}

Transaction::~Transaction() {
  if (connection_ != nullptr) (void)connection_->exec("ROLLBACK");
}

Result<void> Transaction::commit() {
  const Connection* c = std::exchange(connection_, nullptr);
  if (Result<void> done = c->exec("COMMIT"); !done) {
    (void)c->exec("ROLLBACK");
    return done;
  }
  return {};
}

}  // namespace kiln::tune::detail
