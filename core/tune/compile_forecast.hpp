// Internal: whether a candidate's compile, about to start on a pool thread,
// still ends before the tuning's deadline. Judged on that thread, after the
// candidate is lowered (its size is then known) and before the device
// compiles it: compiles in flight are joined when a tuning ends, so one
// that runs past the deadline runs past the budget. The tuner's own gate
// (TuningDeadline::compile_fits) decides before a candidate is lowered,
// from the longest compile so far, and cannot see that this kernel is
// larger: on the H200 a 5 s tuning of an 8 x 4096 x 4096 tf32 matmul took
// 21.6 s, joining the compile of a tensor-core kernel unrolled 16 times.
//
// A kernel's size here is its compile weight: its ops, plus the registers
// each WGMMA names (N / 2 accumulators, and A's fragments with code 1),
// which is what an unrolled tensor-core loop multiplies. A compile is a
// fixed part (the compiler's start, headers, the driver) and a part that
// grows with the weight: in proportion for plain code, faster with
// WGMMAs. NVRTC took 1.16 s for the tf32 swap=1 kernel (548 ops, 8 WGMMAs
// of 128 accumulators) and 13.3 s for it unrolled 4 times (1033 ops, 32
// WGMMAs), this machine, 2026-12-04: weights 1604 and 5257, 3.3 times the
// weight for 11.4 times the time, so there the growing part scales with
// the square of the weight. gcc on c:0 is mostly its fixed part: softmax
// rows of weight 42 to 128 took 0.2 to 0.46 s (the slowest the first, a
// cold start beside the search's threads) and one of weight 900 about
// 0.3 s; scaled by the square from the slowest (weight 43), kernels of
// weight 160 to 900 were forecast at 7 to 230 s, and a 10 s tuning of
// softmax-rows 4096 x 16384 f16 skipped 14 of its 24 candidates as too
// slow to compile (2026-12-05); on the H200, 3 s tunings of the row
// kernels at n = 50257 (2026-12-05, 04:44) forecast weights 214 to 869 at
// 4 to 69 s and skipped 27 of rmsnorm-rows bf16's candidates. So
// each compile so far forecasts this one, its time scaled by the weight
// ratio where this kernel is larger (by its square with WGMMAs), and the
// forecast is the least of them: a one-off slow compile (a cold start,
// a compile beside the search's threads) is outvoted by any fast one,
// while an unrolled tensor-core kernel is still forecast from the largest
// such kernel compiled (1.16 s scaled to 12.5 s for the 13.3 s one).
#pragma once

#include "kiln/ir/kernel.hpp"

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tune::detail {

// The size a compile's time is forecast from, and how that time grows
// with it (above).
struct CompileWeight {
  std::size_t ops = 0;       // ops, plus the registers each WGMMA names
  bool superlinear = false;  // has WGMMAs: the growing part scales with the square of ops
};
CompileWeight compile_weight(const ir::Kernel& kernel);

class CompileForecast {
 public:
  using Clock = std::chrono::steady_clock;
  explicit CompileForecast(Clock::time_point deadline) : deadline_(deadline) {}

  // A compile of a kernel of `ops` ops took `seconds` (any thread).
  void took(std::size_t ops, double seconds);
  // What a compile of `weight` is expected to take: the least of the
  // compiles so far, each scaled by how much larger this kernel is (the
  // ratio, or its square where superlinear). 0 before any compile ended.
  double predict_s(const CompileWeight& weight) const;
  // Why a compile of `weight` starting now would end past the deadline;
  // nullopt when it fits (or nothing is known yet). Any thread.
  std::optional<std::string> refuses(const CompileWeight& weight, Clock::time_point now = Clock::now()) const;

 private:
  Clock::time_point deadline_;
  mutable std::mutex mutex_;
  struct Compile {
    std::size_t ops;
    double seconds;
  };
  std::vector<Compile> compiles_;  // a tuning's, a few hundred at most
};

}  // namespace kiln::tune::detail
