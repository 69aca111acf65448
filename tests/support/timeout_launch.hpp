// tests/support/timeout_launch.hpp - a timed launch of a kernel that runs for
// minutes (kiln::conformance::wire_long_loop) with a short timeout_ns, as
// the plugin tests of c (isolated worker), opencl and vulkan make it.
#pragma once

#include "support/kernel_runner.hpp"
#include "support/wire_kernels.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace kiln::test {

struct TimeoutOutcome {
  kiln_status status = KILN_STATUS_OK;
  std::string message;
  double seconds = 0;         // how long compile and launch_timed took (to give up)
  double launch_seconds = 0;  // how long launch_timed alone took
};

// The arguments of kiln::conformance::wire_long_loop: out, one float.
inline std::vector<HostArg> long_loop_args() { return {HostArg::of(std::vector<float>(1, -1.0f))}; }

// Compiles `ops` on `device` and times one run of it on `args` with
// `timeout_ns`; the status and message of the error it returned (OK when none).
inline TimeoutOutcome timed_launch_with_timeout(const AbiPlugin& plugin, kiln_device* device,
                                                const std::vector<kiln_op>& ops, const std::vector<HostArg>& args,
                                                std::uint64_t timeout_ns, std::uint32_t flags = 0) {
  TimeoutOutcome outcome;
  const auto begin = std::chrono::steady_clock::now();
  try {
    ProgramHandle program(plugin, plugin.compile(device, ops));
    DeviceArgs device_args(plugin, device, args);
    kiln_timed_launch_args t{};
    t.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
    const kiln_launch_args launch = launch_args(ops, device, program.get(), device_args.abi());
    t.launch = kiln::sdk::launch_args_1_0(launch);
    t.launch_args = &launch;
    t.warmups = 0;
    t.repeats = 1;
    t.flags = flags;
    t.timeout_ns = timeout_ns;
    const auto launched = std::chrono::steady_clock::now();
    kiln_error* error = plugin.api().launch_timed(&t);
    outcome.launch_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - launched).count();
    check(error);
  } catch (const AbiError& e) {  // from compile (a lost device) or the launch
    outcome.status = e.status;
    outcome.message = e.what();
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return outcome;
}

// How long the runaway kernel is: 2^42 dependent multiply-adds, about 5 s on
// an H200, which ran 2^36 inside the 300 ms limit. Its length costs nothing
// on slower devices: the child process that launched it ends it.
inline constexpr int kRunawayIterationsLog2 = 42;

// What the GPU plugins' timeout tests check, in a child process (the
// runaway kernel ends with it): 2^iterations_log2 dependent multiply-adds
// timed with a 300 ms limit give TIMEOUT within 5 s, naming the limit, and
// the next launch DEVICE_LOST. Returns the number of failures, each printed
// to stderr (a death test sees no gtest expectations of its child).
inline int expect_timeout_then_lost_device(const AbiPlugin& plugin, kiln_device* device,
                                           int iterations_log2 = kRunawayIterationsLog2) {
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) {
      std::fprintf(stderr, "FAILED: %s\n", what.c_str());
      ++failures;
    }
  };
  const TimeoutOutcome outcome = timed_launch_with_timeout(
      plugin, device, kiln::conformance::wire_long_loop(iterations_log2), long_loop_args(), 300'000'000);
  expect(outcome.status == KILN_STATUS_TIMEOUT, "status TIMEOUT: " + outcome.message);
  expect(outcome.message.find("passed its time limit of 300 ms") != std::string::npos, outcome.message);
  expect(outcome.seconds < 5.0, "gave up within 5 s: " + std::to_string(outcome.seconds));
  const TimeoutOutcome next =
      timed_launch_with_timeout(plugin, device, kiln::conformance::wire_long_loop(1), long_loop_args(), 300'000'000);
  expect(next.status == KILN_STATUS_DEVICE_LOST, "then DEVICE_LOST: " + next.message);
  return failures;
}

}  // namespace kiln::test
