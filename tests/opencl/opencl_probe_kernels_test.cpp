// The hand-written workload kernels of the GPU perf probe (probe_kernels.hpp),
// at small sizes on every OpenCL device, against host results: the kernels
// the CUDA probe times on the H200 are checked here first.
#include <gtest/gtest.h>

#include "support/probe_kernels.hpp"
#include "support/suite_runner.hpp"

#include <cmath>
#include <random>

using kiln::test::AbiPlugin;
using kiln::test::HostArray;
using kiln::test::SuiteArg;
using kiln::test::SuiteCheck;
using kiln::test::SuiteKernel;

namespace {

HostArray random_floats(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  return kiln::test::random_array(KILN_DTYPE_F32, n, rng, -1, 1);
}

SuiteArg buffer(HostArray data) {
  SuiteArg a;
  a.dtype = data.dtype;
  a.data = std::move(data);
  return a;
}

HostArray with(std::size_t n, const std::function<double(std::size_t)>& f) {
  HostArray out(KILN_DTYPE_F32, n);
  for (std::size_t k = 0; k < n; ++k) {
    kiln::test::Scalar s;
    s.f = f(k);
    out.set(k, s);
  }
  return out;
}

std::vector<SuiteKernel> probe_kernels() {
  std::vector<SuiteKernel> out;
  const std::int64_t n = 8192;
  {
    const HostArray x = random_floats(n, 1), y = random_floats(n, 2);
    SuiteKernel k{"add", kiln::test::probe::add(n), {buffer(x), buffer(y), buffer(HostArray(KILN_DTYPE_F32, n))}, {}};
    k.checks.push_back({2, "c", with(n, [&](std::size_t i) { return static_cast<float>(x.get(i).f + y.get(i).f); })});
    out.push_back(std::move(k));
  }
  {
    const HostArray x = random_floats(n, 3);
    SuiteKernel k{"exp chain", kiln::test::probe::exp_chain(n), {buffer(x), buffer(HostArray(KILN_DTYPE_F32, n))}, {}};
    k.checks.push_back({1, "y", with(n, [&](std::size_t i) { return std::exp(x.get(i).f) * 2 + 1; }), 1e-6, 1e-6});
    out.push_back(std::move(k));
  }
  {
    const std::int64_t rows = 37, cols = 2048;
    const HostArray x = random_floats(rows * cols, 4);
    SuiteKernel k{"sum rows", kiln::test::probe::sum_rows(rows, cols), {buffer(x), buffer(HostArray(KILN_DTYPE_F32, rows))}, {}};
    k.checks.push_back({1, "sums", with(rows, [&](std::size_t r) {
                          double s = 0;
                          for (std::int64_t c = 0; c < cols; ++c) s += x.get(r * cols + c).f;
                          return s;
                        }), 1e-5, 1e-4});
    out.push_back(std::move(k));
  }
  {
    const std::int64_t m = 256;
    const HostArray a = random_floats(m * m, 5), b = random_floats(m * m, 6);
    SuiteKernel k{"matmul", kiln::test::probe::matmul(m), {buffer(a), buffer(b), buffer(HostArray(KILN_DTYPE_F32, m * m))}, {}};
    k.checks.push_back({2, "C", with(m * m, [&](std::size_t e) {
                          const std::size_t r = e / m, c = e % m;
                          double s = 0;
                          for (std::int64_t q = 0; q < m; ++q) s += a.get(r * m + q).f * b.get(q * m + c).f;
                          return s;
                        }), 1e-5, 1e-4});
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace

TEST(OpenclProbeKernels, WorkloadKernelsMatchTheHost) {
  AbiPlugin plugin(kiln::test::plugin_path("opencl"));
  for (std::uint32_t index = 0; index < plugin.device_count(); ++index) {
    kiln_device* device = plugin.open(index);
    for (const SuiteKernel& kernel : probe_kernels()) {
      SCOPED_TRACE(std::string(plugin.info(index).name) + ": " + kernel.name);
      for (const std::string& problem : kiln::test::run_suite_kernel(plugin, device, kernel)) ADD_FAILURE() << problem;
    }
  }
}
