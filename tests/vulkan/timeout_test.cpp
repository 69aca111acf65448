// Vulkan: a timed launch past its timeout_ns. Vulkan cannot cancel a
// running dispatch, so the plugin gives the run up as TIMEOUT (a fence wait
// with that timeout) and marks the device lost (plugin.h, timeout_ns). The
// dispatch keeps running on lavapipe's threads, so the test runs in a child
// process (a death test) that ends it.
#include "vulkan_fixture.hpp"

#include "support/timeout_launch.hpp"

#include <cstdlib>

namespace kiln::test {
namespace {

// In the child: the timed run, the lost device, and a device close that
// does not wait for the runaway dispatch; exits 0 when all held.
[[noreturn]] void time_out_then_lose_the_device() {
  VulkanSession& s = vulkan_session();
  const int failures = expect_timeout_then_lost_device(*s.plugin, s.device);
  s.plugin->api().device_close(s.device);  // must not wait for the dispatch
  std::_Exit(failures == 0 ? 0 : 1);
}

TEST_F(VulkanTest, ARunPastItsTimeoutIsTimeoutAndTheDeviceIsLost) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // lavapipe has threads: re-execute, do not fork them
  EXPECT_EXIT(time_out_then_lose_the_device(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kiln::test
