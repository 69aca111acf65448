// kiln_cpu_measure: the figures of issue 4, measured through the plugin ABI
// (until `kiln run` lands): a naive 1024^3 f32 matmul on c:0 and on cblas:0
// (GFLOP/s), and exp-chain y = exp(x) * 2 + 1 over 2^26 f32 on c:0 (GB/s,
// 8 bytes per element). Kernels are written as core/kernels writes them.
// Not a test: it asserts nothing and prints a table.
//
//   kiln_cpu_measure [repeats]
//   OPENBLAS_CORETYPE=Prescott kiln_cpu_measure   # OpenBLAS without the fix
#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"

#include <cstdio>
#include <cstdlib>
#include <random>

using namespace kiln::test;

namespace {

// rows_axis: the group axis of the row index (core/kernels: 0). The C
// plugin runs axis 0 innermost, so 1 puts columns there.
std::vector<kiln_op> matmul_f32(std::int64_t n, std::uint32_t rows_axis = 0) {
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, static_cast<std::uint64_t>(n * n));
  auto b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, static_cast<std::uint64_t>(n * n));
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, static_cast<std::uint64_t>(n * n));
  auto len = w.const_i64(n);
  auto i = w.group_index(rows_axis, len);
  auto j = w.group_index(1 - rows_axis, len);
  auto acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1);
  auto zero = w.const_i64(0);
  w.store(KILN_DTYPE_F32, acc, zero, w.const_f32(0));
  auto row = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, i, len);
  auto p = w.loop(len);
  auto x = w.load(KILN_DTYPE_F32, a, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, row, p));
  auto y = w.load(KILN_DTYPE_F32, b, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, p, len), j));
  auto sum = w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, acc, zero), w.binary(KILN_BINARY_MUL, KILN_DTYPE_F32, x, y));
  w.store(KILN_DTYPE_F32, acc, zero, sum);
  w.end_loop(p);
  w.store(KILN_DTYPE_F32, c, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, i, len), j),
          w.load(KILN_DTYPE_F32, acc, zero));
  return w.ops;
}

std::vector<kiln_op> exp_chain_f32(std::int64_t n) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, static_cast<std::uint64_t>(n));
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, static_cast<std::uint64_t>(n));
  auto i = w.group_index(0, w.const_i64(n));
  auto e = w.unary(KILN_UNARY_EXP, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, x, i));
  auto doubled = w.binary(KILN_BINARY_MUL, KILN_DTYPE_F32, e, w.const_f32(2));
  w.store(KILN_DTYPE_F32, y, i, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, doubled, w.const_f32(1)));
  return w.ops;
}

HostArg random_f32(std::size_t n, std::uint64_t seed) {
  HostArg a = HostArg::buffer(KILN_DTYPE_F32, n);
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::uniform_real_distribution<float> dist(-1, 1);
  for (std::size_t i = 0; i < n; ++i) {
    const float v = dist(rng);
    std::memcpy(a.bytes.data() + 4 * i, &v, 4);
  }
  return a;
}

// Median seconds of `repeats` timed launches after one warm-up.
double time_kernel(const AbiPlugin& plugin, const std::vector<kiln_op>& ops, const std::vector<HostArg>& args, unsigned repeats) {
  kiln_device* d = plugin.open(0);
  ProgramHandle program(plugin, plugin.compile(d, ops));
  DeviceArgs device_args(plugin, d, args);
  kiln_timed_launch_args t{};
  t.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  t.launch = launch_args(ops, d, program.get(), device_args.abi());
  t.warmups = 1;
  t.repeats = repeats;
  check(plugin.api().launch_timed(&t));
  return static_cast<double>(t.median_ns) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned repeats = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 5;
  try {
    AbiPlugin c(plugin_path("c"));
    AbiPlugin cblas(plugin_path("cblas"));
    const kiln_device_info ci = c.info(0), bi = cblas.info(0);
    std::printf("c:0      %s, %u cores, compiler %s\n", ci.name, ci.compute_units, ci.driver_version);
    std::printf("cblas:0  %s, %u threads, %s\n", bi.name, bi.compute_units, bi.driver_version);

    const std::int64_t n = 1024;
    const std::vector<HostArg> mm = {random_f32(n * n, 1), random_f32(n * n, 2), HostArg::buffer(KILN_DTYPE_F32, n * n)};
    const double flops = 2.0 * n * n * n;
    const double c_mm = time_kernel(c, matmul_f32(n), mm, repeats);
    const double c_mm_cols = time_kernel(c, matmul_f32(n, 1), mm, repeats);
    const double blas_mm = time_kernel(cblas, matmul_f32(n), mm, repeats);

    const std::int64_t elements = std::int64_t{1} << 26;
    const std::vector<HostArg> ex = {random_f32(elements, 3), HostArg::buffer(KILN_DTYPE_F32, elements)};
    const double c_exp = time_kernel(c, exp_chain_f32(elements), ex, repeats);

    std::printf("%-34s %10s %12s\n", "kernel", "median ms", "rate");
    std::printf("%-34s %10.2f %8.1f GFLOP/s\n", "matmul 1024^3 f32, naive, c:0", c_mm * 1e3, flops / c_mm * 1e-9);
    std::printf("%-34s %10.2f %8.1f GFLOP/s\n", "  same, columns on group axis 0", c_mm_cols * 1e3, flops / c_mm_cols * 1e-9);
    std::printf("%-34s %10.2f %8.1f GFLOP/s\n", "matmul 1024^3 f32, cblas:0", blas_mm * 1e3, flops / blas_mm * 1e-9);
    std::printf("%-34s %10.2f %8.1f GB/s (triad: 27 GB/s)\n", "exp-chain 2^26 f32, c:0", c_exp * 1e3,
                8.0 * static_cast<double>(elements) / c_exp * 1e-9);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_cpu_measure: %s\n", e.what());
    return 1;
  }
  return 0;
}
