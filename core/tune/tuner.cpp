// tune_kernel: the tournament search, then measurement. Candidates come out of the
// pipeline (lowered exactly as they will be replayed, compiled on a thread
// pool) in measurement order and are timed one at a time on one bench of
// buffers; the winner is the fastest candidate whose outputs match the
// untuned kernel's, ties within the noise band going to the simpler one.
#include "kiln/tune/tuner.hpp"

#include "candidate_bench.hpp"
#include "candidate_pipeline.hpp"
#include "lowering_memo.hpp"
#include "tuning_deadline.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/passes/cost_features.hpp"
#include "kiln/tune/heuristic.hpp"
#include "kiln/tune/learned_cost.hpp"
#include "kiln/tune/tournament_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <future>
#include <thread>
#include <unordered_set>

namespace kiln::tune {

namespace {

// Share of the budget the tournament search may use; measurement gets the rest.
constexpr double kSearchShare = 0.25;
// Candidates within this share of the fastest are its finalists: timed
// with fewer runs than the settings ask (a budget too short for the full
// timing of each), up to kFinalists of them are timed once more before the
// choice (Tuning::retime_finalists).
constexpr double kFinalistBand = 0.15;
constexpr std::size_t kFinalists = 3;
// Compile threads when the settings say 0.
constexpr unsigned kMaxAutoCompileThreads = 8;
// Executed-op budget of the interpreted reference (0.1-0.4 s): a sample
// of the grid's groups within it. A short budget samples fewer groups, at
// most kReferenceOpsPerBudgetSecond ops a second of it (never fewer than
// one group): a 2 s tuning of softmax 16384^2 spent 0.39 s of it on the
// H200 interpreting 64 rows, now 16 (the first, the last and evenly spaced).
constexpr std::uint64_t kReferenceOps = 50'000'000;
constexpr double kReferenceOpsPerBudgetSecond = 6'250'000;

// Seconds in a warning: to the hundredth (std::to_string's six places say
// more than a budget's clock knows).
std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", s);
  return text;
}

std::function<double()> clock_of(const TuneOptions& options) {
  if (options.clock) return options.clock;
  return steady_clock_seconds;
}

// Features are stored when there are some and every one is finite (the
// database and JSON export keep numbers only).
bool features_storable(const std::vector<double>& features) {
  return !features.empty() && std::all_of(features.begin(), features.end(), [](double v) { return std::isfinite(v); });
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
  Program program;     // kept while it may still win or be re-timed (a finalist)
  double measure_s = 0;  // wall seconds its measurement took
  double cap_cost_ns = 0;  // the estimate predicted_past_its_cap scales by its time (cap_cost_ns)
};

class Tuning {
 public:
  Tuning(const Device& device, const ir::Kernel& kernel, const TuneOptions& options)
      : device_(device),
        kernel_(kernel),
        options_(options),
        settings_(options.settings),
        // The default space's lowerings are remembered for this tuning
        // (lowering_memo.hpp); a caller's own space is used as it is.
        space_(options.space != nullptr ? *options.space : detail::with_lowering_memo(search_space_of(options))),
        clock_(clock_of(options)),
        budget_(options.started_at ? *options.started_at : clock_(), settings_.budget_s) {}

