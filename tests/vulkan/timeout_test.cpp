// Vulkan: a timed launch past its timeout_ns. Vulkan cannot cancel a
// running dispatch, so the plugin gives the run up as TIMEOUT (a fence wait
// with that timeout) and marks the device lost (plugin.h, timeout_ns). The
// dispatch keeps running on lavapipe's threads, so the test runs in a child
// process (a death test) that ends it.
#include "vulkan_fixture.hpp"

#include "support/timeout_launch.hpp"

#include <cstdio>
#include <cstdlib>

namespace kiln::test {
namespace {

// In the child: the timed run, the lost device, and a device close that
// does not wait for the runaway dispatch; exits 0 when all held.
[[noreturn]] void time_out_then_lose_the_device() {
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) {
      std::fprintf(stderr, "FAILED: %s\n", what.c_str());
      ++failures;
    }
  };
  VulkanSession& s = vulkan_session();
  const TimeoutOutcome outcome = timed_launch_with_timeout(*s.plugin, s.device, kiln::conformance::wire_long_loop(36),
                                                           long_loop_args(), 300'000'000);
  expect(outcome.status == KILN_STATUS_TIMEOUT, "status TIMEOUT: " + outcome.message);
  expect(outcome.message.find("passed its time limit of 300 ms") != std::string::npos, outcome.message);
  expect(outcome.seconds < 5.0, "gave up within 5 s: " + std::to_string(outcome.seconds));
  const TimeoutOutcome next = timed_launch_with_timeout(*s.plugin, s.device, kiln::conformance::wire_long_loop(1),
                                                        long_loop_args(), 300'000'000);
  expect(next.status == KILN_STATUS_DEVICE_LOST, "then DEVICE_LOST: " + next.message);
  s.plugin->api().device_close(s.device);  // must not wait for the dispatch
  std::_Exit(failures == 0 ? 0 : 1);
}

TEST_F(VulkanTest, ARunPastItsTimeoutIsTimeoutAndTheDeviceIsLost) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // lavapipe has threads: re-execute, do not fork them
  EXPECT_EXIT(time_out_then_lose_the_device(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kiln::test
