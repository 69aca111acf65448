// Internal: turns the candidates of the search, in measurement order, into
// compiled programs on a thread pool, a few ahead of the one being measured
// (or, where compiling beside a run would disturb its time, in batches
// between runs). Each job lowers the sequence exactly as it will be
// replayed, refuses kernels too large to compile in reasonable time, and
// compiles; every failure is carried as data, never thrown.
#pragma once

#include "compile_forecast.hpp"
#include "kiln/runtime/device.hpp"
#include "kiln/tune/tournament_search.hpp"
#include "kiln/tune/search_space.hpp"
#include "kiln/tune/tuning_db.hpp"
#include "thread_pool.hpp"

#include <deque>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tune::detail {

struct PreparedCandidate {
  SearchCandidate search;
  std::string text;                 // the sequence's text form
  std::optional<CandidateStatus> failure;  // LowerFailed, Skipped or CompileFailed
  std::string error;
  ir::Kernel kernel;                // lowered: what is measured and replayed
  std::string final_hash;
  Program program;
  double prepare_seconds = 0;       // wall time of the lowering and the compile (steady clock)
};

// Lowers and compiles one candidate (on any thread). With a `forecast`,
// the compile is skipped (Skipped, with the forecast's reason) when it
// would end past the deadline, and its duration is told to the forecast.
PreparedCandidate prepare_candidate(const Device& device, const ir::Kernel& kernel, const SearchSpace& space,
                                    SearchCandidate candidate, std::size_t max_kernel_ops,
                                    CompileForecast* forecast = nullptr);

class CandidatePipeline {
 public:
  // `overlap`: keep threads + 1 candidates in preparation while one is
  // measured; otherwise prepare a batch of `threads`, wait for all of it,
  // and hand them out one by one (nothing compiles during a measurement).
  CandidatePipeline(const Device& device, const ir::Kernel& kernel, const SearchSpace& space,
                    std::vector<SearchCandidate> queue, unsigned threads, bool overlap, std::size_t max_kernel_ops,
                    CompileForecast* forecast = nullptr);
  // Drops what has not started; waits for jobs in progress.
  ~CandidatePipeline() = default;
  CandidatePipeline(const CandidatePipeline&) = delete;
  CandidatePipeline& operator=(const CandidatePipeline&) = delete;

  // Starts the first compiles without waiting for them (the tuner calls it
  // before it waits for the untuned kernel's compile: they overlap).
  void start();
  // The next candidate in queue order, prepared; nullopt when none is left.
  // Without overlap, every compile in flight has ended when it returns.
  std::optional<PreparedCandidate> next();
  // Whether next() would wait for a compile (false when none is left).
  bool would_wait() const;
  // No compile starts after this (those in progress finish and are handed
  // out): the tuner calls it when another compile cannot finish in time.
  void stop_submitting() { submitting_ = false; }
  // Asked before each compile but the first (the heuristic choice, always
  // measured): false stops submitting. The tuner's: whether a compile
  // still finishes before the deadline (TuningDeadline::compile_fits), so
  // that the first window of threads + 2 compiles, started late in a short
  // budget, does not run (and is joined) past it.
  void set_may_submit(std::function<bool()> may_submit) { may_submit_ = std::move(may_submit); }

 private:
  void submit_one();

  const Device& device_;
  const ir::Kernel& kernel_;
  const SearchSpace& space_;
  std::vector<SearchCandidate> queue_;
  std::size_t next_ = 0;  // the next queue entry to submit
  unsigned threads_;
  bool overlap_;
  bool submitting_ = true;
  std::function<bool()> may_submit_;
  std::size_t max_kernel_ops_;
  CompileForecast* forecast_;
  std::deque<std::future<PreparedCandidate>> in_flight_;
  ThreadPool pool_;  // last: destroyed (joined) first, while what its jobs use still exists
};

}  // namespace kiln::tune::detail
