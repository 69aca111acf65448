// Internal: a small RAII layer over the SQLite C API for the tuning database:
// a connection that names its file in every error, and prepared statements.
#pragma once

#include "kiln/result.hpp"

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace kiln::tune::detail {

class Statement {
 public:
  Statement() = default;

  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);

  // Steps once: true when a row is ready, false when done.
  Result<bool> step();
  // Steps until done (statements without rows).
  Result<void> run();

  std::string text(int column) const;
  std::int64_t integer(int column) const;
  double real(int column) const;

 private:
  friend class Connection;
  struct Finalize {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
  const class Connection* connection_ = nullptr;
};

// How a connection opens its file.
enum class Access {
  ReadWrite,  // created when missing
  ReadOnly,   // SQLite's mode=ro: reads, with the usual locking (WAL needs its -shm file or a writable folder)
  Immutable,  // SQLite's immutable=1: no locks and no WAL, for a file nobody changes (a read-only folder)
};

class Connection {
 public:
  // Opens the file, with a busy timeout so that writers of other processes
  // are waited for.
  static Result<Connection> open(const std::filesystem::path& path, int busy_timeout_ms,
                                 Access access = Access::ReadWrite);

  Result<Statement> prepare(std::string_view sql) const;
  // The first column of the first row of `sql` (0 when there is no row).
  Result<std::int64_t> query_integer(std::string_view sql) const;
  // Runs one or more statements without parameters.
  Result<void> exec(const char* sql) const;
  std::int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_.get()); }
  int changes() const { return sqlite3_changes(db_.get()); }

  // "tuning database <path>: <what>: <sqlite's message>" (ErrorCode::Io).
  Error error(std::string_view what) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  struct Close {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Close> db_;
  std::filesystem::path path_;
};

// A transaction that rolls back unless committed (also on an early return).
class Transaction {
 public:
  // BEGIN IMMEDIATE: takes the write lock now (waiting for other writers),
  // so two writers never deadlock upgrading read locks.
  static Result<Transaction> begin(const Connection& connection);
  Transaction(Transaction&& other) noexcept : connection_(std::exchange(other.connection_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Result<void> commit();

 private:
  explicit Transaction(const Connection* connection) : connection_(connection) {}
  const Connection* connection_;
};

}  // namespace kiln::tune::detail
