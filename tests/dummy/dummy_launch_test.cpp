// Launches on the dummy compute the kernels' results (random inputs, checked
// against plain C++), and report kernel faults as errors.
#include <gtest/gtest.h>

#include <random>

#include "dummy_util.hpp"
#include "support/wire_kernels.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace

TEST(DummyLaunch, AddOnRandomInputs) {
  auto plugin = load_dummy();
  kiln_device* device = plugin->open(0);
  for (std::int64_t n : {1, 7, 257, 1000}) {
    const auto ops = wire_add_f32(n);
    const std::vector<float> a = random_floats(n, 1), b = random_floats(n, 2);
    DeviceBuffer da(*plugin, device, a), db(*plugin, device, b), dc(*plugin, device, std::vector<float>(n));
    kiln_program* program = plugin->compile(device, ops);
    launch(*plugin, device, program, ops, {da.arg(), db.arg(), dc.arg()});
    const std::vector<float> c = dc.read<float>();
    for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(c[i], a[i] + b[i]) << "n " << n << " i " << i;
    plugin->api().program_release(program);
  }
}

TEST(DummyLaunch, TreeReductionWithLocalStorageAndBarriers) {
  auto plugin = load_dummy();
  kiln_device* device = plugin->open(0);
  const std::int64_t groups = 19, threads = 256;
  const auto ops = wire_tree_sum(groups, threads);
  std::vector<float> x = random_floats(groups * threads, 3);
  DeviceBuffer dx(*plugin, device, x), dout(*plugin, device, std::vector<float>(groups));
  kiln_program* program = plugin->compile(device, ops);
  launch(*plugin, device, program, ops, {dx.arg(), dout.arg()});
  const std::vector<float> out = dout.read<float>();
  for (std::int64_t g = 0; g < groups; ++g) {
    double want = 0;
    for (std::int64_t t = 0; t < threads; ++t) want += x[g * threads + t];
    EXPECT_NEAR(out[g], want, 1e-4 * threads) << g;
  }
  plugin->api().program_release(program);
}

TEST(DummyLaunch, MatrixProduct) {
  auto plugin = load_dummy();
  kiln_device* device = plugin->open(0);
  const std::int64_t m = 13, n = 17, k = 29;
  const auto ops = wire_naive_matmul(m, n, k);
  const std::vector<float> a = random_floats(m * k, 4), b = random_floats(k * n, 5);
  DeviceBuffer da(*plugin, device, a), db(*plugin, device, b), dc(*plugin, device, std::vector<float>(m * n));
  kiln_program* program = plugin->compile(device, ops);
  launch(*plugin, device, program, ops, {da.arg(), db.arg(), dc.arg()});
  const std::vector<float> c = dc.read<float>();
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (std::int64_t t = 0; t < k; ++t) want += static_cast<double>(a[i * k + t]) * b[t * n + j];
      EXPECT_NEAR(c[i * n + j], want, 1e-4) << i << "," << j;
    }
  plugin->api().program_release(program);
}

TEST(DummyLaunch, BufferHandlesWithoutHostPointersWork) {
  // The host always sets host_pointer for HOST_MEMORY devices, but a launch
  // given only the dummy's own buffer handles works as well.
  auto plugin = load_dummy();
  kiln_device* device = plugin->open(0);
  const auto ops = wire_add_f32(4);
  DeviceBuffer da(*plugin, device, std::vector<float>{1, 2, 3, 4}), db(*plugin, device, std::vector<float>{10, 20, 30, 40}),
      dc(*plugin, device, std::vector<float>(4));
  std::vector<kiln_arg> args = {da.arg(), db.arg(), dc.arg()};
  for (kiln_arg& arg : args) arg.host_pointer = nullptr;
  kiln_program* program = plugin->compile(device, ops);
  launch(*plugin, device, program, ops, args);
  EXPECT_EQ(dc.read<float>(), (std::vector<float>{11, 22, 33, 44}));
  plugin->api().program_release(program);
}

TEST(DummyLaunch, KernelFaultsAndBadLaunchesAreErrors) {
  auto plugin = load_dummy(R"({"simulate": [{"max_grid_dims": [4, 1, 1]}]})");
  kiln_device* device = plugin->open(0);
  const auto ops = wire_add_f32(4);
  DeviceBuffer da(*plugin, device, std::vector<float>(4)), db(*plugin, device, std::vector<float>(3)),
      dc(*plugin, device, std::vector<float>(4));
  kiln_program* program = plugin->compile(device, ops);
  // A buffer shorter than the kernel declares.
  expect_abi_error([&] { launch(*plugin, device, program, ops, {da.arg(), db.arg(), dc.arg()}); },
                   KILN_STATUS_INVALID_ARGUMENT, "buffer of 12 bytes is shorter than the 4 f32 elements");
  // Too few arguments.
  expect_abi_error([&] { launch(*plugin, device, program, ops, {da.arg(), dc.arg()}); }, KILN_STATUS_INVALID_ARGUMENT,
                   "kernel has 3 params but 2 arguments were given");
  plugin->api().program_release(program);
  // An out-of-range read is a launch failure naming the op and the thread.
  auto shifted = wire_add_f32(4);
  shifted[5].src[1] = 3;  // read a[len] instead of a[i]
  kiln_program* bad = plugin->compile(device, shifted);
  expect_abi_error([&] { launch(*plugin, device, bad, shifted, {da.arg(), da.arg(), dc.arg()}); },
                   KILN_STATUS_LAUNCH_FAILED, "op 5 (load): index 4 is out of range [0, 4)");
  plugin->api().program_release(bad);
  // More groups than max_grid_dims allows.
  const auto big = wire_add_f32(8);
  DeviceBuffer e(*plugin, device, std::vector<float>(8));
  kiln_program* large = plugin->compile(device, big);
  expect_abi_error([&] { launch(*plugin, device, large, big, {e.arg(), e.arg(), e.arg()}); }, KILN_STATUS_INVALID_ARGUMENT,
                   "8 groups on axis 0 exceed max_grid_dims 4");
  plugin->api().program_release(large);
}
