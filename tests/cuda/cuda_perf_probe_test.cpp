// Figures, not tests: hand-written wire kernels for the workloads,
// timed through the plugin's launch_timed on a GPU, with their results
// checked on a sample. DISABLED_ so ctest never runs them; scripts/gpu-check.sh
// runs them (--gtest_also_run_disabled_tests) and prints "PERF <name> <value>
// <unit>" lines next to PyTorch's figures. No timing is asserted.
#include <gtest/gtest.h>

#include "support/kernel_runner.hpp"
#include "support/wire_kernels.hpp"

#include <cmath>
#include <memory>
#include <random>

using kiln::test::AbiError;
using kiln::test::AbiPlugin;

namespace {

class CudaPerfProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      plugin = std::make_unique<AbiPlugin>(kiln::test::plugin_path("cuda"));
    } catch (const AbiError& e) {
      if (e.status == KILN_STATUS_UNAVAILABLE) GTEST_SKIP() << "no CUDA device: " << e.what();
      throw;
    }
    device = plugin->open(0);
  }
  void TearDown() override {
    if (plugin)
      for (kiln_buffer* b : buffers) plugin->api().buffer_free(device, b);
  }

  // A device buffer of `n` random floats in [lo, hi] (also kept on the host).
  kiln_arg random_buffer(std::size_t n, std::vector<float>& host, float lo = -1, float hi = 1) {
    host.resize(n);
    std::mt19937 rng(static_cast<unsigned>(buffers.size() + 1));
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float& x : host) x = dist(rng);
    kiln_arg a = empty_buffer(n);
    plugin->write(device, a.buffer, host.data(), a.bytes);
    return a;
  }
  kiln_arg empty_buffer(std::size_t n) {
    kiln_arg a{};
    a.kind = KILN_ARG_BUFFER;
    a.dtype = KILN_DTYPE_F32;
    a.bytes = n * sizeof(float);
    a.buffer = plugin->alloc(device, a.bytes);
    buffers.push_back(a.buffer);
    return a;
  }
  std::vector<float> read(const kiln_arg& a) {
    std::vector<float> out(a.bytes / sizeof(float));
    plugin->read(device, a.buffer, out.data(), a.bytes);
    return out;
  }

  // Median device time of `repeats` runs after warm-ups, L2 flushed before each.
  std::uint64_t time_ns(const std::vector<kiln_op>& ops, const std::vector<kiln_arg>& args) {
    kiln_program* program = plugin->compile(device, ops);
    const kiln::sdk::LaunchGrid grid = kiln::sdk::compute_grid(ops, args);
    kiln::test::launch_and_wait(*plugin, ops, device, program, args, &grid);  // once for the results
    kiln_timed_launch_args t{};
    t.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
    t.launch.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
    t.launch.device = device;
    t.launch.program = program;
    t.launch.args = args.data();
    t.launch.n_args = args.size();
    for (int axis = 0; axis < 3; ++axis) {
      t.launch.groups[axis] = grid.groups[axis];
      t.launch.local[axis] = grid.local[axis];
    }
    t.warmups = 3;
    t.repeats = 20;
    t.flags = KILN_TIMED_FLUSH_CACHE;
    kiln::test::check(plugin->api().launch_timed(&t));
    plugin->api().program_release(program);
    return t.median_ns;
  }

  static void report(const std::string& name, double value, const std::string& unit) {
    std::cout << "PERF " << name << " " << value << " " << unit << std::endl;
  }

  std::unique_ptr<AbiPlugin> plugin;
  kiln_device* device = nullptr;
  std::vector<kiln_buffer*> buffers;
};

}  // namespace

TEST_F(CudaPerfProbe, DISABLED_Add) {
  const std::int64_t n = std::int64_t{1} << 28;
  std::vector<float> hx, hy;
  const std::vector<kiln_arg> args = {random_buffer(n, hx), random_buffer(n, hy), empty_buffer(n)};
  const auto ops = kiln::test::probe::add(n);
  const std::uint64_t ns = time_ns(ops, args);
  const auto out = read(args[2]);
  for (std::int64_t k = 0; k < n; k += 99991) ASSERT_EQ(out[k], hx[k] + hy[k]) << k;
  report("add_2^28_f32", 3.0 * 4 * n / ns, "GB/s");
}

TEST_F(CudaPerfProbe, DISABLED_ExpChain) {
  const std::int64_t n = std::int64_t{1} << 28;
  std::vector<float> hx;
  const std::vector<kiln_arg> args = {random_buffer(n, hx), empty_buffer(n)};
  const auto ops = kiln::test::probe::exp_chain(n);
  const std::uint64_t ns = time_ns(ops, args);
  const auto out = read(args[1]);
  for (std::int64_t k = 0; k < n; k += 99991)
    ASSERT_NEAR(out[k], std::exp(hx[k]) * 2 + 1, 1e-5 * (std::exp(hx[k]) * 2 + 1)) << k;
  report("exp_chain_2^28_f32", 2.0 * 4 * n / ns, "GB/s");
  report("exp_chain_2^28_f32_ms", ns / 1e6, "ms");
}

TEST_F(CudaPerfProbe, DISABLED_SumRows) {
  const std::int64_t rows = 16384, cols = 16384;
  std::vector<float> hx;
  const std::vector<kiln_arg> args = {random_buffer(rows * cols, hx), empty_buffer(rows)};
  const std::uint64_t ns = time_ns(kiln::test::probe::sum_rows(rows, cols), args);
  const auto sums = read(args[1]);
  for (std::int64_t r = 0; r < rows; r += 1021) {
    double want = 0;
    for (std::int64_t c = 0; c < cols; ++c) want += hx[r * cols + c];
    ASSERT_NEAR(sums[r], want, 1e-3) << r;
  }
  report("sum_rows_16384^2_f32", 4.0 * rows * cols / ns, "GB/s");
}

TEST_F(CudaPerfProbe, DISABLED_Matmul) {
  const std::int64_t n = 4096;
  std::vector<float> ha, hb;
  const std::vector<kiln_arg> args = {random_buffer(n * n, ha), random_buffer(n * n, hb), empty_buffer(n * n)};
  const std::uint64_t ns = time_ns(kiln::test::probe::matmul(n), args);
  const auto out = read(args[2]);
  for (std::int64_t s = 0; s < 64; ++s) {
    const std::int64_t r = (s * 2654435761u) % n, col = (s * 40503u) % n;
    double want = 0;
    for (std::int64_t q = 0; q < n; ++q) want += double(ha[r * n + q]) * hb[q * n + col];
    ASSERT_NEAR(out[r * n + col], want, 1e-3) << r << "," << col;
  }
  report("matmul_4096^3_f32", 2.0 * n * n * n / ns / 1e3, "TFLOP/s");
}
