// The shared kernel suite (tests/support/kernel_suite.hpp) on the Vulkan
// device: every op on every dtype the device offers, every CAST, vectors,
// LOCAL storage with barriers, REGISTER storage, loops, ifs, VARIABLE params
// in push constants and 3-D grids, through the SDK emitter's GLSL dialect, on
// random inputs against the reference interpreter.
#include "support/kernel_suite.hpp"
#include "vulkan_fixture.hpp"

namespace kiln::test {
namespace {

// Not a multiple of the suite's 64-thread groups: the guard runs too.
constexpr std::size_t kElements = 1237;

TEST_F(VulkanTest, KernelSuiteMatchesTheInterpreter) {
  const auto suite = kernel_suite(info, kElements, 11);
  ASSERT_GT(suite.size(), 20u);
  for (const auto& kernel : suite) {
    SCOPED_TRACE(kernel.name);
    try {
      for (const std::string& problem : run_suite_kernel(*plugin, device, kernel)) ADD_FAILURE() << problem;
    } catch (const AbiError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

}  // namespace
}  // namespace kiln::test
