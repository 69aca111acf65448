// The `autotune` section: typed, range-checked, every problem named with its
// file:line:col and key path.
#include "autotune_reader.hpp"

#include <boost/json/serialize.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>

namespace kiln::tune {

namespace json = boost::json;

std::string_view tune_mode_name(TuneMode mode) {
  switch (mode) {
    case TuneMode::Tune: return "tune";
    case TuneMode::DbOnly: return "db-only";
    case TuneMode::Off: return "off";
  }
  return "tune";
}

TimingStatistic resolved_statistic(TimingStatistic statistic, const DeviceInfo& device) {
  if (statistic != TimingStatistic::Auto) return statistic;
  return device.device_timer() ? TimingStatistic::Median : TimingStatistic::Min;
}

std::string_view timing_statistic_name(TimingStatistic statistic) {
  switch (statistic) {
    case TimingStatistic::Auto: return "auto";
    case TimingStatistic::Median: return "median";
    case TimingStatistic::Min: return "min";
  }
  return "median";
}

std::filesystem::path default_tuning_db_path() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache != nullptr && *cache != '\0') return std::filesystem::path(cache) / "kiln" / "tuning.sqlite";
  const char* home = std::getenv("HOME");
  const std::filesystem::path base = home != nullptr && *home != '\0' ? std::filesystem::path(home) : ".";
  return base / ".cache" / "kiln" / "tuning.sqlite";
}

