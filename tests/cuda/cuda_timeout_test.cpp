// CUDA: a timed launch past its timeout_ns. A running kernel cannot be
// stopped without destroying the context (which other CUDA users of the
// process share), so the plugin gives the run up as TIMEOUT and marks the
// device lost (plugin.h, timeout_ns). The kernel keeps the GPU busy until its
// process ends, so the test runs in a child process (a death test).
// Without a driver it is skipped with the reason. The kernel's length:
// kRunawayIterationsLog2 (support/timeout_launch.hpp).
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
    AbiPlugin plugin(plugin_path("cuda"));
    failures = expect_timeout_then_lost_device(plugin, plugin.open(0));
  }  // plugin shutdown: must not wait for the kernel
  std::_Exit(failures == 0 ? 0 : 1);
}

TEST(CudaTimeout, ARunPastItsTimeoutIsTimeoutAndTheDeviceIsLost) {
  try {
    AbiPlugin probe(plugin_path("cuda"));
    if (probe.device_count() == 0) GTEST_SKIP() << "no CUDA device";
  } catch (const AbiError& e) {
    if (e.status == KILN_STATUS_UNAVAILABLE) GTEST_SKIP() << "no CUDA device: " << e.what();
    throw;
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the driver has threads: re-execute, do not fork them
  EXPECT_EXIT(time_out_then_lose_the_device(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kiln::test
