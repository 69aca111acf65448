// matmul: C[m,n] = A[m,k] * B[k,n]; matmul-bt: C = A * B^T with B stored
// [n,k]. All row-major. One thread per C element: group axis 0 = column j
// (length n), group axis 1 = row i (length m), because axis 0 is the
// fastest-varying coordinate on every backend (CUDA x, OpenCL dim 0, the C
// plugin's innermost loop) and neighbouring threads should write neighbouring
// elements of C. A LOOP over k accumulates a*b into a 1-element REGISTER
// (f32 for f16/bf16).
#include "each_row.hpp"
#include "kernel_writer.hpp"

#include "kiln/ir/dtype.hpp"

#include <vector>

namespace kiln::kernels::detail {

using ir::DType;
using ir::Value;

namespace {

StandardKernel matmul(const KernelSize& size, DType dtype, bool b_transposed) {
  const std::int64_t m = size.m, n = size.n, kk = size.k;
  KernelWriter w(dtype, accumulator_dtype(dtype));
  auto& b = w.b();
  const Value a_mem = w.input(static_cast<std::uint64_t>(m * kk));
  const Value b_mem = w.input(static_cast<std::uint64_t>(kk * n));
  const Value c_mem = w.output(static_cast<std::uint64_t>(m * n));
  const Value m_len = w.i64(m);
  const Value n_len = w.i64(n);
  const Value k_len = w.i64(kk);
  const Value j = b.group_index(0, n_len);
  const Value i = b.group_index(1, m_len);
  const Value zero = w.number(0);
  const Value acc = w.accumulator(zero);
  const Value a_row = b.mul(i, k_len);
  const Value b_row = b_transposed ? b.mul(j, k_len) : Value{};  // B^T: row j of B holds column j
  b.for_loop(k_len, [&](Value p) {
    const Value a = w.read(a_mem, b.add(a_row, p));
    const Value b_index = b_transposed ? b.add(b_row, p) : b.add(b.mul(p, n_len), j);
    const Value bv = w.read(b_mem, b_index);
    const Value product = b.mul(a, bv);
    const Value current = w.get(acc);
    w.put(acc, b.add(current, product));
  });
  const Value c_index = b.add(b.mul(i, n_len), j);
  w.write(c_mem, c_index, w.get(acc));

  StandardKernel k;
  k.kernel = b.finish();
  const double low = input_low(dtype), high = input_high(dtype);
  k.args = {input_arg("a", dtype, static_cast<std::uint64_t>(m * kk), low, high),
            input_arg("b", dtype, static_cast<std::uint64_t>(kk * n), low, high),
            output_arg("c", dtype, static_cast<std::uint64_t>(m * n))};
  k.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(kk);
  k.bytes = static_cast<double>(m * kk + kk * n + m * n) * ir::dtype_bytes(dtype);
  k.reference = [m, n, kk, b_transposed](std::span<const HostBuffer> in, std::span<HostBuffer> out) {
    // Decoded once, B as its transpose: `kiln run matmul --size 1024` checks
    // 2^30 products, which element-wise decoding would make take seconds.
    std::vector<double> a(static_cast<std::size_t>(m * kk)), bt(static_cast<std::size_t>(n * kk));
    for (std::size_t e = 0; e < a.size(); ++e) a[e] = in[0].get(e);
    for (std::int64_t c = 0; c < n; ++c)
      for (std::int64_t p = 0; p < kk; ++p)
        bt[static_cast<std::size_t>(c * kk + p)] = in[1].get(static_cast<std::size_t>(b_transposed ? c * kk + p : p * n + c));
    each_row(m, static_cast<double>(n * kk), [&](std::int64_t r) {
      for (std::int64_t c = 0; c < n; ++c) {
        const double* a_row = a.data() + r * kk;
        const double* b_col = bt.data() + c * kk;
        double sum = 0;
        for (std::int64_t p = 0; p < kk; ++p) sum += a_row[p] * b_col[p];
        out[0].set(static_cast<std::size_t>(r * n + c), sum);
      }
    });
  };
  return k;
}

}  // namespace

StandardKernel make_matmul(const KernelSize& size, DType dtype) { return matmul(size, dtype, false); }
StandardKernel make_matmul_bt(const KernelSize& size, DType dtype) { return matmul(size, dtype, true); }

}  // namespace kiln::kernels::detail