  Result<TuneResult> run() {
    const double run_start = clock_();
    times_.setup_open_s = run_start - budget_.start();
    budget_.opened(times_.setup_open_s);
    KILN_TRY_ASSIGN(TuningKey key, tuning_key(device_, kernel_, space_));
    std::vector<kernels::ArgSpec> args;
    if (options_.args) {
      args = *options_.args;
    } else {
      Result<std::vector<kernels::ArgSpec>> derived = kernels::args_of(kernel_, options_.scalars);
      if (!derived) return with_context(std::move(derived).error(), "tune: cannot make test inputs");
      args = std::move(derived).value();
    }

    // Each compile job asks, once its kernel is lowered, whether its compile
    // still ends before the deadline (compile_forecast.hpp), on the steady
    // clock: the jobs run on pool threads, where the tuner's clock may not be
    // read. Every compile that ends tells it (and the budget) what it took.
    detail::CompileForecast forecast(
        detail::CompileForecast::Clock::now() +
        std::chrono::duration_cast<detail::CompileForecast::Clock::duration>(
            std::chrono::duration<double>(budget_.deadline() - clock_())));

    // The untuned kernel compiles on a thread of its own while the inputs
    // are made, the reference is interpreted and the search runs: the
    // set-up is charged to the budget, so it overlaps what it can.
    std::future<detail::PreparedCandidate> untuned_job = std::async(std::launch::async, [this] {
      return detail::prepare_candidate(device_, kernel_, space_, SearchCandidate{}, /*max_kernel_ops=*/0);
    });
    std::optional<detail::PreparedCandidate> untuned;
    const auto join_untuned = [&]() -> Result<void> {
      if (untuned) return {};
      untuned = untuned_job.get();
      took_compile(*untuned, forecast);
      if (untuned->failure)
        return make_error(untuned->failure == CandidateStatus::LowerFailed ? ErrorCode::Verify : ErrorCode::CompileFailed,
                          "tune: the untuned kernel " +
                              std::string(untuned->failure == CandidateStatus::LowerFailed ? "does not lower"
                                                                                           : "does not compile") +
                              ": " + untuned->error);
      return {};
    };
    // The heuristic choice is measured first whatever the search finds, so
    // it compiles from the start too, beside the untuned kernel, rather
    // than in the pipeline after the search: there it waited behind the
    // search's first compiles (a 2 s matmul 4096^3 tuning on the H200 spent
    // 1.48 s waiting for it and ended 23% past its budget).
    std::optional<HeuristicSchedule> heuristic;
    if (Result<HeuristicSchedule> h = heuristic_schedule(kernel_, device_.info(), space_);
        h && !h->sequence.empty())
      heuristic = std::move(h).value();
    std::future<detail::PreparedCandidate> heuristic_job;
    if (heuristic)
      heuristic_job = std::async(std::launch::async, [this, sequence = heuristic->sequence] {
        SearchCandidate c;
        c.sequence = sequence;
        c.recipe = true;
        return detail::prepare_candidate(device_, kernel_, space_, std::move(c), settings_.max_kernel_ops);
      });
    // Takes the heuristic choice once its compile has ended (or, with
    // `wait`, waits for it: compile time, as next_from counts it).
    std::optional<detail::PreparedCandidate> heuristic_prepared;
    const auto join_heuristic = [&](bool wait) {
      if (!heuristic_job.valid()) return;
      const bool ready = heuristic_job.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
      if (!ready && !wait) return;
      const double before = clock_();
      heuristic_prepared = heuristic_job.get();
      if (!ready) {
        const double waited = clock_() - before;
        times_.compile_s += waited;
        budget_.compiled(waited);
      }
      took_compile(*heuristic_prepared, forecast);
    };
    // Whatever returns early, the compile jobs end before `this` does.
    struct JoinOnExit {
      std::future<detail::PreparedCandidate>& job;
      ~JoinOnExit() {
        if (job.valid()) job.wait();
      }
    } join_on_exit{untuned_job}, join_heuristic_on_exit{heuristic_job};

    Result<ir::Kernel> lowered_untuned = space_.lower(kernel_, {}, device_.info());
    if (!lowered_untuned) {
      KILN_TRY(join_untuned());  // names the failure as the compile job saw it
      return with_context(std::move(lowered_untuned).error(), "tune: the untuned kernel does not lower");
    }
    KILN_TRY_ASSIGN(detail::CandidateBench bench, detail::CandidateBench::create(device_, kernel_, std::move(args),
                                                                                 settings_.seed + 1, options_.tolerance,
                                                                                 settings_.allow_tf32));
    const double inputs_made = clock_();
    times_.setup_inputs_s = inputs_made - run_start;
    // The reference outputs from the interpreter on a sample of the grid
    // when it can: no launch, so a slow untuned kernel is only measured,
    // capped and with the abort threshold, after the heuristic choice.
    // Else the untuned kernel's own run.
    const auto sample_ops = static_cast<std::uint64_t>(settings_.budget_s * kReferenceOpsPerBudgetSecond);
    if (!bench.record_interpreted_reference(*lowered_untuned, kReferenceOps, sample_ops)) {
      KILN_TRY(join_untuned());
      if (Result<void> r = bench.record_reference(untuned->program, clock_); !r)
        return with_context(std::move(r).error(), "tune: the untuned kernel does not run");
    }

    bench_interpreted_ = bench.interpreted_reference();
    // The search's share is of what the set-up (inputs, the reference run)
    // left; large kernels' set-up can take most of a short budget, so the
    // search keeps a floor of its own.
    const double search_start = clock_();
    times_.setup_reference_s = search_start - inputs_made;
    times_.setup_s = search_start - budget_.start();
    report(TuneProgress::Phase::Search);
    const double left = budget_.left(search_start);
    const double search_end = search_start + std::max(left, settings_.budget_s / 4) * kSearchShare;
    const SearchResult search =
        tournament_search(kernel_, device_.info(), ranking_space(), settings_, [&] { return clock_() > search_end; });
    times_.search_s = clock_() - search_start;
    if (search.stats.out_of_time)
      warnings_.push_back("the search stopped at its share of the budget after " +
                          std::to_string(search.stats.steps) + " steps and " +
                          std::to_string(search.candidates.size()) + " candidates");

    std::vector<SearchCandidate> queue = measurement_order(search, settings_.n_launches);
    queue.erase(queue.begin());  // the untuned kernel, prepared above
    seed(queue, heuristic_job.valid());
    planned_ = static_cast<std::uint32_t>(
        std::min<std::size_t>(settings_.n_launches, queue.size() + 1 + (heuristic_job.valid() ? 1 : 0)));
    const bool overlap = overlap_compile();
    detail::CandidatePipeline pipeline(device_, kernel_, space_, std::move(queue), compile_threads(), overlap,
                                       settings_.max_kernel_ops, &forecast);
    // The untuned kernel's compile, done by now as a rule, is the first
    // estimate of what a compile takes; the heuristic choice's, when done,
    // the second (a tensor-core kernel takes NVRTC longer than a plain one).
    if (untuned_job.valid() && untuned_job.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      KILN_TRY(join_untuned());
    join_heuristic(/*wait=*/false);
    // The first candidates compile while the untuned kernel may still be,
    // and while the heuristic choice and the untuned kernel are measured,
    // where compiles may overlap measurements. Where they may not (CPUs:
    // a compile takes the cores the kernel runs on) the pipeline starts
    // after those two measurements: started here, two gcc processes beside
    // them on c:0 made each of their runs a scheduler slice (8 ms for a
    // 42 us exp-chain over 2^18 bf16 elements), and a tuning with a cold
    // compile cache returned a kernel 2.4x slower than the heuristic choice.
    if (overlap) {
      pipeline.set_may_submit([this] { return budget_.compile_fits(clock_()); });
      pipeline.start();
    }
    {
      const double before = clock_();
      KILN_TRY(join_untuned());
      times_.setup_untuned_s = clock_() - before;  // what of the untuned compile the search did not hide
      times_.setup_s += times_.setup_untuned_s;
    }

    seen_.insert(untuned->final_hash);
    // The heuristic choice first, then the untuned kernel (often the
    // slowest: it can then be cut short at abort_factor x the heuristic).
    join_heuristic(/*wait=*/true);
    if (heuristic_prepared) {
      // Its estimate on the search's scale, as every candidate's record
      // has. Once it is measured, the candidates after it (the untuned
      // kernel's first) have their run times predicted from its time
      // (predicted_past_its_cap).
      heuristic_prepared->search.cost_ns =
          ranking_space().rank_estimate(heuristic->lowered, device_.info(), heuristic_prepared->search.features);
      take(std::move(*heuristic_prepared), bench);
    } else if (std::optional<detail::PreparedCandidate> first = next_from(pipeline)) {
      take(std::move(*first), bench);  // no heuristic choice: the cost model's first
    }
    take(std::move(*untuned), bench);
    measure_start_ = clock_() - times_.measure_s;  // the average candidate's time starts with these two
    while (measured_ < settings_.n_launches) {
      // Nothing starts that cannot finish: a measurement costs at least
      // what the cheapest one so far did, and one still to be compiled its
      // compile too (a typical one: compiles vary less than runs).
      const double now = clock_();
      const bool compiles = pipeline.would_wait();
      const double reserve = retime_reserve_s();
      if (!budget_.next_fits(now + reserve, compiles)) {
        // The reserve named too: without it "0.2 s needed, 1.0 s left" reads as a stop for nothing.
        const std::string kept = reserve > 0 ? " and re-timing the finalists about " + seconds_text(reserve) + " s" : "";
        warnings_.push_back("the budget ran out after " + std::to_string(measured_) + " of " +
                            std::to_string(planned_) + " candidates (the next would need about " +
                            seconds_text(budget_.next_needs(compiles)) + " s" + kept + "; " +
                            seconds_text(budget_.left(now)) + " s were left)");
        break;
      }
      // Compiles that overlap measurements start ahead; none that cannot
      // finish before the deadline.
      if (overlap && !budget_.compile_fits(now)) pipeline.stop_submitting();
      std::optional<detail::PreparedCandidate> next = next_from(pipeline);
      if (!next) break;
      take(std::move(*next), bench);
    }
    retime_finalists(bench);
    return finish(std::move(key));
  }

 private:
  // The space the search ranks with: the learned cost model's estimates
  // when the caller has one and the space computes features, else the
  // space's own cost model.
  const SearchSpace& ranking_space() {
    if (!options_.cost_model || !space_.features) return space_;
    learned_space_ = space_;
    learned_space_.feature_cost = [model = options_.cost_model](std::span<const double> features) {
      return model->predict_ns(features);
    };
    ranked_by_ = "learned";
    return learned_space_;
  }

  // The seed sequences go right after the heuristic choice, measured
  // whatever their size as the recipes are (they won elsewhere).
  void seed(std::vector<SearchCandidate>& queue, bool heuristic_first) {
    // The heuristic schedule (what a compile without a record gives,
    // kiln/tune/heuristic.hpp) is measured before them all (run() compiles
    // it from the start): a tuning then never hands back a program slower
    // than the one the user had without it, up to the noise. The two differ
    // where the model misjudges (on PoCL a 1024^3 matmul: the heuristic's
    // 21 ms against the model's choice, 1.05 s, which a 3 s tuning
    // returned).
    std::vector<SearchCandidate> seeds;
    for (const std::string& text : options_.seed_sequences) {
      Result<passes::OptSequence> sequence = passes::parse_sequence(text);
      if (!sequence) {
        warnings_.push_back("seed sequence '" + text + "' does not parse: " + sequence.error().to_string());
        continue;
      }
      SearchCandidate c;
      c.sequence = std::move(sequence).value();
      c.recipe = true;
      seeds.push_back(std::move(c));
    }
    // Right after the heuristic choice, or after the cost model's first
    // when there is none (run() measures that one in its place).
    queue.insert(queue.begin() + (heuristic_first || queue.empty() ? 0 : 1), std::make_move_iterator(seeds.begin()),
                 std::make_move_iterator(seeds.end()));
  }

  // A compile done outside the pipeline (the untuned kernel, the heuristic
  // choice) is the gates' estimate too.
  void took_compile(const detail::PreparedCandidate& p, detail::CompileForecast& forecast) {
    if (p.failure) return;
    budget_.compile_took(p.prepare_seconds);
    forecast.took(detail::compile_weight(p.kernel).ops, p.prepare_seconds);
  }

  // The pipeline's next candidate; the wait, when it had to compile, is
  // compile time.
  std::optional<detail::PreparedCandidate> next_from(detail::CandidatePipeline& pipeline) {
    const bool waits = pipeline.would_wait();
    const double before = clock_();
    std::optional<detail::PreparedCandidate> next = pipeline.next();
    const double waited = clock_() - before;
    times_.compile_s += waited;
    if (waits) budget_.compiled(waited);
    if (next && !next->failure) budget_.compile_took(next->prepare_seconds);
    return next;
  }

  // Where a run past its time limit would lose the device, the budget
  // cannot cut a slow run short (a slow untuned kernel, above all): a
  // candidate is not run when the cost model, scaled by the fastest
  // candidate's measured time, puts its run past what the budget gives a
  // run. The untuned kernel only with the interpreter's reference (else its
  // run made the reference); its time is then unknown.
  // The model, scaled by the fastest candidate, under-estimates the slow
  // ones: a 4096^3 f16 matmul on the H200 ran its plain-loop candidates
  // (unrolls, coarsenings, the untuned kernel's kind) at 3 to 11 times
  // their prediction from the mma kernel's 0.53 ms, one of 0.87 s.
  static constexpr double kSlowRunMargin = 8;
  // The estimate predicted_past_its_cap scales: the space's own model
  // (analytic in the default space), whichever ranks the search. The
  // learned model is fitted to the order of one tuning's candidates, not
  // to their ratios, and far from its records its ratios run wild: trained
  // on a database's f16 row tunings, it put the vectorized candidates of
  // rmsnorm-rows f32 (n = 50257, an H100) at 1600 to 60000 x the heuristic
  // choice, and all but that one were skipped as runs of seconds (they
  // took 0.4 to 0.8 ms). 0 where a run past its limit keeps the device:
  // nothing is skipped there.
  double cap_cost_ns(const ir::Kernel& lowered) const {
    if (device_.info().survives_timeout() || !space_.cost) return 0;
    return space_.cost(lowered, device_.info());
  }

  std::optional<std::string> predicted_past_its_cap(double cost_ns, bool untuned) const {
    if (best_ns_ == 0 || best_cost_ns_ <= 0 || cost_ns <= 0 || (untuned && !bench_interpreted_)) return std::nullopt;
    const double predicted_s = static_cast<double>(best_ns_) * 1e-9 * cost_ns / best_cost_ns_;
    const double cap_s = budget_.run_cap_s(clock_());
    if (predicted_s * kSlowRunMargin <= cap_s) return std::nullopt;
    return "not run: the cost model puts a run at about " + std::to_string(predicted_s) + " s (" +
           std::to_string(cost_ns / best_cost_ns_) + " x the fastest candidate's " +
           std::to_string(static_cast<double>(best_ns_) * 1e-9) + " s), and " + std::to_string(kSlowRunMargin) +
           " times that is past the " + std::to_string(cap_s) +
           " s the budget gives a run; on this device a run past its time limit would lose the device";
  }

  // Records a prepared candidate, and measures it unless it failed or gives
  // a kernel already measured.
  void take(detail::PreparedCandidate p, detail::CandidateBench& bench) {
    CandidateRecord r;
    r.sequence = p.text;
    r.final_hash = p.final_hash;
    r.cost_ns = p.search.cost_ns;
    if (features_storable(p.search.features)) {
      r.features = p.search.features;
      r.features_version = passes::kCostFeaturesVersion;
    }
    if (p.failure) {
      r.status = *p.failure;
      r.error = p.error;
      records_.push_back(std::move(r));
      report(TuneProgress::Phase::Measure);
      return;
    }
    if (!seen_.insert(p.final_hash).second && !p.search.sequence.empty()) return;  // a kernel already measured
    const double cap_cost = cap_cost_ns(p.kernel);
    if (std::optional<std::string> why = predicted_past_its_cap(cap_cost, p.search.sequence.empty())) {
      r.status = CandidateStatus::Skipped;
      r.error = *why;
      if (p.search.sequence.empty()) untuned_record_ = records_.size();
      records_.push_back(std::move(r));
      report(TuneProgress::Phase::Measure);
      return;
    }

    const TimedLaunchOptions timing = timed_launch_options();
    // This candidate's share of what is left of the budget (none left: one
    // run, for the untuned kernel and the heuristic choice), less what the
    // finalists' re-timing keeps.
    detail::TimeAllowance allowance;
    allowance.clock = clock_;
    allowance.seconds = std::max(0.0, budget_.left(clock_()) - retime_reserve_s()) / candidates_left();
    // Only a candidate that could win needs its outputs compared.
    if (best_ns_ > 0)
      allowance.check_below_ns =
          static_cast<std::uint64_t>(std::floor(static_cast<double>(best_ns_) * (1 + settings_.noise_band)));
    const double before = clock_();
    const detail::BenchOutcome outcome = bench.measure(p.program, timing, allowance, p.search.sequence.empty());
    const double cost = clock_() - before;
    times_.measure_s += cost;
    budget_.measured(cost, outcome.timing.runs > 0);
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
      measured_ok_.push_back({records_.size() - 1, std::move(p.search.sequence), std::move(p.text),
                              std::move(p.kernel), std::move(p.program), cost, cap_cost});
      note_best();
    }
    report(TuneProgress::Phase::Measure);
  }

