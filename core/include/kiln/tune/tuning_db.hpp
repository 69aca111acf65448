// kiln/tune/tuning_db.hpp - the persistent tuning database: one SQLite file
// (WAL journal) shared by every process of a user.
//
// An entry is keyed by what makes a tuning result valid:
//   kernel_hash         ir::hash_hex of the kernel as the caller gave it
//   device_fingerprint  plugin, device name, driver version and the plugin's
//                       cache key (plugin version + compiler identity + flags)
//   space_version       the search space (optimizations and what they mean)
// and holds the winner (the sequence text and the hash of the kernel it
// lowers to), the kernel's text form, and every candidate measured.
//
// Several processes may read and write at once: writes are transactions
// (BEGIN IMMEDIATE) that wait for each other (busy timeout); a process
// killed mid-write leaves the file as it was before that transaction.
// A TuningDb object is used by one thread at a time; open one per thread.
#pragma once

#include <kiln/result.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::tune {

// What happened to one candidate.
enum class CandidateStatus {
  Measured,       // timed; its results matched the untuned kernel's (checked when it could win)
  Aborted,        // timing stopped early: slower than abort_factor x the best (results checked)
  Mismatch,       // its results differ from the untuned kernel's: disqualified
  LowerFailed,    // an optimization step or the verifier refused the sequence
  Skipped,        // not compiled: its kernel is larger than max_kernel_ops
  CompileFailed,  // the plugin did not compile it (e.g. unsupported)
  LaunchFailed,   // the launch or the result read-back failed
  TimedOut,       // a run passed the timeout (timeout_factor x the best, at least timeout_floor_s)
};
std::string_view candidate_status_name(CandidateStatus status);  // "measured", "aborted", "mismatch", ...
std::optional<CandidateStatus> candidate_status_from_name(std::string_view name);

struct CandidateRecord {
  std::string sequence;         // text form (passes::to_string), "" = untuned
  std::string final_hash;       // hash of the kernel measured; "" when lowering failed
  double cost_ns = 0;           // the cost model's estimate, before measuring
  std::uint64_t min_ns = 0;     // timed runs (0 when not timed)
  std::uint64_t median_ns = 0;
  std::uint32_t runs = 0;
  CandidateStatus status = CandidateStatus::Measured;
  std::string error;            // why it failed or was disqualified
  double max_error = 0;         // relative error against the untuned kernel (host_buffer.hpp compare);
                                // -1: not compared (slower than the best so far, it could not win)
  // What the learned cost model trains on (kiln/passes/cost_features.hpp):
  // the features of the kernel the search ranked, and their version (0 and
  // empty: none, e.g. a record of a kiln before schema 2).
  std::vector<double> features = {};
  std::uint32_t features_version = 0;

  bool operator==(const CandidateRecord&) const = default;
};

struct TuningKey {
  std::string kernel_hash;
  std::string device_fingerprint;
  std::string space_version;

  bool operator==(const TuningKey&) const = default;
};

struct TuningEntry {
  std::int64_t id = 0;          // the database's row id; 0 before it is stored
  TuningKey key;
  std::string kernel_name;      // for people: "matmul 1024x1024x1024 f32", a file name, ...
  std::string kernel_text;      // ir::print of the kernel as given
  std::string device_id;        // for people: "c:0"
  std::string device_name;
  std::string sequence;         // the winner ("" = the untuned kernel won)
  std::string final_hash;       // hash of the kernel the winner lowers to
  std::uint64_t best_ns = 0;
  std::uint64_t baseline_ns = 0;  // the untuned kernel
  std::string timer;            // "device", "host" or "model"
  std::string statistic;        // "median" or "min"
  std::uint32_t candidates_measured = 0;  // distinct candidates launched
  double tune_seconds = 0;
  std::string created_at;       // UTC, ISO 8601; set when stored
  std::vector<CandidateRecord> candidates;  // every candidate, in the order measured

  bool operator==(const TuningEntry&) const = default;
};

// Which entries `clear` removes: every one when `all`, else those matching
// each filter given (kernel: a kernel-hash prefix or a kernel-name prefix;
// device: a device id or device name, exactly).
struct ClearFilter {
  bool all = false;
  std::string kernel;
  std::string device;
};

enum class DbAccess {
  // Read and write; a file that cannot be written (a read-only file or
  // folder) is opened read-only instead, and says so (read_only_reason).
  ReadWrite,
  // Read only, never creating or changing anything (also as root, where
  // file permissions do not stop writes).
  ReadOnly,
};

class TuningDb {
 public:
  // Opens (with ReadWrite: creating the file, its folder and the tables when
  // missing). Errors (ErrorCode::Io) name the file: not a database, a newer
  // schema, a folder that cannot be created, ...
  static Result<TuningDb> open(const std::filesystem::path& path, DbAccess access = DbAccess::ReadWrite);

  // Open for reading only: store and clear then fail, naming why.
  bool read_only() const;
  // Why (empty when writable): "opened read-only: <why writing failed>".
  const std::string& read_only_reason() const;

  TuningDb(TuningDb&&) noexcept;
  TuningDb& operator=(TuningDb&&) noexcept;
  ~TuningDb();

  const std::filesystem::path& path() const;

  // The entry of `key` with its candidates, or nullopt.
  Result<std::optional<TuningEntry>> find(const TuningKey& key) const;
  // By row id (as `kiln cache list` shows), with its candidates.
  Result<std::optional<TuningEntry>> get(std::int64_t id) const;
  // Every entry, oldest first; candidates are left out unless asked for.
  // A device fingerprint given: only that device's entries.
  Result<std::vector<TuningEntry>> list(bool with_candidates = false, std::string_view device_fingerprint = {}) const;
  // Stores `entry`, replacing the entry of its key, in one transaction.
  // Returns the new row id.
  Result<std::int64_t> store(const TuningEntry& entry);
  // Removes what the filter selects; returns how many entries.
  Result<std::size_t> clear(const ClearFilter& filter);

 private:
  struct State;
  explicit TuningDb(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Export/import: {"kiln_tuning_db": 1, "entries": [{...}, ...]}, every
// field of TuningEntry and CandidateRecord by its name.
std::string entries_to_json(std::span<const TuningEntry> entries);
// Errors (ErrorCode::Io for malformed JSON, InvalidArgument for a wrong
// shape) name `source` and the entry / field at fault.
Result<std::vector<TuningEntry>> entries_from_json(std::string_view text, std::string_view source);

}  // namespace kiln::tune
