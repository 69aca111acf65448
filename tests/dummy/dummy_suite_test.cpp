// The shared kernel suite (every op kind, op x dtype, casts, vectors, LOCAL +
// barrier, registers, 3-D grids) and the workload probes (vectorized add and
// exp-chain, row sums with a LOCAL tree, a register-blocked tiled matmul) on
// the dummy: the reference interpreter against the host reference that the
// device plugins are checked with, through the ABI.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "dummy_util.hpp"
#include "support/probe_kernels.hpp"
#include "support/suite_runner.hpp"

using namespace kiln;
using namespace kiln::test;

TEST(DummySuite, EveryKernelOfTheSuiteMatchesTheHostReference) {
  auto plugin = load_dummy(R"({"devices": [{"vector_widths": [2, 4, 8, 16]}]})");
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

TEST(DummySuite, WorkloadProbesComputeTheirResults) {
  auto plugin = load_dummy(R"({"devices": [{"vector_widths": [2, 4, 8, 16]}]})");
  kiln_device* device = plugin->open(0);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto random = [&](std::size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  auto run = [&](const std::vector<kiln_op>& ops, std::vector<const std::vector<float>*> inputs, std::size_t out_size) {
    std::vector<std::unique_ptr<DeviceBuffer>> buffers;
    std::vector<kiln_arg> args;
    for (const auto* in : inputs) buffers.push_back(std::make_unique<DeviceBuffer>(*plugin, device, *in));
    buffers.push_back(std::make_unique<DeviceBuffer>(*plugin, device, std::vector<float>(out_size)));
    for (const auto& b : buffers) args.push_back(b->arg());
    kiln_program* program = plugin->compile(device, ops);
    launch(*plugin, device, program, ops, args);
    plugin->api().program_release(program);
    return buffers.back()->read<float>();
  };

  const std::int64_t n = 4096;
  const auto x = random(n), y = random(n);
  const auto sum = run(probe::add(n), {&x, &y}, n);
  const auto chain = run(probe::exp_chain(n), {&x}, n);
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(sum[i], x[i] + y[i]) << i;
    EXPECT_NEAR(chain[i], std::exp(x[i]) * 2 + 1, 1e-5f * (std::exp(x[i]) * 2 + 1)) << i;
  }

  const std::int64_t rows = 5, cols = 2048;
  const auto m = random(rows * cols);
  const auto row_sums = run(probe::sum_rows(rows, cols), {&m}, rows);
  for (std::int64_t r = 0; r < rows; ++r) {
    double want = 0;
    for (std::int64_t c = 0; c < cols; ++c) want += m[r * cols + c];
    EXPECT_NEAR(row_sums[r], want, 1e-3) << r;
  }

  const std::int64_t size = 128;
  const auto a = random(size * size), b = random(size * size);
  const auto c = run(probe::matmul(size), {&a, &b}, size * size);
  for (std::int64_t i = 0; i < size; i += 7)
    for (std::int64_t j = 0; j < size; j += 5) {
      double want = 0;
      for (std::int64_t k = 0; k < size; ++k) want += static_cast<double>(a[i * size + k]) * b[k * size + j];
      EXPECT_NEAR(c[i * size + j], want, 1e-3) << i << "," << j;
    }
}