namespace detail {

namespace {

std::string shortest(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

class SectionReader {
 public:
  using Field = std::function<Result<void>(const json::value&, const std::string&)>;

  SectionReader(const kiln::detail::JsonDocument& doc, std::string_view doc_path, std::vector<std::string>& warnings)
      : doc_(doc), doc_path_(doc_path), warnings_(warnings) {}

  Result<AutotuneSettings> read(const json::value& section) {
    if (!section.is_object()) return error("", "expected an object, got " + kind(section));
    AutotuneSettings s;
    const std::map<std::string_view, Field> fields = {
        {"mode", [&](const json::value& v, const std::string& k) { return read_mode(v, k, s.mode); }},
        {"n_launches", integer(s.n_launches, 1)},
        {"n_seeds", integer(s.n_seeds, 0)},
        {"n_added_per_step", integer(s.n_added_per_step, 1)},
        {"n_removed_per_step", integer(s.n_removed_per_step, 0)},
        {"n_total_opts", integer(s.n_total_opts, 0)},
        {"max_sequence_length", integer(s.max_sequence_length, 1, 64)},
        {"max_kernel_ops", integer(s.max_kernel_ops, 0, 10'000'000)},
        {"budget_s", number(s.budget_s, 0, 1e7, false)},
        {"seed", [&](const json::value& v, const std::string& k) { return read_seed(v, k, s.seed); }},
        {"warmups", integer(s.warmups, 0, 1000)},
        {"repeats", integer(s.repeats, 1, 1000)},
        {"statistic", [&](const json::value& v, const std::string& k) { return read_statistic(v, k, s.statistic); }},
        {"abort_factor", [&](const json::value& v, const std::string& k) { return read_factor(v, k, s.abort_factor, "never abort"); }},
        {"noise_band", number(s.noise_band, 0, 1, true)},
        {"timeout_factor", [&](const json::value& v, const std::string& k) { return read_factor(v, k, s.timeout_factor, "no time limit"); }},
        {"timeout_floor_s", number(s.timeout_floor_s, 0, 86400, false)},
        {"compile_threads", integer(s.compile_threads, 0, 256)},
        {"overlap_compile", [&](const json::value& v, const std::string& k) { return read_overlap(v, k, s.overlap_compile); }},
        {"allow_tf32", boolean(s.allow_tf32)},
        {"learned_cost_model", boolean(s.learned_cost_model)},
    };
    for (const auto& [key, value] : section.as_object()) {
      const std::string name(key);
      auto field = fields.find(name);
      if (field == fields.end()) {
        warnings_.push_back(message(name, "unknown key (ignored)"));
        continue;
      }
      KILN_TRY(field->second(value, name));
    }
    return s;
  }

 private:
  static std::string kind(const json::value& v) { return std::string(kiln::detail::json_kind_name(v)); }

  std::string message(const std::string& key, std::string_view what) const {
    const std::string at = doc_path_.empty() ? key : (key.empty() ? doc_path_ : doc_path_ + "." + key);
    return doc_.location(at).to_string() + ": autotune" + (key.empty() ? "" : "." + key) + ": " + std::string(what);
  }
  Error error(const std::string& key, std::string_view what) const {
    return make_error(ErrorCode::Config, message(key, what));
  }

  // An unsigned integer field in [low, high].
  Field integer(std::uint32_t& out, std::uint32_t low, std::uint32_t high = 1'000'000) {
    return [this, &out, low, high](const json::value& v, const std::string& key) -> Result<void> {
      const std::string want = "an integer from " + std::to_string(low) + " to " + std::to_string(high);
      if (!v.is_int64() && !v.is_uint64()) return error(key, "expected " + want + ", got " + kind(v));
      if (!v.is_int64() || v.as_int64() < static_cast<std::int64_t>(low) || v.as_int64() > static_cast<std::int64_t>(high))
        return error(key, "expected " + want + ", got " + json::serialize(v));
      out = static_cast<std::uint32_t>(v.as_int64());
      return {};
    };
  }

  Field boolean(bool& out) {
    return [this, &out](const json::value& v, const std::string& key) -> Result<void> {
      if (!v.is_bool()) return error(key, "expected true or false, got " + kind(v));
      out = v.as_bool();
      return {};
    };
  }

  // A number in [low, high] (low excluded unless low_included).
  Field number(double& out, double low, double high, bool low_included) {
    return [this, &out, low, high, low_included](const json::value& v, const std::string& key) -> Result<void> {
      const std::string want =
          std::string("a number ") + (low_included ? ">= " : "> ") + shortest(low) + " and <= " + shortest(high);
      if (!v.is_number()) return error(key, "expected " + want + ", got " + kind(v));
      const double x = v.to_number<double>();
      if (!std::isfinite(x) || x > high || (low_included ? x < low : x <= low))
        return error(key, "expected " + want + ", got " + shortest(x));
      out = x;
      return {};
    };
  }

  Result<void> read_seed(const json::value& v, const std::string& key, std::uint64_t& out) const {
    if (v.is_uint64()) {
      out = v.as_uint64();
      return {};
    }
    if (v.is_int64() && v.as_int64() >= 0) {
      out = static_cast<std::uint64_t>(v.as_int64());
      return {};
    }
    return error(key, "expected an integer >= 0, got " + (v.is_int64() ? json::serialize(v) : kind(v)));
  }

  // A factor of the best time: >= 1, or 0 meaning `zero_means`.
  Result<void> read_factor(const json::value& v, const std::string& key, double& out, std::string_view zero_means) const {
    if (!v.is_number() || !std::isfinite(v.to_number<double>()) ||
        (v.to_number<double>() != 0 && v.to_number<double>() < 1))
      return error(key, "expected a number >= 1 (or 0: " + std::string(zero_means) + "), got " +
                             (v.is_number() ? shortest(v.to_number<double>()) : kind(v)));
    out = v.to_number<double>();
    return {};
  }

  template <class Enum>
  Result<void> read_choice(const json::value& v, const std::string& key, Enum& out,
                           std::initializer_list<std::pair<std::string_view, Enum>> choices) const {
    std::string names;
    for (const auto& [name, value] : choices) names += (names.empty() ? "\"" : ", \"") + std::string(name) + "\"";
    if (v.is_string()) {
      for (const auto& [name, value] : choices) {
        if (v.as_string() == name) {
          out = value;
          return {};
        }
      }
      return error(key, "expected one of " + names + ", got " + json::serialize(v));
    }
    return error(key, "expected one of " + names + ", got " + kind(v));
  }

  Result<void> read_mode(const json::value& v, const std::string& key, TuneMode& out) const {
    return read_choice(v, key, out, {{"tune", TuneMode::Tune}, {"db-only", TuneMode::DbOnly}, {"off", TuneMode::Off}});
  }
  Result<void> read_statistic(const json::value& v, const std::string& key, TimingStatistic& out) const {
    return read_choice(v, key, out,
                       {{"auto", TimingStatistic::Auto}, {"median", TimingStatistic::Median}, {"min", TimingStatistic::Min}});
  }
  Result<void> read_overlap(const json::value& v, const std::string& key, AutotuneSettings::Overlap& out) const {
    using O = AutotuneSettings::Overlap;
    return read_choice(v, key, out, {{"auto", O::Auto}, {"always", O::Always}, {"never", O::Never}});
  }

  const kiln::detail::JsonDocument& doc_;
  std::string doc_path_;
  std::vector<std::string>& warnings_;
};

}  // namespace

Result<AutotuneSettings> read_autotune_settings(const kiln::detail::JsonDocument& doc, const json::value& section,
                                                std::string_view doc_path, std::vector<std::string>& warnings) {
  return SectionReader(doc, doc_path, warnings).read(section);
}

}  // namespace detail

Result<AutotuneSettings> parse_autotune_settings(std::string_view json_text, const std::filesystem::path& file,
                                                 std::vector<std::string>& warnings) {
  KILN_TRY_ASSIGN(kiln::detail::JsonDocument doc, kiln::detail::JsonDocument::parse(json_text, file));
  return detail::read_autotune_settings(doc, doc.root(), "", warnings);
}

}  // namespace kiln::tune
