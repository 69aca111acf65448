// tune_kernel: the beam search, then measurement. Candidates are lowered in
// measurement order (dropping those that give a kernel already planned),
// compiled on a thread pool, and timed one at a time on one bench of
// buffers; the winner is the fastest candidate whose outputs match the
// untuned kernel's, ties within the noise band going to the simpler one.
#include "kiln/tune/tuner.hpp"

#include "candidate_bench.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/tune/beam_search.hpp"
#include "thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <unordered_set>

namespace kiln::tune {

namespace {

// Share of the budget the beam search may use; measurement gets the rest.
constexpr double kSearchShare = 0.25;
// Compile threads when the settings say 0.
constexpr unsigned kMaxAutoCompileThreads = 8;

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

struct Planned {
  SearchCandidate search;
  std::string text;
  ir::Kernel kernel;          // lowered
  std::string final_hash;
  std::future<Result<Program>> compiled;
};

class Tuning {
 public:
  Tuning(const Device& device, const ir::Kernel& kernel, const TuneOptions& options)
      : device_(device),
        kernel_(kernel),
        options_(options),
        settings_(options.settings),
        space_(options.space != nullptr ? *options.space : default_search_space()),
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

    report(TuneProgress::Phase::Search);
    const double search_end = start_ + settings_.budget_s * kSearchShare;
    const SearchResult search =
        beam_search(kernel_, device_.info(), space_, settings_, [&] { return clock_() > search_end; });
    if (search.stats.out_of_time)
      warnings_.push_back("the search stopped at its share of the budget after " +
                          std::to_string(search.stats.steps) + " steps");

    // The untuned kernel: the reference every candidate is checked against.
    Result<ir::Kernel> untuned = space_.lower(kernel_, {}, device_.info());
    if (!untuned) return with_context(std::move(untuned).error(), "tune: the untuned kernel does not lower");
    Result<Program> untuned_program = device_.compile(*untuned);
    if (!untuned_program)
      return with_context(std::move(untuned_program).error(), "tune: the untuned kernel does not compile");
    KILN_TRY_ASSIGN(detail::CandidateBench bench, detail::CandidateBench::create(device_, kernel_, std::move(args),
                                                                                 settings_.seed + 1, options_.tolerance));
    if (Result<void> r = bench.record_reference(*untuned_program); !r)
      return with_context(std::move(r).error(), "tune: the untuned kernel does not run");

    plan(search, std::move(untuned).value());
    detail::ThreadPool pool(compile_threads());  // after plan_: joined before plan_ goes
    for (std::size_t i = 1; i < plan_.size(); ++i) {
      const Planned& p = plan_[i];
      plan_[i].compiled = pool.submit([this, &p] { return device_.compile(p.kernel); });
    }
    if (!overlap_compile()) {
      for (std::size_t i = 1; i < plan_.size(); ++i) plan_[i].compiled.wait();
    }

    programs_.resize(plan_.size());
    programs_[0] = std::move(untuned_program).value();
    // The heuristic first, so that the untuned kernel (often the slowest)
    // can be cut short at abort_factor x its time.
    std::vector<std::size_t> order;
    for (std::size_t i = 1; i < plan_.size(); ++i) order.push_back(i);
    order.insert(order.begin() + (order.empty() ? 0 : 1), 0);
    for (std::size_t position = 0; position < order.size(); ++position) {
      if (position >= 2 && clock_() > start_ + settings_.budget_s) {
        warnings_.push_back("the budget ran out after " + std::to_string(measured_) + " of " +
                            std::to_string(plan_.size()) + " candidates");
        break;
      }
      measure(order[position], bench);
    }
    pool.cancel_pending();
    return finish(std::move(key));
  }

 private:
  // Lowers candidates in measurement order until n_launches distinct
  // kernels are planned; failures are recorded, duplicates dropped.
  void plan(const SearchResult& search, ir::Kernel untuned) {
    const std::vector<SearchCandidate> order = measurement_order(search, settings_.n_launches);
    std::unordered_set<std::string> seen;
    for (const SearchCandidate& candidate : order) {
      if (plan_.size() >= settings_.n_launches) break;
      if (!plan_.empty() && clock_() > start_ + settings_.budget_s) break;
      Planned p;
      p.search = candidate;
      p.text = passes::to_string(candidate.sequence);
      if (candidate.sequence.empty()) {
        p.kernel = untuned;
      } else {
        Result<ir::Kernel> lowered = space_.lower(kernel_, candidate.sequence, device_.info());
        if (!lowered) {
          CandidateRecord r;
          r.sequence = p.text;
          r.cost_ns = candidate.cost_ns;
          r.status = CandidateStatus::LowerFailed;
          r.error = lowered.error().to_string();
          records_.push_back(std::move(r));
          continue;
        }
        p.kernel = std::move(lowered).value();
      }
      p.final_hash = ir::hash_hex(p.kernel);
      if (!seen.insert(p.final_hash).second) continue;
      plan_.push_back(std::move(p));
    }
  }