  // The timed launch of a candidate: isolated, the settings' warm-ups and
  // repeats, the time limit and abort threshold from the fastest so far.
  TimedLaunchOptions timed_launch_options() const {
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
    // The settings' rule, capped by the budget where a timeout leaves the
    // device usable: a slow untuned kernel costs at most its cap.
    timing.timeout_ns = budget_.run_timeout_ns(detail::candidate_timeout_ns(settings_, best_ns_),
                                               device_.info().survives_timeout(), clock_());
    if (best_ns_ > 0 && settings_.abort_factor > 0) {
      timing.abort_ns = static_cast<std::uint64_t>(std::ceil(settings_.abort_factor * static_cast<double>(best_ns_)));
      // Where a timeout keeps the device, a run twice past the abort
      // threshold has lost already: it is cut there (never under the
      // budget's smallest cap, which covers a worker's start), not at the
      // budget's cap. A 10 s tuning of matmul 1024 on c:0 let the untuned
      // kernel run 4 s of it (half of what was left) to its cap.
      if (device_.info().survives_timeout() && timing.timeout_ns > 0)
        timing.timeout_ns = std::min<std::uint64_t>(
            timing.timeout_ns,
            std::max<std::uint64_t>(2 * timing.abort_ns,
                                    static_cast<std::uint64_t>(detail::TuningDeadline::kMinRunCapSeconds * 1e9)));
    }
    return timing;
  }

