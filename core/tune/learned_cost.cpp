// The learned cost model: ridge regression within tunings, its held-out
// rank correlation, and the choice between it and the analytic model
// (learned_cost.hpp).
#include "kiln/tune/learned_cost.hpp"

#include "kiln/passes/cost_features.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace kiln::tune {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool timed(const CandidateRecord& r) {
  return (r.status == CandidateStatus::Measured || r.status == CandidateStatus::Aborted) && r.runs > 0;
}

// Solves the symmetric positive definite system a x = b in place (a is
// n x n, row-major) by Cholesky. Hand-written: the systems have one row per
// feature (under 30), and a linear-algebra package would have to travel to
// the GPU machine with the other carried .debs for this alone.
std::vector<double> solve_spd(std::vector<double> a, std::vector<double> b, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    d = std::sqrt(std::max(d, 1e-300));
    a[j * n + j] = d;
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {  // L y = b
    double s = b[i];
    for (std::size_t k = 0; k < i; ++k) s -= a[i * n + k] * b[k];
    b[i] = s / a[i * n + i];
  }
  for (std::size_t i = n; i-- > 0;) {  // L^T x = y
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= a[k * n + i] * b[k];
    b[i] = s / a[i * n + i];
  }
  return b;
}

// The fit itself, on any number of records (the minimum is the caller's).
LearnedCostModel fit(std::span<const CostRecord* const> records, double ridge) {
  LearnedCostModel model;
  model.records = records.size();
  const std::size_t p = records.empty() ? 0 : records.front()->features.size();
  // Each tuning's mean features and log time: what is fitted is the
  // difference from them.
  std::map<std::int64_t, std::pair<std::vector<double>, double>> sums;  // group -> (sum features, sum log t)
  std::map<std::int64_t, std::size_t> counts;
  for (const CostRecord* r : records) {
    auto& [f, t] = sums[r->group];
    f.resize(p, 0.0);
    for (std::size_t j = 0; j < p; ++j) f[j] += r->features[j];
    t += std::log(r->time_ns);
    ++counts[r->group];
  }
  model.groups = sums.size();
  for (auto& [group, sum] : sums) {
    const double n = static_cast<double>(counts[group]);
    for (double& v : sum.first) v /= n;
    sum.second /= n;
  }
  std::vector<std::vector<double>> z(records.size(), std::vector<double>(p));
  std::vector<double> y(records.size());
  std::vector<double> scale(p, 0.0);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& [mean, mean_t] = sums[records[i]->group];
    for (std::size_t j = 0; j < p; ++j) {
      z[i][j] = records[i]->features[j] - mean[j];
      scale[j] += z[i][j] * z[i][j];
    }
    y[i] = std::log(records[i]->time_ns) - mean_t;
  }
  const double n = std::max<double>(1, static_cast<double>(records.size()));
  for (double& s : scale) s = std::sqrt(s / n);
  // Standardized columns; one constant within every tuning is left out (weight 0).
  std::vector<std::size_t> used;
  for (std::size_t j = 0; j < p; ++j)
    if (scale[j] > 1e-9) used.push_back(j);
  const std::size_t q = used.size();
  std::vector<double> gram(q * q, 0.0), rhs(q, 0.0);
  for (std::size_t i = 0; i < records.size(); ++i)
    for (std::size_t a = 0; a < q; ++a) {
      const double za = z[i][used[a]] / scale[used[a]];
      rhs[a] += za * y[i];
      for (std::size_t b = 0; b <= a; ++b) gram[a * q + b] += za * z[i][used[b]] / scale[used[b]];
    }
  for (std::size_t a = 0; a < q; ++a) {
    for (std::size_t b = 0; b < a; ++b) gram[b * q + a] = gram[a * q + b];
    gram[a * q + a] += ridge * n;
  }
  const std::vector<double> w = q > 0 ? solve_spd(std::move(gram), std::move(rhs), q) : std::vector<double>{};
  model.weights.assign(p, 0.0);
  for (std::size_t a = 0; a < q; ++a) model.weights[used[a]] = w[a] / scale[used[a]];
  // The level: the mean log time the weights leave unexplained, so that
  // estimates are in ns on average across kernels (the ranking within a
  // kernel does not depend on it).
  double level = 0;
  for (const CostRecord* r : records) {
    double s = std::log(r->time_ns);
    for (std::size_t j = 0; j < p; ++j) s -= model.weights[j] * r->features[j];
    level += s;
  }
  model.intercept = records.empty() ? 0 : level / n;
  return model;
}

std::vector<double> ranks(std::span<const double> v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = mean_rank;
    i = j + 1;
  }
  return r;
}

}  // namespace

