// kiln/sdk/deadline.hpp - waiting for a run with a time limit
// (kiln_timed_launch_args.timeout_ns). GPU APIs cannot cancel a kernel that
// is running, so a plugin polls its event or fence until the deadline and
// then gives the run up; plugin.h says what becomes of the device.
#pragma once

#include "kiln/sdk/plugin_support.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>

namespace kiln::sdk {

// Calls `done()` until it returns true (then true) or until `timeout_ns`
// has passed (then false). The pause between polls grows from 10 us to
// 1 ms: short kernels finish with little added wall time, long ones do not
// spin a core.
template <class Done>
bool poll_until_done(std::uint64_t timeout_ns, Done&& done) {
  using clock = std::chrono::steady_clock;
  const clock::time_point deadline = clock::now() + std::chrono::nanoseconds(timeout_ns);
  std::chrono::microseconds pause(10);
  while (!done()) {
    if (clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(1));
  }
  return true;
}

// "2.5 s" / "40 ms": a limit as a person reads it.
inline std::string timeout_text(std::uint64_t timeout_ns) {
  char text[32];
  if (timeout_ns >= 1'000'000'000ull)
    std::snprintf(text, sizeof text, "%.3g s", static_cast<double>(timeout_ns) / 1e9);
  else
    std::snprintf(text, sizeof text, "%.3g ms", static_cast<double>(timeout_ns) / 1e6);
  return text;
}

// Fails with KILN_STATUS_TIMEOUT: `what` passed `timeout_ns`; `consequence`
// says what became of the device.
[[noreturn]] inline void fail_timeout(std::string_view what, std::uint64_t timeout_ns, std::string_view consequence) {
  fail(KILN_STATUS_TIMEOUT, std::string(what) + " passed its time limit of " + timeout_text(timeout_ns) +
                                " (timed launch timeout_ns); " + std::string(consequence));
}

}  // namespace kiln::sdk