  // How many of the planned candidates are still to be measured (at least 1).
  double candidates_left() const { return std::max<double>(1, planned_ > measured_ ? planned_ - measured_ : 1); }

  // `r`, a valid candidate, becomes the fastest if it is.
  void consider_best(const Measured& m) {
    const CandidateRecord& r = records_[m.record];
    if (best_ns_ != 0 && statistic(r) >= best_ns_) return;
    best_ns_ = statistic(r);
    best_cost_ns_ = m.cap_cost_ns;
    best_text_ = r.sequence;
  }

  // The last measured candidate (measured_ok_.back()) may be the fastest;
  // programs past the finalists' band of the fastest can no longer win nor
  // be re-timed, and go.
  void note_best() {
    consider_best(measured_ok_.back());
    for (Measured& m : measured_ok_)
      if (m.program.valid() && !within(records_[m.record], kFinalistBand)) m.program = Program();
  }

  // The finalists: the kept programs within kFinalistBand of the fastest,
  // fastest first, at most kFinalists.
  std::vector<Measured*> finalists() {
    std::vector<Measured*> kept;
    for (Measured& m : measured_ok_)
      if (m.program.valid() && within(records_[m.record], kFinalistBand)) kept.push_back(&m);
    std::stable_sort(kept.begin(), kept.end(), [this](const Measured* a, const Measured* b) {
      return statistic(records_[a->record]) < statistic(records_[b->record]);
    });
    if (kept.size() > kFinalists) kept.resize(kFinalists);
    return kept;
  }
  // Whether one of them was timed with fewer runs than the settings ask.
  bool short_timed(const std::vector<Measured*>& finalists) const {
    return std::any_of(finalists.begin(), finalists.end(),
                       [this](const Measured* m) { return records_[m->record].runs < settings_.repeats; });
  }

