// Internal: the budget of one tuning as a deadline on its clock, and what
// may still start before it. The budget starts when the tuning is asked for
// (set-up included); nothing starts that cannot finish, judged by the costs
// measured so far; and where a timeout leaves the device usable, each run's
// time limit is capped by what is left (docs/autotune.md, "The budget").
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kiln::tune::detail {

class TuningDeadline {
 public:
  TuningDeadline(double start, double budget_s) : start_(start), budget_s_(budget_s) {}

  double start() const { return start_; }
  // The tuning's own work ends early by a finishing reserve: what follows
  // it (freeing the buffers, storing the record, leaving the driver, the
  // process's exit) is wall-clock time of the budget too. The reserve is
  // kFinishShare of the budget, or, where opening the runtime took longer,
  // kLeaveShareOfOpen of what opening took (opened()): on the H200 opening
  // (the CUDA probe, then the driver) took 0.37-0.55 s and what followed a
  // 2 s tuning 0.14-0.38 s, about 0.6 of it; on c:0 opening takes 0.05 s.
  double deadline() const { return start_ + budget_s_ - finish_reserve_s(); }
  double finish_reserve_s() const { return std::max(budget_s_ * kFinishShare, open_s_ * kLeaveShareOfOpen); }
  static constexpr double kFinishShare = 0.05;
  static constexpr double kLeaveShareOfOpen = 0.6;
  // Opening the runtime and the device took `seconds` of the budget.
  void opened(double seconds) { open_s_ = std::max(0.0, seconds); }
  double left(double now) const;

  // A measurement took `seconds`; `ran`: it timed at least one run (a
  // failure before the first run says nothing about what a run costs).
  void measured(double seconds, bool ran);
  // Waiting for a compile took `seconds` (a batch of them on CPU devices).
  void compiled(double seconds) { compile_waits_.push_back(seconds); }

  // What the next candidate needs at least: the cheapest measurement so far
  // (runs differ by orders of magnitude, and a slow one is cut short by the
  // abort threshold), plus, when it is still to be compiled, a typical
  // compile (the median: compiles vary less, and nothing cuts them short).
  double next_needs(bool needs_compile) const;
  // Whether a candidate that needs that may still start at `now`.
  bool next_fits(double now, bool needs_compile) const { return now + next_needs(needs_compile) <= deadline(); }
  // A compile (lowering included) took `seconds` on its pool thread.
  void compile_took(double seconds) { compile_durations_.push_back(seconds); }
  // Whether a compile started at `now` would still leave time for its
  // measurement (compiles overlapping measurements start ahead), judged by
  // what a compile takes (the longest compile_took so far), not by the
  // waits for one: overlapped compiles are rarely waited for, and one
  // started too late is waited for after the deadline (the pool joins it:
  // on the H200 0.1-0.35 s of NVRTC past a 2 s tuning's end). The longest,
  // not the median: a matmul's tensor-core kernels take NVRTC several times
  // a plain kernel's compile, and with the median a 2 s matmul 4096^3
  // tuning ended 0.53 s before its process did (+19% on the budget).
  bool compile_fits(double now) const;

  // The time limit of one run, from the settings' rule (`rule_ns`, 0: no
  // limit, kept): where `survives_timeout`, at most half of what is left
  // (a run cut short leaves time for another), never less than
  // kMinRunCapShare of the budget nor kMinRunCapSeconds (the untuned kernel
  // and the heuristic choice are measured even when set-up spent the
  // budget: by this much they may overrun it; and an isolated launch's
  // limit covers its worker's start, tens of ms on a loaded machine).
  std::uint64_t run_timeout_ns(std::uint64_t rule_ns, bool survives_timeout, double now) const;
  // The longest the budget lets one run take at `now` (the cap above).
  double run_cap_s(double now) const;
  static constexpr double kMinRunCapShare = 1.0 / 8;
  static constexpr double kMinRunCapSeconds = 0.25;

 private:
  double start_;
  double budget_s_;
  double open_s_ = 0;
  double cheapest_measure_s_ = -1;  // < 0: none measured yet
  std::vector<double> compile_waits_;
  std::vector<double> compile_durations_;
};

}  // namespace kiln::tune::detail
