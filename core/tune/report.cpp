#include "kiln/tune/report.hpp"

#include "kiln/passes/optimization.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace kiln::tune {

namespace json = boost::json;

TuneReport make_tune_report(const CompileReport& tuned, std::string kernel_name, std::string device_id) {
  TuneReport r;
  r.kernel = std::move(kernel_name);
  r.device = std::move(device_id);
  r.baseline_ns = tuned.baseline_ns;
  r.best_ns = tuned.best_ns;
  r.speedup = tuned.best_ns > 0 && tuned.baseline_ns > 0
                  ? static_cast<double>(tuned.baseline_ns) / static_cast<double>(tuned.best_ns)
                  : 0;
  r.sequence = tuned.sequence;
  r.candidates_measured = tuned.candidates_measured;
  r.from_cache = tuned.from_database;
  // A tuning's own figure counts from the budget's start (kiln tune: the
  // command's), as the budget does; a database hit's is the look-up.
  r.tune_seconds = tuned.tuned_now && tuned.record ? tuned.record->tune_seconds : tuned.seconds;
  r.times = tuned.tune_times;
  if (tuned.record) {
    r.kernel_hash = tuned.record->key.kernel_hash;
    r.timer = tuned.record->timer;
    r.statistic = tuned.record->statistic;
  }
  r.warnings = tuned.warnings;
  r.ranked_by = tuned.ranked_by;
  r.cost_model_note = tuned.cost_model_note;
  return r;
}

std::string tune_report_json(const TuneReport& r) {
  json::object o;
  o["kernel"] = r.kernel;
  o["device"] = r.device;
  o["baseline_ns"] = r.baseline_ns;
  o["best_ns"] = r.best_ns;
  o["speedup"] = r.speedup;
  o["sequence"] = r.sequence;
  o["candidates_measured"] = r.candidates_measured;
  o["from_cache"] = r.from_cache;
  o["tune_seconds"] = r.tune_seconds;
  o["kernel_hash"] = r.kernel_hash;
  o["timer"] = r.timer;
  o["statistic"] = r.statistic;
  json::array warnings;
  for (const std::string& w : r.warnings) warnings.emplace_back(w);
  o["warnings"] = std::move(warnings);
  json::object seconds;
  seconds["setup"] = r.times.setup_s;
  seconds["search"] = r.times.search_s;
  seconds["compile"] = r.times.compile_s;
  seconds["measure"] = r.times.measure_s;
  json::object setup_split;
  setup_split["open"] = r.times.setup_open_s;
  setup_split["inputs"] = r.times.setup_inputs_s;
  setup_split["reference"] = r.times.setup_reference_s;
  setup_split["untuned_compile"] = r.times.setup_untuned_s;
  seconds["setup_split"] = std::move(setup_split);
  o["seconds"] = std::move(seconds);
  if (!r.ranked_by.empty()) {
    o["ranked_by"] = r.ranked_by;
    o["cost_model_note"] = r.cost_model_note;
  }
  if (r.reference) {
    json::object ref;
    ref["device"] = r.reference->device;
    ref["ns"] = r.reference->ns;
    ref["tuned_vs_reference"] =
        r.best_ns > 0 ? static_cast<double>(r.reference->ns) / static_cast<double>(r.best_ns) : 0.0;
    o["reference"] = std::move(ref);
  }
  return json::serialize(o) + "\n";
}

}  // namespace kiln::tune
