// transpose: y[j, i] = x[i, j] for x of m rows and n columns (y is [n, m]).
// Group axis 0 = i (length m), group axis 1 = j (length n): i is the
// contiguous index of the output y, and axis 0 is the fastest-varying
// coordinate on every backend, so neighbouring threads write neighbouring
// elements (the reads are strided; a tuned kernel stages them in LOCAL).
#include "kernel_writer.hpp"

#include "kiln/ir/dtype.hpp"

namespace kiln::kernels::detail {

using ir::DType;
using ir::Value;

StandardKernel make_transpose(const KernelSize& size, DType dtype) {
  const std::int64_t m = size.m, n = size.n;
  const auto mn = static_cast<std::uint64_t>(m * n);
  KernelWriter w(dtype, dtype);
  auto& b = w.b();
  const Value x = w.input(mn);
  const Value y = w.output(mn);
  const Value m_len = w.i64(m);
  const Value n_len = w.i64(n);
  const Value i = b.group_index(0, m_len);
  const Value j = b.group_index(1, n_len);
  const Value from = b.add(b.mul(i, n_len), j);
  const Value to = b.add(b.mul(j, m_len), i);
  b.store(y, to, b.load(x, from));

  StandardKernel k;
  k.kernel = b.finish();
  k.args = {input_arg("x", dtype, mn, input_low(dtype), input_high(dtype)), output_arg("y", dtype, mn)};
  k.flops = 0;
  k.bytes = 2.0 * static_cast<double>(mn) * ir::dtype_bytes(dtype);
  k.reference = [m, n](std::span<const HostBuffer> in, std::span<HostBuffer> out) {
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t c = 0; c < n; ++c)
        out[0].set_bits(static_cast<std::size_t>(c * m + r), in[0].bits(static_cast<std::size_t>(r * n + c)));
  };
  return k;
}

}  // namespace kiln::kernels::detail
