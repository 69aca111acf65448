// Export and import of tuning database entries as JSON (`kiln cache
// export|import`): every field by its C++ name, so a file is readable and
// can be edited or merged by hand.
#include "kiln/tune/tuning_db.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <functional>

namespace kiln::tune {

namespace json = boost::json;

namespace {

constexpr std::int64_t kFormatVersion = 1;

json::object candidate_to_json(const CandidateRecord& r) {
  json::object o;
  o["sequence"] = r.sequence;
  o["final_hash"] = r.final_hash;
  o["cost_ns"] = r.cost_ns;
  o["min_ns"] = r.min_ns;
  o["median_ns"] = r.median_ns;
  o["runs"] = r.runs;
  o["status"] = candidate_status_name(r.status);
  o["error"] = r.error;
  o["max_error"] = r.max_error;
  json::array features;
  for (double v : r.features) features.push_back(v);
  o["features"] = std::move(features);
  o["features_version"] = r.features.empty() ? 0u : r.features_version;
  return o;
}

json::object entry_to_json(const TuningEntry& e) {
  json::object o;
  o["kernel_hash"] = e.key.kernel_hash;
  o["device_fingerprint"] = e.key.device_fingerprint;
  o["space_version"] = e.key.space_version;
  o["kernel_name"] = e.kernel_name;
  o["device_id"] = e.device_id;
  o["device_name"] = e.device_name;
  o["sequence"] = e.sequence;
  o["final_hash"] = e.final_hash;
  o["best_ns"] = e.best_ns;
  o["baseline_ns"] = e.baseline_ns;
  o["timer"] = e.timer;
  o["statistic"] = e.statistic;
  o["candidates_measured"] = e.candidates_measured;
  o["tune_seconds"] = e.tune_seconds;
  o["created_at"] = e.created_at;
  o["kernel_text"] = e.kernel_text;
  json::array candidates;
  for (const CandidateRecord& r : e.candidates) candidates.push_back(candidate_to_json(r));
  o["candidates"] = std::move(candidates);
  return o;
}

// Reads fields of one JSON object, each error naming the source and the path.
class FieldReader {
 public:
  FieldReader(const json::object& object, std::string where) : object_(object), where_(std::move(where)) {}

  Error error(std::string_view key, std::string_view what) const {
    return make_error(ErrorCode::InvalidArgument, where_ + "." + std::string(key) + ": " + std::string(what));
  }
  const json::value* find(std::string_view key) const { return object_.if_contains(key); }

  Result<void> text(std::string_view key, std::string& out) const {
    const json::value* v = find(key);
    if (v == nullptr) return error(key, "missing");
    if (!v->is_string()) return error(key, "expected a string");
    out = std::string(v->as_string());
    return {};
  }
  template <class Int>
  Result<void> integer(std::string_view key, Int& out) const {
    const json::value* v = find(key);
    if (v == nullptr) return error(key, "missing");
    if (v->is_uint64()) {
      out = static_cast<Int>(v->as_uint64());
      return {};
    }
    if (!v->is_int64() || v->as_int64() < 0) return error(key, "expected an integer >= 0");
    out = static_cast<Int>(v->as_int64());
    return {};
  }
  Result<void> number(std::string_view key, double& out) const {
    const json::value* v = find(key);
    if (v == nullptr) return error(key, "missing");
    if (!v->is_number()) return error(key, "expected a number");
    out = v->to_number<double>();
    return {};
  }

