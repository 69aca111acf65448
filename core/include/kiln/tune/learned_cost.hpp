// kiln/tune/learned_cost.hpp - a cost model learned, per device, from the
// candidates the tuning database has measured (docs/cost-model.md, "The
// learned model"). It ranks the search's candidates in place of the
// analytic model when it has enough records and, held out, ranks measured
// times better than the analytic model does.
//
// The model: ridge regression of log(time) on the candidates' features
// (passes::cost_features: the analytic estimate, its terms and the counted
// work, in log space), fitted within each tuning (features and log times
// less their mean over the tuning's candidates), because only the order of
// one kernel's candidates matters to the search and kernels of different
// sizes would otherwise dominate the fit. Deterministic: no random choice,
// folds by record id.
#pragma once

#include <kiln/tune/tuning_db.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::tune {

// One measured candidate: its features, its time, and which tuning it
// belongs to (candidates are compared only within their tuning).
struct CostRecord {
  std::int64_t group = 0;  // the tuning (entry id)
  std::vector<double> features;
  double time_ns = 0;
};

// The records of `entries` on one device (fingerprint): candidates that
// were timed (measured or aborted: an aborted one was timed slower than the
// best, which the ranking should learn too) with features of this kiln's
// version, and only tunings with at least two of them.
std::vector<CostRecord> cost_records(std::span<const TuningEntry> entries, std::string_view device_fingerprint);

struct LearnedCostSettings {
  std::size_t min_records = 30;  // fewer: the analytic model alone
  double ridge = 0.1;            // the penalty, per record, on standardized features
  std::size_t folds = 5;         // held-out evaluation: tunings split by id into this many folds
};

class LearnedCostModel {
 public:
  // Estimated log(time in ns), and the time itself (what the search ranks).
  double predict_log_ns(std::span<const double> features) const;
  double predict_ns(std::span<const double> features) const;

  std::size_t records = 0;  // trained on
  std::size_t groups = 0;   // tunings
  std::vector<double> weights;  // per feature, already divided by its scale (0: a feature constant within tunings)
  double intercept = 0;
};

// nullopt when there are fewer than settings.min_records records.
std::optional<LearnedCostModel> train_cost_model(std::span<const CostRecord> records,
                                                 const LearnedCostSettings& settings = {});

// Spearman's rank correlation of two equal-length series (ties get their
// mean rank); NaN when either is constant or shorter than 2.
double spearman(std::span<const double> a, std::span<const double> b);

struct CostModelEvaluation {
  std::size_t records = 0;  // usable records
  std::size_t groups = 0;   // tunings with at least two
  bool trained = false;     // enough records for a model
  std::string why_not;      // when the learned model does not rank (too few records, not better held out)
  // Held out (each fold's tunings predicted by a model trained on the
  // others): the mean over tunings of >= 3 records of the rank correlation
  // with measured times, of the learned model and of the analytic estimate
  // on the same tunings. NaN when no tuning could be held out.
  std::size_t held_out_groups = 0;
  std::size_t held_out_records = 0;
  double learned_spearman = 0;
  double analytic_spearman = 0;
  bool use_learned = false;  // trained, and held out it ranks better than the analytic model
};

// The evaluation and, when it says use_learned, the model on every record.
struct DeviceCostModel {
  CostModelEvaluation evaluation;
  std::optional<LearnedCostModel> model;  // set only when evaluation.use_learned
};
DeviceCostModel device_cost_model(std::span<const CostRecord> records, const LearnedCostSettings& settings = {});

}  // namespace kiln::tune
