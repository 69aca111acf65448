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
// which is what an unrolled tensor-core loop multiplies. And compile time
// grows faster than that: NVRTC took 1.16 s for the tf32 swap=1 kernel
// (548 ops, 8 WGMMAs of 128 accumulators) and 13.3 s for it unrolled 4
// times (1033 ops, 32 WGMMAs), this machine, 2026-12-04: weights 1604 and
// 5257, 3.3 times the weight for 11.4 times the time. So the forecast
// scales the slowest compile by the square of the weight ratio.
#pragma once

#include "kiln/ir/kernel.hpp"

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>

namespace kiln::tune::detail {

// The size a compile's time is forecast from (above).
std::size_t compile_weight(const ir::Kernel& kernel);

class CompileForecast {
 public:
  using Clock = std::chrono::steady_clock;
  explicit CompileForecast(Clock::time_point deadline) : deadline_(deadline) {}

  // A compile of a kernel of `ops` ops took `seconds` (any thread).
  void took(std::size_t ops, double seconds);
  // What a compile of weight `ops` is expected to take: the slowest compile
  // so far, scaled by the square of the size ratio where this kernel is
  // larger than that one (compile time grows faster than the code; a smaller
  // kernel is not assumed faster: a compile has a fixed part). 0 before any
  // compile ended.
  double predict_s(std::size_t ops) const;
  // Why a compile of `ops` ops starting now would end past the deadline;
  // nullopt when it fits (or nothing is known yet). Any thread.
  std::optional<std::string> refuses(std::size_t ops, Clock::time_point now = Clock::now()) const;

 private:
  Clock::time_point deadline_;
  mutable std::mutex mutex_;
  double slowest_s_ = 0;
  std::size_t slowest_ops_ = 0;
};

}  // namespace kiln::tune::detail
