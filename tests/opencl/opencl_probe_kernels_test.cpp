// The hand-written workload kernels of the GPU perf probe (wire_kernels.hpp,
// probe::), at small sizes on every OpenCL device, against the reference
// interpreter: the kernels the CUDA probe times on the H200 are checked here
// first.
#include <gtest/gtest.h>

#include "support/kernel_suite.hpp"

TEST(OpenclProbeKernels, WorkloadKernelsMatchTheInterpreter) {
  kiln::test::AbiPlugin plugin(kiln::test::plugin_path("opencl"));
  for (std::uint32_t index = 0; index < plugin.device_count(); ++index) {
    kiln_device* device = plugin.open(index);
    for (const kiln::test::SuiteKernel& kernel : kiln::test::probe_suite(8192, 37, 128)) {
      SCOPED_TRACE(std::string(plugin.info(index).name) + ": " + kernel.name);
      for (const std::string& problem : kiln::test::run_suite_kernel(plugin, device, kernel)) ADD_FAILURE() << problem;
    }
  }
}
