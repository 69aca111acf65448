// OpenCL: a timed launch past its timeout_ns. OpenCL cannot cancel a
// running kernel, so the plugin gives the run up as TIMEOUT and marks the
// device lost (plugin.h, timeout_ns). The kernel keeps running on PoCL's
// threads, so the test runs in a child process (a death test) that ends it.
// And the limit is the kernel's: PoCL's build of a kernel at its first launch
// does not count against it.
#include <gtest/gtest.h>

#include "support/timeout_launch.hpp"

#include <cstdlib>
#include <random>

namespace kiln::test {
namespace {

// In the child: the timed run, the lost device, and a shutdown that does
// not wait for the runaway kernel; exits 0 when all held.
[[noreturn]] void time_out_then_lose_the_device() {
  int failures = 0;
  {
    AbiPlugin plugin(plugin_path("opencl"));
    failures = expect_timeout_then_lost_device(plugin, plugin.open(0));
  }  // plugin shutdown: must not wait for the kernel
  std::_Exit(failures == 0 ? 0 : 1);
}

TEST(OpenclTimeout, ARunPastItsTimeoutIsTimeoutAndTheDeviceIsLost) {
  {
    AbiPlugin probe(plugin_path("opencl"));
    if (probe.device_count() == 0) GTEST_SKIP() << "no OpenCL device";
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // PoCL has threads: re-execute, do not fork them
  EXPECT_EXIT(time_out_then_lose_the_device(), ::testing::ExitedWithCode(0), "");
}

// out[0] = a chain of `length` sines and multiply-adds of x[0], whose
// constants come from `seed`: a kernel no cache has seen, quick to run (one
// work-item) and slow to build (PoCL: about 2 s for 300 on an idle 2-core machine).
std::vector<kiln_op> wire_sine_chain(int length, std::uint32_t seed) {
  using Id = WireBuilder::Id;
  WireBuilder w;
  const Id x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 1);
  const Id out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, 1);
  const Id zero = w.const_i64(0);
  w.group_index(0, w.const_i64(1));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> constant(0.5f, 1.0f);
  Id v = w.load(KILN_DTYPE_F32, x, zero);
  for (int k = 0; k < length; ++k)
    v = w.mad(KILN_DTYPE_F32, w.unary(KILN_UNARY_SIN, KILN_DTYPE_F32, v), w.const_f32(constant(rng)),
              w.const_f32(constant(rng)));
  w.store(KILN_DTYPE_F32, out, zero, v);
  return w.ops;
}

TEST(OpenclTimeout, TheLimitCountsFromTheKernelsStartNotFromPoclsBuildOfIt) {
  constexpr std::uint64_t kLimitNs = 300'000'000;
  AbiPlugin plugin(plugin_path("opencl"));
  int exercised = 0;
  for (std::uint32_t ordinal = 0; ordinal < plugin.device_count(); ++ordinal) {
    kiln_device* device = plugin.open(ordinal);
    const auto ops = wire_sine_chain(300, std::random_device{}());
    const std::vector<HostArg> args = {HostArg::of(std::vector<float>(1, 0.25f)), HostArg::of(std::vector<float>(1, 0))};
    test_log_lines().clear();
    const TimeoutOutcome first = timed_launch_with_timeout(plugin, device, ops, args, kLimitNs);
    EXPECT_EQ(first.status, KILN_STATUS_OK) << "device " << ordinal << ": " << first.message;
    if (first.launch_seconds * 1e9 <= kLimitNs) continue;  // started within the limit (no PoCL): nothing shown here
    ++exercised;
    // A start after a second or more is logged (not checked near the threshold).
    const std::size_t logged = test_log_count("PoCL builds a kernel at its first launch");
    if (first.launch_seconds >= 1.2) {
      EXPECT_EQ(logged, 1u) << first.launch_seconds << " s";
    } else if (first.launch_seconds < 0.9) {
      EXPECT_EQ(logged, 0u) << first.launch_seconds << " s";
    }
    EXPECT_EQ(timed_launch_with_timeout(plugin, device, wire_sine_chain(1, 1), args, kLimitNs).status, KILN_STATUS_OK)
        << "the device is still usable";
  }
  if (exercised == 0) GTEST_SKIP() << "no OpenCL device took longer than the limit to start a new kernel (PoCL does)";
}

}  // namespace
}  // namespace kiln::test