  // What the main loop leaves for re-timing the finalists: what two
  // candidates took on average so far (measuring, and waiting for their
  // compiles), when there are two finalists or more and one was timed
  // short already or the next candidate's share of what is left would be
  // less than the fastest one's measurement took (it would be timed short).
  double retime_reserve_s() {
    const std::vector<Measured*> now = finalists();
    if (now.size() < 2 || measured_ == 0) return 0;  // no choice to make again yet
    const double t = clock_();
    const double reserve = 2 * (t - measure_start_) / measured_;
    if (short_timed(now)) return reserve;
    const double share = budget_.left(t) / candidates_left();
    return share < now.front()->measure_s ? reserve : 0;
  }

  // With a budget too short to time each candidate in full, a candidate's
  // time is one or two runs, and on a shared machine a run can be slowed
  // by anything else the machine does: a 10 s tuning of softmax-rows
  // 4096 x 16384 f32 on c:0 timed each of its 24 candidates once and
  // returned the 19.4 ms one in one of two tunings, the 17.1 ms one in the
  // other. So before the choice the finalists timed with fewer runs than
  // asked are timed once more, each with an equal share of what is left; a
  // finalist keeps its fastest run (the minimum statistic), and the median
  // of whichever timing had more runs. One whose outputs no longer match
  // (or whose launch fails) is disqualified.
  void retime_finalists(detail::CandidateBench& bench) {
    std::vector<Measured*> chosen = finalists();
    if (chosen.size() < 2) return;  // nothing to choose between
    // Those timed in full keep their timing.
    std::erase_if(chosen, [this](const Measured* m) { return records_[m->record].runs >= settings_.repeats; });
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      const double now = clock_();
      Measured& m = *chosen[i];
      // It may start when its first measurement's time fits what is left.
      if (now + m.measure_s > budget_.deadline()) break;
      CandidateRecord& r = records_[m.record];
      detail::TimeAllowance allowance;
      allowance.clock = clock_;
      allowance.seconds = budget_.left(now) / static_cast<double>(chosen.size() - i);
      const detail::BenchOutcome outcome = bench.measure(m.program, timed_launch_options(), allowance);
      const double cost = clock_() - now;
      times_.measure_s += cost;
      budget_.measured(cost, outcome.timing.runs > 0);
      if (outcome.status == CandidateStatus::Mismatch || outcome.status == CandidateStatus::LaunchFailed) {
        r.status = outcome.status;
        r.error = "on re-timing: " + outcome.error;
        m.program = Program();
      } else if (outcome.timing.runs > 0 && !outcome.timing.aborted) {
        r.min_ns = std::min(r.min_ns, outcome.timing.min_ns);
        if (outcome.timing.runs >= r.runs) r.median_ns = outcome.timing.median_ns;
        r.runs += outcome.timing.runs;
      }
      ++retimed_;
      // The fastest again, over every candidate still valid.
      best_ns_ = 0;
      for (const Measured& valid : measured_ok_)
        if (records_[valid.record].status == CandidateStatus::Measured) consider_best(valid);
      report(TuneProgress::Phase::Retime, &r);
    }
  }

