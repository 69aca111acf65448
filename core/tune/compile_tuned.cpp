// Device::compile in Tuned mode: the database first, tuning on a miss when
// asked, and the replay check that makes "what was measured is what runs"
// hold across processes.
#include "ir/op_trace.hpp"
#include "tune/compile_paths.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/tune/learned_cost.hpp"
#include "kiln/tune/tuner.hpp"
#include "tune/nearby_records.hpp"

#include <cstdio>
#include <memory>


namespace kiln::tune {

namespace {

// Winners of nearby shapes measured first (each costs a measurement).
constexpr std::size_t kNearbySeeds = 3;

// What a replayed record gives.
struct ReplayedRecord {
  Program program;
  ir::Kernel kernel;
  passes::OptSequence sequence;
  std::uint64_t best_ns = 0;
  std::uint64_t baseline_ns = 0;
  TuningEntry entry;
};

// Replays a stored entry: its sequence must lower this kernel to the very
// kernel that was measured. Returns why not, when it does not.
Result<ReplayedRecord> replay(const Device& device, const ir::Kernel& kernel, const SearchSpace& space,
                            const TuningEntry& entry, std::optional<passes::BoundsPolicy> bounds) {
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
  Result<Program> program = device.compile(*lowered, {.mode = CompileMode::Frozen, .bounds = bounds});
  if (!program)
    return stale("its kernel no longer compiles: " + ir::trace_to_given(std::move(program).error(), kernel, *lowered).to_string());
  ReplayedRecord out;
  out.program = std::move(program).value();
  out.kernel = std::move(lowered).value();
  out.sequence = std::move(sequence).value();
  out.best_ns = entry.best_ns;
  out.baseline_ns = entry.baseline_ns;
  out.entry = entry;
  return out;
}

// Sets options.cost_model to the model learned from the database's records
// of this device when it ranks them better, held out, than the analytic
// model (tune/learned_cost.hpp); returns what was decided and why, for the
// report.
std::string choose_cost_model(const Result<TuningDb>& db, const TuningKey& key, const SearchSpace& space,
                              TuneOptions& options) {
  if (!options.settings.learned_cost_model) return "analytic: autotune.learned_cost_model is off";
  if (!space.features) return "analytic: the search space has no cost features";
  if (!db) return "analytic: no tuning database";
  Result<std::vector<TuningEntry>> entries = db->list(/*with_candidates=*/true, key.device_fingerprint);
  if (!entries) return "analytic: " + entries.error().to_string();
  const std::vector<CostRecord> records = cost_records(*entries, key.device_fingerprint);
  DeviceCostModel chosen = device_cost_model(records);
  const CostModelEvaluation& ev = chosen.evaluation;
  char correlations[160] = "";
  if (ev.held_out_groups > 0)
    std::snprintf(correlations, sizeof correlations, "; held out on %zu tunings: learned %.3f, analytic %.3f",
                  ev.held_out_groups, ev.learned_spearman, ev.analytic_spearman);
  if (!chosen.model) return "analytic: " + ev.why_not + correlations;
  options.cost_model = std::make_shared<const LearnedCostModel>(std::move(*chosen.model));
  return "learned from " + std::to_string(ev.records) + " records of " + std::to_string(ev.groups) + " tunings" +
         correlations;
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

namespace detail {

Result<Program> compile_tuned(const Device& device, const ir::Kernel& kernel, const CompileOptions& options,
                              CompileReport& report) {
  const TuneOptions& tuning = options.tuning;
  const SearchSpace& space = search_space_of(tuning);
  // Without a record (or with one that cannot be used): the heuristic
  // program, saying why, unless the options ask to tune.
  auto fall_back = [&](std::string reason) -> Result<Program> {
    KILN_TRY_ASSIGN(Program program, compile_heuristic(device, kernel, options.bounds, report));
    report.fallback_reason = std::move(reason);
    return program;
  };

  KILN_TRY_ASSIGN(const TuningKey key, tuning_key(device, kernel, space));
  const std::filesystem::path path = tuning.db_path.empty() ? default_tuning_db_path() : tuning.db_path;
  // A database that cannot be opened costs the cache, never the program.
  Result<TuningDb> db = TuningDb::open(path);
  if (db && db->read_only() && options.tune_on_miss)
    report.warnings.push_back("tuning database " + path.string() + ": " + db->read_only_reason() +
                              "; its records are used, but new ones cannot be stored");
  std::string miss;
  if (!db) {
    miss = db.error().to_string();
    if (options.tune_on_miss) report.warnings.push_back(miss + " (tuning without it)");
  } else if (tuning.force && options.tune_on_miss) {
    miss = "forced to tune";
  } else {
    Result<std::optional<TuningEntry>> found = db->find(key);
    if (!found) {
      miss = found.error().to_string();
      report.warnings.push_back(miss);
    } else if (!*found) {
      miss = "the tuning database " + path.string() + " has no record of kernel " + key.kernel_hash + " on " +
             device.id() + " (" + key.device_fingerprint + ")";
    } else {
      Result<ReplayedRecord> hit = replay(device, kernel, space, **found, options.bounds);
      if (hit) {
        report.used = CompileMode::Tuned;
        report.kernel = std::move(hit->kernel);
        report.sequence = passes::to_string(hit->sequence);
        report.from_database = true;
        report.best_ns = hit->best_ns;
        report.baseline_ns = hit->baseline_ns;
        report.record = std::move(hit->entry);
        return std::move(hit->program);
      }
      miss = hit.error().to_string();
      report.warnings.push_back(miss + (options.tune_on_miss ? "; tuning again" : ""));
    }
  }
  if (!options.tune_on_miss) return fall_back(miss);

  // Records of the same kernel at other shapes seed the search.
  TuneOptions seeded = tuning;
  if (db) {
    Result<std::vector<std::string>> near = nearby_winners(*db, key, kernel, kNearbySeeds);
    if (near) seeded.seed_sequences.insert(seeded.seed_sequences.end(), near->begin(), near->end());
    else report.warnings.push_back(near.error().to_string());
  }
  const std::string cost_model_note = choose_cost_model(db, key, space, seeded);
  Result<TuneResult> tuning_result = tune_kernel(device, kernel, seeded);
  // A budget too small for the kernel (every run passed its time limit)
  // costs the tuning, not the program.
  if (!tuning_result && tuning_result.error().code == ErrorCode::Timeout)
    return fall_back(tuning_result.error().message);
  KILN_TRY_ASSIGN(TuneResult tuned, std::move(tuning_result));
  report.warnings.insert(report.warnings.end(), tuned.warnings.begin(), tuned.warnings.end());
  if (db && !db->read_only()) {
    Result<std::int64_t> id = db->store(tuned.entry);
    if (id) tuned.entry.id = *id;
    else report.warnings.push_back(id.error().to_string());
  }
  report.used = CompileMode::Tuned;
  report.kernel = std::move(tuned.kernel);
  report.sequence = passes::to_string(tuned.sequence);
  report.tuned_now = true;
  report.best_ns = tuned.entry.best_ns;
  report.baseline_ns = tuned.entry.baseline_ns;
  report.candidates_measured = tuned.entry.candidates_measured;
  report.tune_times = tuned.times;
  report.ranked_by = tuned.ranked_by;
  report.cost_model_note = cost_model_note;
  report.record = std::move(tuned.entry);
  return std::move(tuned.program);
}

}  // namespace detail

}  // namespace kiln::tune
