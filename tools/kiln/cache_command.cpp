// kiln cache list|show|export|import|clear: the tuning database by hand.
// The database is the config's `tuning_db` (else the default under
// $XDG_CACHE_HOME), or --db.
#include "commands.hpp"
#include "input_file.hpp"

#include <kiln/passes/cost_features.hpp>
#include <kiln/tune/autotune_config.hpp>
#include <kiln/tune/learned_cost.hpp>
#include <kiln/tune/tuning_db.hpp>

#include <boost/json.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

namespace kiln::cli {

namespace {

struct CacheOptions {
  std::string db;
  bool json = false;
  std::string device;  // cache model: a device id or name
  std::int64_t id = 0;
  std::string file;
  kiln::tune::ClearFilter clear;
};

template <class T>
T check(kiln::Result<T> result) {
  if (!result) fail(result.error());
  return std::move(result).value();
}

kiln::tune::TuningDb open_db(const GlobalOptions& global, const CacheOptions& options) {
  std::filesystem::path path = options.db;
  if (path.empty()) {
    // The config only: loading plugins is not needed to read the database.
    std::optional<std::filesystem::path> file;
    if (!global.config_file.empty()) file = global.config_file;
    const kiln::Config config = check(kiln::load_config(file));
    path = config.tuning_db.empty() ? kiln::tune::default_tuning_db_path() : config.tuning_db;
  }
  return check(kiln::tune::TuningDb::open(path));
}

std::string format_ns(std::uint64_t ns) {
  if (ns == 0) return "-";
  if (ns < 10'000) return fmt::format("{} ns", ns);
  if (ns < 10'000'000) return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
  if (ns < 10'000'000'000ull) return fmt::format("{:.2f} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.2f} s", static_cast<double>(ns) / 1e9);
}

std::string speedup(const kiln::tune::TuningEntry& e) {
  if (e.best_ns == 0 || e.baseline_ns == 0) return "-";
  return fmt::format("{:.2f}x", static_cast<double>(e.baseline_ns) / static_cast<double>(e.best_ns));
}

std::string or_untuned(const std::string& sequence) { return sequence.empty() ? "(untuned)" : sequence; }

void list(const GlobalOptions& global, const CacheOptions& options) {
  kiln::tune::TuningDb db = open_db(global, options);
  const std::vector<kiln::tune::TuningEntry> entries = check(db.list());
  if (options.json) {
    fmt::print("{}", kiln::tune::entries_to_json(entries));
    return;
  }
  fmt::print("database: {} ({} entries)\n", db.path().string(), entries.size());
  if (entries.empty()) return;
  fmt::print("{:>4}  {:<16}  {:<28}  {:<10}  {:>10}  {:>10}  {:>8}  {:>5}  {}\n", "ID", "KERNEL HASH", "KERNEL",
             "DEVICE", "BEST", "UNTUNED", "SPEEDUP", "CANDS", "SEQUENCE");
  for (const kiln::tune::TuningEntry& e : entries)
    fmt::print("{:>4}  {:<16}  {:<28}  {:<10}  {:>10}  {:>10}  {:>8}  {:>5}  {}\n", e.id, e.key.kernel_hash,
               e.kernel_name.empty() ? "-" : e.kernel_name, e.device_id, format_ns(e.best_ns),
               format_ns(e.baseline_ns), speedup(e), e.candidates_measured, or_untuned(e.sequence));
}

void show(const GlobalOptions& global, const CacheOptions& options) {
  kiln::tune::TuningDb db = open_db(global, options);
  const std::optional<kiln::tune::TuningEntry> found = check(db.get(options.id));
  if (!found)
    throw CommandFailed(fmt::format("no entry {} in {} (kiln cache list shows the ids)", options.id, db.path().string()));
  const kiln::tune::TuningEntry& e = *found;
  if (options.json) {
    fmt::print("{}", kiln::tune::entries_to_json(std::span(&e, 1)));
    return;
  }
  fmt::print("entry        {}\n", e.id);
  fmt::print("kernel       {} (hash {})\n", e.kernel_name.empty() ? "-" : e.kernel_name, e.key.kernel_hash);
  fmt::print("device       {} ({})\n", e.device_id, e.device_name);
  fmt::print("fingerprint  {}\n", e.key.device_fingerprint);
  fmt::print("space        {}\n", e.key.space_version);
  fmt::print("sequence     {}\n", or_untuned(e.sequence));
  fmt::print("final hash   {}\n", e.final_hash);
  fmt::print("time         {} ({} of the runs, {} timer); untuned {}; speed-up {}\n", format_ns(e.best_ns),
             e.statistic, e.timer, format_ns(e.baseline_ns), speedup(e));
  fmt::print("tuned        {} in {:.1f} s, {} candidates launched\n", e.created_at, e.tune_seconds,
             e.candidates_measured);
  fmt::print("\n{:>3}  {:<14}  {:>10}  {:>10}  {:>4}  {:>10}  {}\n", "#", "STATUS", "MEDIAN", "MIN", "RUNS", "COST",
             "SEQUENCE / ERROR");
  for (std::size_t i = 0; i < e.candidates.size(); ++i) {
    const kiln::tune::CandidateRecord& r = e.candidates[i];
    const bool winner = r.sequence == e.sequence && r.final_hash == e.final_hash;
    fmt::print("{:>3}  {:<14}  {:>10}  {:>10}  {:>4}  {:>10}  {}{}\n", i, kiln::tune::candidate_status_name(r.status),
               format_ns(r.median_ns), format_ns(r.min_ns), r.runs,
               format_ns(static_cast<std::uint64_t>(r.cost_ns)), or_untuned(r.sequence), winner ? "  <- chosen" : "");
    if (!r.error.empty()) fmt::print("{:>3}  {}\n", "", r.error);
  }
  fmt::print("\n{}", e.kernel_text);
}

void export_entries(const GlobalOptions& global, const CacheOptions& options) {
  kiln::tune::TuningDb db = open_db(global, options);
  const std::vector<kiln::tune::TuningEntry> entries = check(db.list(true));
  const std::string text = kiln::tune::entries_to_json(entries);
  if (options.file == "-") {
    fmt::print("{}", text);
    return;
  }
  std::ofstream out(options.file, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw CommandFailed("cannot write " + options.file);
  fmt::print(stderr, "exported {} entries to {}\n", entries.size(), options.file);
}

void import_entries(const GlobalOptions& global, const CacheOptions& options) {
  const std::string text = read_input_file(options.file, kMaxExportFileBytes);
  const std::vector<kiln::tune::TuningEntry> entries = check(kiln::tune::entries_from_json(text, options.file));
  kiln::tune::TuningDb db = open_db(global, options);
  for (const kiln::tune::TuningEntry& e : entries) check(db.store(e));
  fmt::print("imported {} entries into {}\n", entries.size(), db.path().string());
}

void clear(const GlobalOptions& global, const CacheOptions& options) {
  kiln::tune::TuningDb db = open_db(global, options);
  const std::size_t removed = check(db.clear(options.clear));
  fmt::print("removed {} entries from {}\n", removed, db.path().string());
}

// The learned cost model of one device: the records it would train on, its
// held-out rank correlation against the analytic model's, and which one
// ranks the next tuning (the same decision Device::compile makes).
void model(const GlobalOptions& global, const CacheOptions& options) {
  kiln::tune::TuningDb db = open_db(global, options);
  const std::vector<kiln::tune::TuningEntry> all = check(db.list());
  // The device's newest fingerprint: a new driver or compiler starts anew.
  std::string fingerprint;
  for (const kiln::tune::TuningEntry& e : all)
    if (e.device_id == options.device || e.device_name == options.device) fingerprint = e.key.device_fingerprint;
  if (fingerprint.empty())
    throw CommandFailed(fmt::format("no entry of device '{}' in {} (kiln cache list shows the devices)", options.device,
                                    db.path().string()));
  const std::vector<kiln::tune::TuningEntry> entries = check(db.list(true, fingerprint));
  const std::vector<kiln::tune::CostRecord> records = kiln::tune::cost_records(entries, fingerprint);
  const kiln::tune::DeviceCostModel chosen = kiln::tune::device_cost_model(records);
  const kiln::tune::CostModelEvaluation& ev = chosen.evaluation;
  const std::span<const std::string_view> names = kiln::passes::cost_feature_names();
  const auto number_or_null = [](double v) { return std::isfinite(v) ? boost::json::value(v) : boost::json::value(nullptr); };
  if (options.json) {
    boost::json::object o{{"device", options.device},
                          {"fingerprint", fingerprint},
                          {"entries", entries.size()},
                          {"records", ev.records},
                          {"tunings", ev.groups},
                          {"trained", ev.trained},
                          {"held_out_tunings", ev.held_out_groups},
                          {"held_out_records", ev.held_out_records},
                          {"learned_spearman", number_or_null(ev.trained ? ev.learned_spearman : NAN)},
                          {"analytic_spearman", number_or_null(ev.trained ? ev.analytic_spearman : NAN)},
                          {"ranks_by", chosen.model ? "learned" : "analytic"},
                          {"why_not", ev.why_not}};
    if (chosen.model) {
      boost::json::object weights;
      for (std::size_t j = 0; j < names.size(); ++j) weights[names[j]] = chosen.model->weights[j];
      o["weights"] = std::move(weights);
    }
    fmt::print("{}\n", boost::json::serialize(o));
    return;
  }
  fmt::print("database     {}\n", db.path().string());
  fmt::print("device       {} ({})\n", options.device, fingerprint);
  fmt::print("records      {} timed candidates with features in {} tunings ({} entries)\n", ev.records, ev.groups,
             entries.size());
  if (ev.held_out_groups > 0)
    fmt::print("held out     Spearman rank correlation with measured times, mean over {} tunings ({} records):\n"
               "             learned {:.3f}, analytic {:.3f}\n",
               ev.held_out_groups, ev.held_out_records, ev.learned_spearman, ev.analytic_spearman);
  fmt::print("ranks by     {}{}\n", chosen.model ? "the learned model" : "the analytic model",
             ev.why_not.empty() ? "" : " (" + ev.why_not + ")");
  if (chosen.model) {
    std::vector<std::size_t> order(names.size());
    for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
    const std::vector<double>& w = chosen.model->weights;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return std::abs(w[a]) > std::abs(w[b]); });
    fmt::print("weights      (log time per log feature, largest first)\n");
    for (std::size_t k = 0; k < order.size() && k < 8; ++k)
      fmt::print("             {:<28} {:+.3f}\n", names[order[k]], w[order[k]]);
  }
}

}  // namespace

void add_cache_command(CLI::App& app, const GlobalOptions& global) {
  CLI::App* cache = app.add_subcommand("cache", "Manage the tuning database");
  cache->require_subcommand(1);
  auto options = std::make_shared<CacheOptions>();
  cache->add_option("--db", options->db, "Tuning database file (default: the config's tuning_db, else "
                                         "$XDG_CACHE_HOME/kiln/tuning.sqlite)");

  CLI::App* list_cmd = cache->add_subcommand("list", "One line per entry");
  list_cmd->add_flag("--json", options->json, "Print the entries as JSON (without candidates)");
  list_cmd->callback([&global, options] { list(global, *options); });

  CLI::App* show_cmd = cache->add_subcommand("show", "An entry with every candidate measured");
  show_cmd->add_option("ID", options->id, "Entry id (see kiln cache list)")->required();
  show_cmd->add_flag("--json", options->json, "Print the entry as JSON");
  show_cmd->callback([&global, options] { show(global, *options); });

  CLI::App* export_cmd = cache->add_subcommand("export", "Write every entry to a JSON file");
  export_cmd->add_option("FILE", options->file, "Output file ('-': stdout)")->required();
  export_cmd->callback([&global, options] { export_entries(global, *options); });

  CLI::App* import_cmd = cache->add_subcommand("import", "Store the entries of a JSON export (replacing equal keys)");
  import_cmd->add_option("FILE", options->file, "Input file ('-': stdin)")->required();
  import_cmd->callback([&global, options] { import_entries(global, *options); });

  CLI::App* model_cmd = cache->add_subcommand(
      "model", "The cost model learned from a device's measurements: its held-out rank correlation against the "
               "analytic model's, and which ranks the next tuning");
  model_cmd->add_option("--device", options->device, "A device id or device name (as kiln cache list shows)")->required();
  model_cmd->add_flag("--json", options->json, "Print one JSON object");
  model_cmd->callback([&global, options] { model(global, *options); });

  CLI::App* clear_cmd = cache->add_subcommand("clear", "Remove entries");
  clear_cmd->add_option("--kernel", options->clear.kernel, "Entries whose kernel hash or name starts with this");
  clear_cmd->add_option("--device", options->clear.device, "Entries of this device id or device name");
  clear_cmd->add_flag("--all", options->clear.all, "Every entry");
  clear_cmd->callback([&global, options] { clear(global, *options); });
}

}  // namespace kiln::cli
