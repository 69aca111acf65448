// kiln/sdk/timing.hpp - the timing policy shared by plugins that time with a
// clock around a synchronous run (C, CBLAS) and by those that collect device
// timestamps (they pass their own `run_once`).
//
//   run warmups times (untimed), then up to `repeats` timed runs;
//   stop early when a run exceeds abort_ns (if nonzero);
//   report min and median (lower median for even counts) in nanoseconds.
#pragma once

#include <kiln/plugin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

namespace kiln::sdk {

struct TimingResult {
  std::vector<std::uint64_t> samples_ns;
  std::uint64_t min_ns = 0;
  std::uint64_t median_ns = 0;
  bool aborted = false;
};

// `run_once()` runs the kernel once and returns its time in nanoseconds.
inline TimingResult time_runs(std::uint32_t warmups, std::uint32_t repeats, std::uint64_t abort_ns,
                              const std::function<std::uint64_t()>& run_once) {
  TimingResult result;
  for (std::uint32_t i = 0; i < warmups; ++i) run_once();
  repeats = std::max<std::uint32_t>(repeats, 1);
  for (std::uint32_t i = 0; i < repeats; ++i) {
    const std::uint64_t ns = run_once();
    result.samples_ns.push_back(ns);
    if (abort_ns != 0 && ns > abort_ns && i + 1 < repeats) {
      result.aborted = true;
      break;
    }
  }
  std::vector<std::uint64_t> sorted = result.samples_ns;
  std::sort(sorted.begin(), sorted.end());
  result.min_ns = sorted.front();
  result.median_ns = sorted[(sorted.size() - 1) / 2];
  return result;
}

// Times a synchronous callable with the steady clock.
template <class F>
std::uint64_t steady_ns(F&& f) {
  const auto begin = std::chrono::steady_clock::now();
  f();
  const auto end = std::chrono::steady_clock::now();
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(end - begin).count());
}

// Writes a TimingResult into the timed-launch out-fields.
inline void store_timing(kiln_timed_launch_args& args, const TimingResult& result, kiln_timer_kind timer) {
  args.min_ns = result.min_ns;
  args.median_ns = result.median_ns;
  args.runs = static_cast<std::uint32_t>(result.samples_ns.size());
  args.aborted = result.aborted ? 1u : 0u;
  args.timer = static_cast<std::uint32_t>(timer);
  if (args.samples_ns != nullptr)
    std::copy(result.samples_ns.begin(), result.samples_ns.end(), args.samples_ns);
}

}  // namespace kiln::sdk