double LearnedCostModel::predict_log_ns(std::span<const double> features) const {
  double s = intercept;
  for (std::size_t j = 0; j < weights.size() && j < features.size(); ++j) s += weights[j] * features[j];
  return s;
}

double LearnedCostModel::predict_ns(std::span<const double> features) const { return std::exp(predict_log_ns(features)); }

std::vector<CostRecord> cost_records(std::span<const TuningEntry> entries, std::string_view device_fingerprint) {
  const std::size_t n_features = passes::cost_feature_names().size();
  std::vector<CostRecord> out;
  for (const TuningEntry& e : entries) {
    if (e.key.device_fingerprint != device_fingerprint) continue;
    const bool by_min = e.statistic == "min";
    std::vector<CostRecord> group;
    for (const CandidateRecord& r : e.candidates) {
      const std::uint64_t t = by_min ? r.min_ns : r.median_ns;
      if (!timed(r) || t == 0 || r.features_version != passes::kCostFeaturesVersion || r.features.size() != n_features)
        continue;
      group.push_back({e.id, r.features, static_cast<double>(t)});
    }
    if (group.size() >= 2) out.insert(out.end(), group.begin(), group.end());
  }
  return out;
}

std::optional<LearnedCostModel> train_cost_model(std::span<const CostRecord> records, const LearnedCostSettings& settings) {
  if (records.size() < settings.min_records || records.empty()) return std::nullopt;
  std::vector<const CostRecord*> all;
  for (const CostRecord& r : records) all.push_back(&r);
  return fit(all, settings.ridge);
}

double spearman(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size() || a.size() < 2) return kNaN;
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double mean = (static_cast<double>(a.size()) - 1) / 2;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (saa == 0 || sbb == 0) return kNaN;
  return sab / std::sqrt(saa * sbb);
}

DeviceCostModel device_cost_model(std::span<const CostRecord> records, const LearnedCostSettings& settings) {
  DeviceCostModel out;
  CostModelEvaluation& ev = out.evaluation;
  ev.records = records.size();
  std::vector<std::int64_t> groups;
  for (const CostRecord& r : records) groups.push_back(r.group);
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  ev.groups = groups.size();
  ev.learned_spearman = ev.analytic_spearman = kNaN;
  ev.trained = records.size() >= settings.min_records && groups.size() >= 2;
  if (!ev.trained) {
    ev.why_not = std::to_string(records.size()) + " measured records in " + std::to_string(groups.size()) +
                 " tunings; the learned model needs " + std::to_string(settings.min_records) + " in at least 2";
    return out;
  }

  // Folds of tunings by id: each fold predicted by a model of the others.
  const std::size_t folds = std::clamp<std::size_t>(settings.folds, 2, groups.size());
  std::map<std::int64_t, std::size_t> fold_of;
  for (std::size_t i = 0; i < groups.size(); ++i) fold_of[groups[i]] = i % folds;
  double learned_sum = 0, analytic_sum = 0;
  for (std::size_t fold = 0; fold < folds; ++fold) {
    std::vector<const CostRecord*> train;
    std::map<std::int64_t, std::vector<const CostRecord*>> held;
    for (const CostRecord& r : records) (fold_of[r.group] == fold ? held[r.group] : train).push_back(&r);
    if (train.empty()) continue;
    const LearnedCostModel model = fit(train, settings.ridge);
    for (const auto& [group, members] : held) {
      if (members.size() < 3) continue;
      std::vector<double> times, learned, analytic;
      for (const CostRecord* r : members) {
        times.push_back(r->time_ns);
        learned.push_back(model.predict_log_ns(r->features));
        analytic.push_back(r->features.front());  // passes::cost_feature_names()[0]: the analytic estimate
      }
      const double l = spearman(learned, times), a = spearman(analytic, times);
      if (std::isnan(l) || std::isnan(a)) continue;  // all times equal: nothing to rank
      learned_sum += l;
      analytic_sum += a;
      ++ev.held_out_groups;
      ev.held_out_records += members.size();
    }
  }
  if (ev.held_out_groups == 0) {
    ev.why_not = "no tuning of 3 or more measured candidates to hold out";
    return out;
  }
  ev.learned_spearman = learned_sum / static_cast<double>(ev.held_out_groups);
  ev.analytic_spearman = analytic_sum / static_cast<double>(ev.held_out_groups);
  ev.use_learned = ev.learned_spearman > ev.analytic_spearman;
  if (!ev.use_learned) {
    ev.why_not = "held out, it ranks no better than the analytic model";
    return out;
  }
  out.model = train_cost_model(records, settings);
  return out;
}

}  // namespace kiln::tune