  bool within(const CandidateRecord& r, double band) const {
    return static_cast<double>(statistic(r)) <= static_cast<double>(best_ns_) * (1 + band);
  }

  Result<TuneResult> finish(TuningKey key) {
    // The winner: the fastest valid candidate; within the noise band of it,
    // the shortest sequence, then the smallest text (deterministic).
    Measured* winner = nullptr;
    for (Measured& m : measured_ok_) {
      if (!m.program.valid() || records_[m.record].status != CandidateStatus::Measured ||
          !within(records_[m.record], settings_.noise_band))
        continue;
      if (winner == nullptr || m.sequence.size() < winner->sequence.size() ||
          (m.sequence.size() == winner->sequence.size() && m.text < winner->text))
        winner = &m;
    }
    if (winner == nullptr) {
      // Every run passed the time limit the budget gave it: a budget too
      // small for this kernel (Device::compile then falls back to the
      // heuristic program), not a fault.
      const bool all_timed_out =
          measured_ > 0 && std::all_of(records_.begin(), records_.end(), [](const CandidateRecord& r) {
            return r.status == CandidateStatus::TimedOut || r.status == CandidateStatus::LowerFailed ||
                   r.status == CandidateStatus::CompileFailed || r.status == CandidateStatus::Skipped;
          });
      // Otherwise: the untuned kernel produced the reference, so it fails
      // here only when its own runs are not repeatable or cannot be timed.
      std::string why = all_timed_out ? "no candidate finished a run within the time limits the budget of " +
                                            std::to_string(settings_.budget_s) + " s gave them (a larger budget gives more)"
                                      : "no candidate could be measured";
      if (untuned_record_) {
        const CandidateRecord& base = records_[*untuned_record_];
        why += "; the untuned kernel: " + std::string(candidate_status_name(base.status)) +
               (base.error.empty() ? "" : ": " + base.error);
      }
      return make_error(all_timed_out ? ErrorCode::Timeout : ErrorCode::LaunchFailed, "tune: " + why);
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
    e.statistic = std::string(timing_statistic_name(resolved_statistic()));
    e.candidates_measured = measured_;
    e.tune_seconds = clock_() - budget_.start();
    e.candidates = records_;
    result.sequence = std::move(winner->sequence);
    result.kernel = std::move(winner->kernel);
    result.program = std::move(winner->program);
    if (std::optional<std::string> w = skipped_warning()) warnings_.push_back(std::move(*w));
    result.warnings = std::move(warnings_);
    result.times = times_;
    result.ranked_by = ranked_by_;
    report(TuneProgress::Phase::Done);
    return result;
  }

  // Candidates recorded `skipped` (never compiled or never run) are named
  // in a warning with how many they were and the first one's reason: a
  // tuning that measured 1 of 24 because 23 were skipped said nothing of
  // it but candidates_measured (an H100, 2026-12-05, docs/autotune.md).
  std::optional<std::string> skipped_warning() const {
    std::size_t skipped = 0;
    const CandidateRecord* first = nullptr;
    for (const CandidateRecord& r : records_)
      if (r.status == CandidateStatus::Skipped) {
        ++skipped;
        if (first == nullptr) first = &r;
      }
    if (skipped == 0) return std::nullopt;
    return std::to_string(skipped) + " candidate" + (skipped == 1 ? " was" : "s were") +
           " skipped without a measurement (the first, " + (first->sequence.empty() ? "the untuned kernel" : first->sequence) +
           ": " + first->error + ")";
  }

  std::uint64_t statistic(const CandidateRecord& r) const {
    return resolved_statistic() == TimingStatistic::Min ? r.min_ns : r.median_ns;
  }

  // Auto: the minimum on devices timed by the host clock, the median
  // elsewhere (kiln/tune/autotune_config.hpp, docs/autotune.md "Timing").
  TimingStatistic resolved_statistic() const { return tune::resolved_statistic(settings_.statistic, device_.info()); }

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

  void report(TuneProgress::Phase phase, const CandidateRecord* retimed = nullptr) {
    if (!options_.on_progress) return;
    TuneProgress p;
    p.phase = phase;
    p.measured = measured_;
    p.planned = planned_;
    p.best_ns = best_ns_;
    p.best_sequence = best_text_;
    p.elapsed_s = clock_() - budget_.start();
    p.budget_s = settings_.budget_s;
    p.last = phase == TuneProgress::Phase::Measure && !records_.empty() ? &records_.back() : retimed;
    p.retimed = retimed_;
    p.times = times_;
    options_.on_progress(p);
  }

  const Device& device_;
  const ir::Kernel& kernel_;
  const TuneOptions& options_;
  const AutotuneSettings& settings_;
  const SearchSpace space_;
  std::function<double()> clock_;
  detail::TuningDeadline budget_;

  std::vector<CandidateRecord> records_;  // every candidate, in the order handled
  std::vector<Measured> measured_ok_;     // those that were timed and matched
  std::unordered_set<std::string> seen_;  // final hashes handled
  std::optional<std::size_t> untuned_record_;
  std::uint32_t measured_ = 0;
  std::uint32_t planned_ = 0;
  std::uint32_t retimed_ = 0;  // finalists timed again
  double measure_start_ = 0;   // on the clock: where the measurements began
  std::uint64_t best_ns_ = 0;
  std::string best_text_;
  TimerKind timer_ = TimerKind::Host;
  std::vector<std::string> warnings_;
  TuneTimes times_;
  double best_cost_ns_ = 0;     // cap_cost_ns of the fastest candidate so far (0: unknown)
  bool bench_interpreted_ = false;  // the reference came from the interpreter
  SearchSpace learned_space_;       // space_ ranked by the learned model (ranking_space)
  std::string ranked_by_ = "analytic";
};

}  // namespace

double steady_clock_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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
