// tune_kernel: the beam search, then measurement. Candidates come out of the
// pipeline (lowered exactly as they will be replayed, compiled on a thread
// pool) in measurement order and are timed one at a time on one bench of
// buffers; the winner is the fastest candidate whose outputs match the
// untuned kernel's, ties within the noise band going to the simpler one.
#include "kiln/tune/tuner.hpp"

#include "candidate_bench.hpp"
#include "candidate_pipeline.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/tune/beam_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <thread>
#include <unordered_set>

namespace kiln::tune {

namespace {

// Share of the budget the beam search may use; measurement gets the rest.
constexpr double kSearchShare = 0.25;
// Compile threads when the settings say 0.
constexpr unsigned kMaxAutoCompileThreads = 8;
// Executed-op budget of the interpreted reference (about a tenth of a
// second): a sample of the grid's groups within it.
constexpr std::uint64_t kReferenceOps = 50'000'000;

std::function<double()> clock_of(const TuneOptions& options) {
  if (options.clock) return options.clock;
  return [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
}

Error with_context(Error error, const std::string& context) {
  error.message = context + ": " + error.message;
  return error;
}

// A candidate that was measured: enough to pick and hand out the winner.
struct Measured {
  std::size_t record;  // index into the records
  passes::OptSequence sequence;
  std::string text;
  ir::Kernel kernel;
  Program program;     // kept while it may still win
};

class Tuning {
 public:
  Tuning(const Device& device, const ir::Kernel& kernel, const TuneOptions& options)
      : device_(device),
        kernel_(kernel),
        options_(options),
        settings_(options.settings),
        space_(search_space_of(options)),
        clock_(clock_of(options)),
        start_(clock_()) {}

  Result<TuneResult> run() {
    KILN_TRY_ASSIGN(TuningKey key, tuning_key(device_, kernel_, space_));
    std::vector<kernels::ArgSpec> args;
    if (options_.args) {
      args = *options_.args;
    } else {
      Result<std::vector<kernels::ArgSpec>> derived = kernels::args_of(kernel_, options_.scalars);
      if (!derived) return with_context(std::move(derived).error(), "tune: cannot make test inputs");
      args = std::move(derived).value();
    }

    // The untuned kernel: the reference every candidate is checked against.
    detail::PreparedCandidate untuned =
        detail::prepare_candidate(device_, kernel_, space_, SearchCandidate{}, /*max_kernel_ops=*/0);
    if (untuned.failure)
      return make_error(untuned.failure == CandidateStatus::LowerFailed ? ErrorCode::Verify : ErrorCode::CompileFailed,
                        "tune: the untuned kernel " +
                            std::string(untuned.failure == CandidateStatus::LowerFailed ? "does not lower"
                                                                                        : "does not compile") +
                            ": " + untuned.error);
    KILN_TRY_ASSIGN(detail::CandidateBench bench, detail::CandidateBench::create(device_, kernel_, std::move(args),
                                                                                 settings_.seed + 1, options_.tolerance,
                                                                                 settings_.allow_tf32));
    // The reference outputs from the interpreter on a sample of the grid
    // when it can: no launch, so a slow untuned kernel is only measured,
    // with the abort threshold, after the heuristic choice. Else the
    // untuned kernel's own run.
    if (!bench.record_interpreted_reference(untuned.kernel, kReferenceOps))
      if (Result<void> r = bench.record_reference(untuned.program, clock_); !r)
        return with_context(std::move(r).error(), "tune: the untuned kernel does not run");

    report(TuneProgress::Phase::Search);
    // The search's share is of what the set-up (inputs, the reference run)
    // left; large kernels' set-up can take most of a short budget, so the
    // search keeps a floor of its own.
    const double search_start = clock_();
    const double left = std::max(0.0, start_ + settings_.budget_s - search_start);
    const double search_end = search_start + std::max(left, settings_.budget_s / 4) * kSearchShare;
    const SearchResult search =
        beam_search(kernel_, device_.info(), space_, settings_, [&] { return clock_() > search_end; });
    if (search.stats.out_of_time)
      warnings_.push_back("the search stopped at its share of the budget after " +
                          std::to_string(search.stats.steps) + " steps and " +
                          std::to_string(search.candidates.size()) + " candidates");

    std::vector<SearchCandidate> queue = measurement_order(search, settings_.n_launches);
    queue.erase(queue.begin());  // the untuned kernel, prepared above
    planned_ = static_cast<std::uint32_t>(std::min<std::size_t>(settings_.n_launches, queue.size() + 1));
    seen_.insert(untuned.final_hash);
    detail::CandidatePipeline pipeline(device_, kernel_, space_, std::move(queue), compile_threads(),
                                       overlap_compile(), settings_.max_kernel_ops);

    // The heuristic choice first, then the untuned kernel (often the
    // slowest: it can then be cut short at abort_factor x the heuristic).
    if (std::optional<detail::PreparedCandidate> heuristic = pipeline.next()) take(std::move(*heuristic), bench);
    take(std::move(untuned), bench);
    while (measured_ < settings_.n_launches) {
      if (clock_() > start_ + settings_.budget_s) {
        warnings_.push_back("the budget ran out after " + std::to_string(measured_) + " of " +
                            std::to_string(planned_) + " candidates");
        break;
      }
      std::optional<detail::PreparedCandidate> next = pipeline.next();
      if (!next) break;
      take(std::move(*next), bench);
    }
    return finish(std::move(key));
  }

 private:
  // Records a prepared candidate, and measures it unless it failed or gives
  // a kernel already measured.
  void take(detail::PreparedCandidate p, detail::CandidateBench& bench) {
    CandidateRecord r;
    r.sequence = p.text;
    r.final_hash = p.final_hash;
    r.cost_ns = p.search.cost_ns;
    if (p.failure) {
      r.status = *p.failure;
      r.error = p.error;
      records_.push_back(std::move(r));
      report(TuneProgress::Phase::Measure);
      return;
    }
    if (!seen_.insert(p.final_hash).second && !p.search.sequence.empty()) return;  // a kernel already measured

    TimedLaunchOptions timing;
    // A candidate may be faulty (a pass bug, an access out of range):
    // where the plugin can, it runs in a process of its own, so that a
    // crash or a hang is this candidate's error, not the tuner's end
    // (docs/autotune.md, "Faulty candidates"). The untuned kernel too, so
    // that all are timed alike; in a fresh process no run has warmed it,
    // so it gets the warm-ups as well.
    timing.flags |= KILN_TIMED_ISOLATE;
    timing.warmups = settings_.warmups;
    timing.repeats = settings_.repeats;
    timing.timeout_ns = detail::candidate_timeout_ns(settings_, best_ns_);
    if (best_ns_ > 0 && settings_.abort_factor > 0)
      timing.abort_ns = static_cast<std::uint64_t>(std::ceil(settings_.abort_factor * static_cast<double>(best_ns_)));
    // This candidate's share of what is left of the budget (none left: one
    // run, for the untuned kernel and the heuristic choice).
    detail::TimeAllowance allowance;
    allowance.clock = clock_;
    const double left = start_ + settings_.budget_s - clock_();
    allowance.seconds = std::max(0.0, left) / std::max<double>(1, planned_ > measured_ ? planned_ - measured_ : 1);
    // Only a candidate that could win needs its outputs compared.
    if (best_ns_ > 0)
      allowance.check_below_ns =
          static_cast<std::uint64_t>(std::floor(static_cast<double>(best_ns_) * (1 + settings_.noise_band)));
    const detail::BenchOutcome outcome = bench.measure(p.program, timing, allowance, p.search.sequence.empty());
    ++measured_;
    r.status = outcome.status;
    r.error = outcome.error;
    r.min_ns = outcome.timing.min_ns;
    r.median_ns = outcome.timing.median_ns;
    r.runs = outcome.timing.runs;
    r.max_error = outcome.max_error;
    if (outcome.timing.runs > 0) timer_ = outcome.timing.timer;
    if (p.search.sequence.empty()) untuned_record_ = records_.size();
    const bool valid = r.status == CandidateStatus::Measured;
    records_.push_back(std::move(r));
    if (valid) {
      const std::uint64_t t = statistic(records_.back());
      if (best_ns_ == 0 || t < best_ns_) {
        best_ns_ = t;
        best_text_ = records_.back().sequence;
      }
      measured_ok_.push_back({records_.size() - 1, std::move(p.search.sequence), std::move(p.text),
                              std::move(p.kernel), std::move(p.program)});
      // Programs outside the noise band of the best can no longer win.
      for (Measured& m : measured_ok_)
        if (m.program.valid() && !within_band(records_[m.record])) m.program = Program();
    }
    report(TuneProgress::Phase::Measure);
  }

  bool within_band(const CandidateRecord& r) const {
    return static_cast<double>(statistic(r)) <= static_cast<double>(best_ns_) * (1 + settings_.noise_band);
  }

  Result<TuneResult> finish(TuningKey key) {
    // The winner: the fastest valid candidate; within the noise band of it,
    // the shortest sequence, then the smallest text (deterministic).
    Measured* winner = nullptr;
    for (Measured& m : measured_ok_) {
      if (!within_band(records_[m.record])) continue;
      if (winner == nullptr || m.sequence.size() < winner->sequence.size() ||
          (m.sequence.size() == winner->sequence.size() && m.text < winner->text))
        winner = &m;
    }
    if (winner == nullptr) {
      // The untuned kernel produced the reference, so it fails here only
      // when its own runs are not repeatable or cannot be timed.
      std::string why = "no candidate could be measured";
      if (untuned_record_) {
        const CandidateRecord& base = records_[*untuned_record_];
        why += "; the untuned kernel: " + std::string(candidate_status_name(base.status)) +
               (base.error.empty() ? "" : ": " + base.error);
      }
      return make_error(ErrorCode::LaunchFailed, "tune: " + why);
    }

    TuneResult result;
    TuningEntry& e = result.entry;
    e.key = std::move(key);
    e.kernel_name = options_.kernel_name;
    e.kernel_text = ir::print(kernel_);
    e.device_id = device_.id();
    e.device_name = device_.info().name;
    e.sequence = winner->text;
    e.final_hash = records_[winner->record].final_hash;
    e.best_ns = statistic(records_[winner->record]);
    e.baseline_ns = untuned_record_ ? statistic(records_[*untuned_record_]) : 0;
    e.timer = std::string(timer_kind_name(timer_));
    e.statistic = std::string(timing_statistic_name(settings_.statistic));
    e.candidates_measured = measured_;
    e.tune_seconds = clock_() - start_;
    e.candidates = records_;
    result.sequence = std::move(winner->sequence);
    result.kernel = std::move(winner->kernel);
    result.program = std::move(winner->program);
    result.warnings = std::move(warnings_);
    report(TuneProgress::Phase::Done);
    return result;
  }

  std::uint64_t statistic(const CandidateRecord& r) const {
    return settings_.statistic == TimingStatistic::Min ? r.min_ns : r.median_ns;
  }

  unsigned compile_threads() const {
    if (settings_.compile_threads > 0) return settings_.compile_threads;
    return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxAutoCompileThreads);
  }

  bool overlap_compile() const {
    switch (settings_.overlap_compile) {
      case AutotuneSettings::Overlap::Always: return true;
      case AutotuneSettings::Overlap::Never: return false;
      case AutotuneSettings::Overlap::Auto: return device_.info().kind != DeviceKind::Cpu;
    }
    return true;
  }

  void report(TuneProgress::Phase phase) {
    if (!options_.on_progress) return;
    TuneProgress p;
    p.phase = phase;
    p.measured = measured_;
    p.planned = planned_;
    p.best_ns = best_ns_;
    p.best_sequence = best_text_;
    p.elapsed_s = clock_() - start_;
    p.budget_s = settings_.budget_s;
    p.last = phase == TuneProgress::Phase::Measure && !records_.empty() ? &records_.back() : nullptr;
    options_.on_progress(p);
  }

  const Device& device_;
  const ir::Kernel& kernel_;
  const TuneOptions& options_;
  const AutotuneSettings& settings_;
  const SearchSpace& space_;
  std::function<double()> clock_;
  const double start_;

  std::vector<CandidateRecord> records_;  // every candidate, in the order handled
  std::vector<Measured> measured_ok_;     // those that were timed and matched
  std::unordered_set<std::string> seen_;  // final hashes handled
  std::optional<std::size_t> untuned_record_;
  std::uint32_t measured_ = 0;
  std::uint32_t planned_ = 0;
  std::uint64_t best_ns_ = 0;
  std::string best_text_;
  TimerKind timer_ = TimerKind::Host;
  std::vector<std::string> warnings_;
};

}  // namespace

Result<TuneResult> tune_kernel(const Device& device, const ir::Kernel& kernel, const TuneOptions& options) {
  if (!device.valid()) return make_error(ErrorCode::InvalidArgument, "tune: no device");
  // Passes and plugins report errors as values; should one throw anyway
  // (a bug), the host gets an error, not an exception through its stack.
  try {
    return Tuning(device, kernel, options).run();
  } catch (const std::exception& e) {
    return make_error(ErrorCode::Internal, std::string("tune: internal error (an exception): ") + e.what());
  }
}

}  // namespace kiln::tune
