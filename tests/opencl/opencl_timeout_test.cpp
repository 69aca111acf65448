// OpenCL: a timed launch past its timeout_ns. OpenCL cannot cancel a
// running kernel, so the plugin gives the run up as TIMEOUT and marks the
// device lost (plugin.h, timeout_ns). The kernel keeps running on PoCL's
// threads, so the test runs in a child process (a death test) that ends it.
#include <gtest/gtest.h>

#include "support/timeout_launch.hpp"

#include <cstdlib>

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

}  // namespace
}  // namespace kiln::test