 private:
  const json::object& object_;
  std::string where_;
};

Result<CandidateRecord> candidate_from_json(const json::value& value, const std::string& where) {
  if (!value.is_object()) return make_error(ErrorCode::InvalidArgument, where + ": expected an object");
  const FieldReader f(value.as_object(), where);
  CandidateRecord r;
  KILN_TRY(f.text("sequence", r.sequence));
  KILN_TRY(f.text("final_hash", r.final_hash));
  KILN_TRY(f.number("cost_ns", r.cost_ns));
  KILN_TRY(f.integer("min_ns", r.min_ns));
  KILN_TRY(f.integer("median_ns", r.median_ns));
  KILN_TRY(f.integer("runs", r.runs));
  std::string status;
  KILN_TRY(f.text("status", status));
  const std::optional<CandidateStatus> parsed = candidate_status_from_name(status);
  if (!parsed) return f.error("status", "unknown status '" + status + "'");
  r.status = *parsed;
  KILN_TRY(f.text("error", r.error));
  KILN_TRY(f.number("max_error", r.max_error));
  // Exports of a kiln before the learned cost model have no features.
  if (const json::value* features = f.find("features")) {
    if (!features->is_array()) return f.error("features", "expected an array of numbers");
    for (const json::value& v : features->as_array()) {
      if (!v.is_number()) return f.error("features", "expected an array of numbers");
      r.features.push_back(v.to_number<double>());
    }
    if (f.find("features_version") != nullptr) KILN_TRY(f.integer("features_version", r.features_version));
    if (r.features.empty()) r.features_version = 0;
  }
  return r;
}

Result<TuningEntry> entry_from_json(const json::value& value, const std::string& where) {
  if (!value.is_object()) return make_error(ErrorCode::InvalidArgument, where + ": expected an object");
  const FieldReader f(value.as_object(), where);
  TuningEntry e;
  KILN_TRY(f.text("kernel_hash", e.key.kernel_hash));
  KILN_TRY(f.text("device_fingerprint", e.key.device_fingerprint));
  KILN_TRY(f.text("space_version", e.key.space_version));
  KILN_TRY(f.text("kernel_name", e.kernel_name));
  KILN_TRY(f.text("kernel_text", e.kernel_text));
  KILN_TRY(f.text("device_id", e.device_id));
  KILN_TRY(f.text("device_name", e.device_name));
  KILN_TRY(f.text("sequence", e.sequence));
  KILN_TRY(f.text("final_hash", e.final_hash));
  KILN_TRY(f.integer("best_ns", e.best_ns));
  KILN_TRY(f.integer("baseline_ns", e.baseline_ns));
  KILN_TRY(f.text("timer", e.timer));
  KILN_TRY(f.text("statistic", e.statistic));
  KILN_TRY(f.integer("candidates_measured", e.candidates_measured));
  KILN_TRY(f.number("tune_seconds", e.tune_seconds));
  KILN_TRY(f.text("created_at", e.created_at));
  if (e.key.kernel_hash.empty() || e.key.device_fingerprint.empty())
    return f.error("kernel_hash", "the key (kernel_hash, device_fingerprint) must not be empty");
  const json::value* candidates = f.find("candidates");
  if (candidates == nullptr) return f.error("candidates", "missing");
  if (!candidates->is_array()) return f.error("candidates", "expected an array");
  for (std::size_t i = 0; i < candidates->as_array().size(); ++i) {
    KILN_TRY_ASSIGN(CandidateRecord r,
                    candidate_from_json(candidates->as_array()[i], where + ".candidates[" + std::to_string(i) + "]"));
    e.candidates.push_back(std::move(r));
  }
  return e;
}

}  // namespace

std::string entries_to_json(std::span<const TuningEntry> entries) {
  json::object root;
  root["kiln_tuning_db"] = kFormatVersion;
  json::array list;
  for (const TuningEntry& e : entries) list.push_back(entry_to_json(e));
  root["entries"] = std::move(list);
  return json::serialize(root) + "\n";
}

Result<std::vector<TuningEntry>> entries_from_json(std::string_view text, std::string_view source) {
  json::error_code ec;
  const json::value root = json::parse(text, ec);
  const std::string name(source);
  if (ec) return make_error(ErrorCode::Io, name + ": malformed JSON: " + ec.message());
  if (!root.is_object() || root.as_object().if_contains("kiln_tuning_db") == nullptr)
    return make_error(ErrorCode::InvalidArgument, name + ": not a kiln tuning export (no \"kiln_tuning_db\" key)");
  const json::value& version = root.as_object().at("kiln_tuning_db");
  if (!version.is_int64() || version.as_int64() != kFormatVersion)
    return make_error(ErrorCode::InvalidArgument, name + ": kiln_tuning_db: this kiln reads format " +
                                                      std::to_string(kFormatVersion) + ", got " + json::serialize(version));
  const json::value* list = root.as_object().if_contains("entries");
  if (list == nullptr || !list->is_array())
    return make_error(ErrorCode::InvalidArgument, name + ": entries: expected an array");
  std::vector<TuningEntry> entries;
  for (std::size_t i = 0; i < list->as_array().size(); ++i) {
    KILN_TRY_ASSIGN(TuningEntry e, entry_from_json(list->as_array()[i], name + ": entries[" + std::to_string(i) + "]"));
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace kiln::tune