  void measure(std::size_t index, detail::CandidateBench& bench) {
    Planned& p = plan_[index];
    CandidateRecord r;
    r.sequence = p.text;
    r.final_hash = p.final_hash;
    r.cost_ns = p.search.cost_ns;
    if (index != 0) {
      Result<Program> compiled = p.compiled.get();
      if (!compiled) {
        r.status = CandidateStatus::CompileFailed;
        r.error = compiled.error().to_string();
        outcomes_.emplace_back(records_.size(), index);
        records_.push_back(std::move(r));
        report(TuneProgress::Phase::Measure);
        return;
      }
      programs_[index] = std::move(compiled).value();
    }
    TimedLaunchOptions timing;
    // The untuned kernel just ran for the reference: that run warmed it.
    timing.warmups = index == 0 ? 0 : settings_.warmups;
    timing.repeats = settings_.repeats;
    if (best_ns_ > 0 && settings_.abort_factor > 0)
      timing.abort_ns = static_cast<std::uint64_t>(std::ceil(settings_.abort_factor * static_cast<double>(best_ns_)));
    const detail::BenchOutcome outcome = bench.measure(programs_[index], timing);
    ++measured_;
    r.status = outcome.status;
    r.error = outcome.error;
    r.min_ns = outcome.timing.min_ns;
    r.median_ns = outcome.timing.median_ns;
    r.runs = outcome.timing.runs;
    r.max_error = outcome.max_error;
    if (outcome.timing.runs > 0) timer_ = outcome.timing.timer;
    if (r.status == CandidateStatus::Measured) {
      const std::uint64_t t = statistic(r);
      if (best_ns_ == 0 || t < best_ns_) {
        best_ns_ = t;
        best_text_ = r.sequence;
      }
    } else {
      programs_[index] = Program();
    }
    if (index == 0) baseline_record_ = records_.size();
    outcomes_.emplace_back(records_.size(), index);
    records_.push_back(std::move(r));
    report(TuneProgress::Phase::Measure);
  }

  Result<TuneResult> finish(TuningKey key) {
    // The winner: the fastest valid candidate; within the noise band of it,
    // the shortest sequence, then the smallest text (deterministic).
    const CandidateRecord* winner = nullptr;
    std::size_t winner_plan = 0;
    for (const auto& [record, planned] : outcomes_) {
      const CandidateRecord& r = records_[record];
      if (r.status != CandidateStatus::Measured) continue;
      if (static_cast<double>(statistic(r)) > static_cast<double>(best_ns_) * (1 + settings_.noise_band)) continue;
      if (winner == nullptr || simpler(plan_[planned], plan_[winner_plan])) {
        winner = &r;
        winner_plan = planned;
      }
    }
    if (winner == nullptr) {
      // The untuned kernel produced the reference, so it can only fail here
      // when its own run was not repeatable (or its timing failed).
      const CandidateRecord& base = records_[baseline_record_];
      return make_error(ErrorCode::LaunchFailed, "tune: no candidate could be measured; the untuned kernel: " +
                                                     std::string(candidate_status_name(base.status)) +
                                                     (base.error.empty() ? "" : ": " + base.error));
    }

    TuneResult result;
    TuningEntry& e = result.entry;
    e.key = std::move(key);
    e.kernel_name = options_.kernel_name;
    e.kernel_text = ir::print(kernel_);
    e.device_id = device_.id();
    e.device_name = device_.info().name;
    e.sequence = winner->sequence;
    e.final_hash = winner->final_hash;
    e.best_ns = statistic(*winner);
    e.baseline_ns = statistic(records_[baseline_record_]);
    e.timer = std::string(timer_kind_name(timer_));
    e.statistic = std::string(timing_statistic_name(settings_.statistic));
    e.candidates_measured = measured_;
    e.tune_seconds = clock_() - start_;
    e.candidates = records_;
    result.sequence = plan_[winner_plan].search.sequence;
    result.kernel = plan_[winner_plan].kernel;
    result.program = std::move(programs_[winner_plan]);
    result.warnings = std::move(warnings_);
    report(TuneProgress::Phase::Done);
    return result;
  }

  static bool simpler(const Planned& a, const Planned& b) {
    if (a.search.sequence.size() != b.search.sequence.size()) return a.search.sequence.size() < b.search.sequence.size();
    return a.text < b.text;
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
    p.planned = static_cast<std::uint32_t>(plan_.size());
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

  std::vector<Planned> plan_;              // plan_[0]: the untuned kernel
  std::vector<Program> programs_;          // per plan_ entry, while it may still win
  std::vector<CandidateRecord> records_;   // lowering failures, then candidates in the order measured
  std::vector<std::pair<std::size_t, std::size_t>> outcomes_;  // (records_ index, plan_ index) of each planned one
  std::size_t baseline_record_ = 0;
  std::uint32_t measured_ = 0;
  std::uint64_t best_ns_ = 0;
  std::string best_text_;
  TimerKind timer_ = TimerKind::Host;
  std::vector<std::string> warnings_;
};

}  // namespace

Result<TuneResult> tune_kernel(const Device& device, const ir::Kernel& kernel, const TuneOptions& options) {
  if (!device.valid()) return make_error(ErrorCode::InvalidArgument, "tune: no device");
  return Tuning(device, kernel, options).run();
}

}  // namespace kiln::tune
