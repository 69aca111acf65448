// get_tuned_program: the database first, tuning on a miss, and the replay
// check that makes "what was measured is what runs" hold across processes.
#include "ir/op_trace.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/tune/tuner.hpp"

#include <chrono>
#include <exception>

namespace kiln::tune {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The untuned kernel (normalized and finalized), compiled.
Result<TunedProgram> untuned_program(const Device& device, const ir::Kernel& kernel, const SearchSpace& space) {
  TunedProgram out;
  KILN_TRY_ASSIGN(out.kernel, space.lower(kernel, {}, device.info()));
  KILN_TRY_ASSIGN(out.program, device.compile(out.kernel));
  return out;
}

// Replays a stored entry: its sequence must lower this kernel to the very
// kernel that was measured. Returns why not, when it does not.
Result<TunedProgram> replay(const Device& device, const ir::Kernel& kernel, const SearchSpace& space,
                            const TuningEntry& entry) {
  auto stale = [&](const std::string& why) {
    return make_error(ErrorCode::Mismatch, "stored entry " + std::to_string(entry.id) + " for " + entry.key.kernel_hash +
                                               " is stale: " + why);
  };
  if (entry.kernel_text != ir::print(kernel)) return stale("its kernel text differs (a hash collision)");
  Result<passes::OptSequence> sequence = passes::parse_sequence(entry.sequence);
  if (!sequence) return stale("its sequence does not parse: " + sequence.error().to_string());
  Result<ir::Kernel> lowered = space.lower(kernel, *sequence, device.info());
  if (!lowered) return stale("its sequence no longer applies: " + lowered.error().to_string());
  const std::string hash = ir::hash_hex(*lowered);
  if (hash != entry.final_hash)
    return stale("replaying '" + entry.sequence + "' gives kernel " + hash + ", it measured " + entry.final_hash +
                 " (a pass changed?)");
  Result<Program> program = device.compile(*lowered);
  if (!program)
    return stale("its kernel no longer compiles: " + ir::trace_to_given(std::move(program).error(), kernel, *lowered).to_string());
  TunedProgram out;
  out.program = std::move(program).value();
  out.kernel = std::move(lowered).value();
  out.sequence = std::move(sequence).value();
  out.best_ns = entry.best_ns;
  out.baseline_ns = entry.baseline_ns;
  out.from_cache = true;
  out.entry = entry;
  return out;
}

}  // namespace

TuneOptions options_from(const Config& config) {
  TuneOptions options;
  options.settings = config.autotune.settings;
  options.db_path = config.tuning_db;
  return options;
}

Result<std::string> device_fingerprint(const Device& device) {
  KILN_TRY_ASSIGN(const std::string cache_key, device.cache_key());
  const DeviceInfo& info = device.info();
  return "plugin=" + info.plugin + ";device=" + info.name + ";driver=" + info.driver_version +
         ";compiler=" + cache_key;
}

Result<TuningKey> tuning_key(const Device& device, const ir::Kernel& kernel, const SearchSpace& space) {
  TuningKey key;
  key.kernel_hash = ir::hash_hex(kernel);
  KILN_TRY_ASSIGN(key.device_fingerprint, device_fingerprint(device));
  key.space_version = space.version;
  return key;
}

namespace {

Result<TunedProgram> tuned_program(const Device& device, const ir::Kernel& kernel, const TuneOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const SearchSpace& space = options.space != nullptr ? *options.space : default_search_space();
  const TuneMode mode = options.settings.mode;
  if (mode == TuneMode::Off) return untuned_program(device, kernel, space);

  std::vector<std::string> warnings;
  KILN_TRY_ASSIGN(const TuningKey key, tuning_key(device, kernel, space));
  const std::filesystem::path path = options.db_path.empty() ? default_tuning_db_path() : options.db_path;
  // A database that cannot be opened costs the cache, never the program.
  Result<TuningDb> db = TuningDb::open(path);
  if (!db) warnings.push_back(db.error().to_string() + " (tuning without it)");
  if (db && db->read_only() && mode == TuneMode::Tune)
    warnings.push_back("tuning database " + path.string() + ": " + db->read_only_reason() +
                       "; its records are used, but new ones cannot be stored");

  if (db && !options.force) {
    Result<std::optional<TuningEntry>> found = db->find(key);
    if (!found) {
      warnings.push_back(found.error().to_string());
    } else if (*found) {
      Result<TunedProgram> hit = replay(device, kernel, space, **found);
      if (hit) {
        hit->tune_seconds = seconds_since(start);
        hit->warnings = std::move(warnings);
        return hit;
      }
      warnings.push_back(hit.error().to_string() + (mode == TuneMode::Tune ? "; tuning again" : ""));
    }
  }

  if (mode == TuneMode::DbOnly) {
    KILN_TRY_ASSIGN(TunedProgram out, untuned_program(device, kernel, space));
    out.tune_seconds = seconds_since(start);
    out.warnings = std::move(warnings);
    return out;
  }

  KILN_TRY_ASSIGN(TuneResult tuned, tune_kernel(device, kernel, options));
  warnings.insert(warnings.end(), tuned.warnings.begin(), tuned.warnings.end());
  if (db && !db->read_only()) {
    Result<std::int64_t> id = db->store(tuned.entry);
    if (id) tuned.entry.id = *id;
    else warnings.push_back(id.error().to_string());
  }
  TunedProgram out;
  out.program = std::move(tuned.program);
  out.kernel = std::move(tuned.kernel);
  out.sequence = std::move(tuned.sequence);
  out.best_ns = tuned.entry.best_ns;
  out.baseline_ns = tuned.entry.baseline_ns;
  out.candidates_measured = tuned.entry.candidates_measured;
  out.tuned = true;
  out.tune_seconds = seconds_since(start);
  out.entry = std::move(tuned.entry);
  out.warnings = std::move(warnings);
  return out;
}

}  // namespace

Result<TunedProgram> get_tuned_program(const Device& device, const ir::Kernel& kernel, const TuneOptions& options) {
  if (!device.valid()) return make_error(ErrorCode::InvalidArgument, "tune: no device");
  try {
    return tuned_program(device, kernel, options);
  } catch (const std::exception& e) {
    return make_error(ErrorCode::Internal, std::string("tune: internal error (an exception): ") + e.what());
  }
}

}  // namespace kiln::tune
