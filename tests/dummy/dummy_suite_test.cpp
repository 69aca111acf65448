// The shared kernel suite (every op kind, op x dtype, casts, vectors, LOCAL +
// barrier, registers, 3-D grids) and the workload probes (vectorized add and
// exp-chain, row sums with a LOCAL tree, a register-blocked tiled matmul) on
// the dummy through the ABI, against the reference interpreter run directly:
// what the dummy adds around its interpreter (options, capability checks,
// arguments by host pointer, launch grids) must not change a result.
#include <gtest/gtest.h>

#include "dummy_util.hpp"
#include "support/kernel_suite.hpp"

using namespace kiln;
using namespace kiln::test;

TEST(DummySuite, EveryKernelOfTheSuiteMatchesTheInterpreter) {
  auto plugin = load_dummy(R"({"simulate": [{"vector_widths": [2, 4, 8, 16]}]})");
  kiln_device* device = plugin->open(0);
  for (std::size_t n : {std::size_t{17}, std::size_t{257}, std::size_t{1000}}) {  // n / 8 >= 1: the 8-lane vector kernels
    const auto suite = kernel_suite(plugin->info(0), n, static_cast<unsigned>(n));
    ASSERT_GT(suite.size(), 30u);
    for (const SuiteKernel& kernel : suite) {
      SCOPED_TRACE(kernel.name + " n=" + std::to_string(n));
      for (const std::string& problem : run_suite_kernel(*plugin, device, kernel)) ADD_FAILURE() << problem;
    }
  }
}

TEST(DummySuite, WorkloadProbesMatchTheInterpreter) {
  auto plugin = load_dummy(R"({"simulate": [{"vector_widths": [2, 4, 8, 16]}]})");
  kiln_device* device = plugin->open(0);
  for (const SuiteKernel& kernel : probe_suite(4096, 5, 128)) {
    SCOPED_TRACE(kernel.name);
    for (const std::string& problem : run_suite_kernel(*plugin, device, kernel)) ADD_FAILURE() << problem;
  }
}
