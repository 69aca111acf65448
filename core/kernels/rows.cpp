// Row reductions over an [m, n] row-major input, one thread per row on
// group axis 0, each a LOOP over the n columns with 1-element REGISTER
// accumulators: sum-rows, max-rows, softmax-rows (max, sum of exp, write)
// layernorm-rows ((x - mean) / sqrt(var + 1e-5), no scale or shift) and
// rmsnorm-rows (x / sqrt(mean(x^2) + 1e-6) * w).
#include "each_row.hpp"
#include "kernel_writer.hpp"

#include "kiln/ir/dtype.hpp"

#include <cmath>
#include <limits>

namespace kiln::kernels::detail {

using ir::DType;
using ir::Value;

namespace {

constexpr double kLayerNormEpsilon = 1e-5;
constexpr double kRmsNormEpsilon = 1e-6;

// The pieces every row kernel shares: x [m, n] in slot 0, the row index r,
// and the element index r * n + j of a column j.
struct RowKernel {
  // weight_elements > 0: an input of that many elements after x (slot 1;
  // inputs come before outputs).
  RowKernel(const KernelSize& size, DType dtype, std::uint64_t out_elements, std::uint64_t weight_elements = 0)
      : w(dtype, accumulator_dtype(dtype)), m(size.m), n(size.n) {
    x = w.input(static_cast<std::uint64_t>(m * n));
    if (weight_elements > 0) weight = w.input(weight_elements);
    y = w.output(out_elements);
    const Value rows = w.i64(m);
    cols = w.i64(n);
    row = w.b().group_index(0, rows);
    row_start = w.b().mul(row, cols);
  }
  Value element(Value column) { return w.b().add(row_start, column); }
  // acc = combine(acc, x[r, j]) for every column j.
  template <class F>
  void accumulate(Value acc, F&& combine) {
    w.b().for_loop(cols, [&](Value j) {
      const Value value = w.read(x, element(j));
      const Value current = w.get(acc);
      w.put(acc, combine(current, value));
    });
  }

  KernelWriter w;
  std::int64_t m, n;
  Value x, weight, y, cols, row, row_start;
};

double lowest(DType dtype) {
  if (ir::is_float(dtype)) return -std::numeric_limits<double>::infinity();
  return dtype == DType::I32 ? std::numeric_limits<std::int32_t>::min()
                             : static_cast<double>(std::numeric_limits<std::int64_t>::min());
}

StandardKernel finish(RowKernel& rk, DType dtype, std::vector<ArgSpec> args, double flops, double bytes) {
  StandardKernel k;
  k.kernel = rk.w.b().finish();
  k.args = std::move(args);
  k.flops = flops;
  k.bytes = bytes * ir::dtype_bytes(dtype);
  return k;
}

// Reduces each row of `in` with `combine` from `init`, in double.
template <class Combine>
void reference_rows(const HostBuffer& in, HostBuffer& out, std::int64_t m, std::int64_t n, double init,
                    Combine&& combine) {
  each_row(m, static_cast<double>(n), [&](std::int64_t r) {
    double acc = init;
    for (std::int64_t j = 0; j < n; ++j) acc = combine(acc, in.get(static_cast<std::size_t>(r * n + j)));
    out.set(static_cast<std::size_t>(r), acc);
  });
}

StandardKernel reduce_rows(const KernelSize& size, DType dtype, bool is_max) {
  RowKernel rk(size, dtype, static_cast<std::uint64_t>(size.m));
  auto& b = rk.w.b();
  const Value start = is_max ? b.constant(rk.w.compute(), lowest(dtype)) : rk.w.number(0);
  const Value acc = rk.w.accumulator(start);
  rk.accumulate(acc, [&](Value a, Value v) { return is_max ? b.max(a, v) : b.add(a, v); });
  rk.w.write(rk.y, rk.row, rk.w.get(acc));

  const auto mn = static_cast<double>(size.m * size.n);
  StandardKernel k = finish(rk, dtype,
                            {input_arg("x", dtype, static_cast<std::uint64_t>(size.m * size.n), input_low(dtype),
                                       input_high(dtype)),
                             output_arg("y", dtype, static_cast<std::uint64_t>(size.m))},
                            mn, mn + static_cast<double>(size.m));
  const std::int64_t m = size.m, n = size.n;
  const double init = is_max ? lowest(dtype) : 0.0;
  k.reference = [m, n, init, is_max](std::span<const HostBuffer> in, std::span<HostBuffer> out) {
    reference_rows(in[0], out[0], m, n, init, [is_max](double a, double v) { return is_max ? std::max(a, v) : a + v; });
  };
  return k;
}

}  // namespace

StandardKernel make_sum_rows(const KernelSize& size, DType dtype) { return reduce_rows(size, dtype, false); }
StandardKernel make_max_rows(const KernelSize& size, DType dtype) { return reduce_rows(size, dtype, true); }

StandardKernel make_softmax_rows(const KernelSize& size, DType dtype) {
  const auto mn = static_cast<std::uint64_t>(size.m * size.n);
  RowKernel rk(size, dtype, mn);
  auto& b = rk.w.b();
  const Value minus_inf = b.constant(rk.w.compute(), -std::numeric_limits<double>::infinity());
  const Value max_acc = rk.w.accumulator(minus_inf);
  rk.accumulate(max_acc, [&](Value a, Value v) { return b.max(a, v); });
  const Value row_max = rk.w.get(max_acc);
  const Value zero = rk.w.number(0);
  const Value sum_acc = rk.w.accumulator(zero);
  rk.accumulate(sum_acc, [&](Value a, Value v) { return b.add(a, b.exp(b.sub(v, row_max))); });
  const Value row_sum = rk.w.get(sum_acc);
  b.for_loop(rk.cols, [&](Value j) {
    const Value at = rk.element(j);
    const Value v = rk.w.read(rk.x, at);
    rk.w.write(rk.y, at, b.div(b.exp(b.sub(v, row_max)), row_sum));
  });

  StandardKernel k = finish(rk, dtype, {input_arg("x", dtype, mn, -4.0, 4.0), output_arg("y", dtype, mn)},
                            7.0 * static_cast<double>(mn), 2.0 * static_cast<double>(mn));
  const std::int64_t m = size.m, n = size.n;
  k.reference = [m, n](std::span<const HostBuffer> in, std::span<HostBuffer> out) {
    each_row(m, 8.0 * static_cast<double>(n), [&](std::int64_t r) {
      const auto at = [&](std::int64_t j) { return static_cast<std::size_t>(r * n + j); };
      double row_max = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < n; ++j) row_max = std::max(row_max, in[0].get(at(j)));
      double sum = 0;
      for (std::int64_t j = 0; j < n; ++j) sum += std::exp(in[0].get(at(j)) - row_max);
      for (std::int64_t j = 0; j < n; ++j) out[0].set(at(j), std::exp(in[0].get(at(j)) - row_max) / sum);
    });
  };
  return k;
}

// Layernorm and rmsnorm read the row once for their statistics: one loop
// accumulating the sum and the sum of squares (two plain add accumulators,
// which tiled_reduce and lane_reduce split like any sum), then one writing
// loop. var = E[x^2] - mean^2 loses digits when |mean| >> std; the f32
// accumulator keeps that within the tolerance for inputs of moderate mean
// (models normalise activations of mean near 0), and the two-loop form
// reads x once from memory where the three-loop form read it twice.
StandardKernel make_layernorm_rows(const KernelSize& size, DType dtype) {
  const auto mn = static_cast<std::uint64_t>(size.m * size.n);
  RowKernel rk(size, dtype, mn);
  auto& b = rk.w.b();
  const Value inv_count = rk.w.number(1.0 / static_cast<double>(size.n));
  const Value zero = rk.w.number(0);
  const Value sum_acc = rk.w.accumulator(zero);
  const Value square_acc = rk.w.accumulator(zero);
  b.for_loop(rk.cols, [&](Value j) {
    const Value v = rk.w.read(rk.x, rk.element(j));
    rk.w.put(sum_acc, b.add(rk.w.get(sum_acc), v));
    rk.w.put(square_acc, b.add(rk.w.get(square_acc), b.mul(v, v)));
  });
  const Value mean = b.mul(rk.w.get(sum_acc), inv_count);
  const Value variance = b.max(b.sub(b.mul(rk.w.get(square_acc), inv_count), b.mul(mean, mean)), zero);
  const Value epsilon = rk.w.number(kLayerNormEpsilon);
  const Value inv_std = b.recip(b.sqrt(b.add(variance, epsilon)));
  b.for_loop(rk.cols, [&](Value j) {
    const Value at = rk.element(j);
    const Value v = rk.w.read(rk.x, at);
    rk.w.write(rk.y, at, b.mul(b.sub(v, mean), inv_std));
  });

  StandardKernel k = finish(rk, dtype, {input_arg("x", dtype, mn), output_arg("y", dtype, mn)},
                            6.0 * static_cast<double>(mn), 2.0 * static_cast<double>(mn));
  const std::int64_t m = size.m, n = size.n;
  // The reference is the textbook two-pass form, in double.
  k.reference = [m, n](std::span<const HostBuffer> in, std::span<HostBuffer> out) {
    each_row(m, 4.0 * static_cast<double>(n), [&](std::int64_t r) {
      const auto at = [&](std::int64_t j) { return static_cast<std::size_t>(r * n + j); };
      double sum = 0;
      for (std::int64_t j = 0; j < n; ++j) sum += in[0].get(at(j));
      const double mean = sum / static_cast<double>(n);
      double squares = 0;
      for (std::int64_t j = 0; j < n; ++j) squares += (in[0].get(at(j)) - mean) * (in[0].get(at(j)) - mean);
      const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(n) + kLayerNormEpsilon);
      for (std::int64_t j = 0; j < n; ++j) out[0].set(at(j), (in[0].get(at(j)) - mean) * inv_std);
    });
  };
  return k;
}

// y = x / sqrt(mean(x^2) + eps) * w, with a weight w[n] shared by the rows:
// one loop for the sum of squares, one writing loop.
StandardKernel make_rmsnorm_rows(const KernelSize& size, DType dtype) {
  const auto mn = static_cast<std::uint64_t>(size.m * size.n);
  const auto n_elements = static_cast<std::uint64_t>(size.n);
  RowKernel rk(size, dtype, mn, n_elements);
  auto& b = rk.w.b();
  const Value inv_count = rk.w.number(1.0 / static_cast<double>(size.n));
  const Value zero = rk.w.number(0);
  const Value square_acc = rk.w.accumulator(zero);
  rk.accumulate(square_acc, [&](Value a, Value v) { return b.add(a, b.mul(v, v)); });
  const Value epsilon = rk.w.number(kRmsNormEpsilon);
  const Value inv_rms = b.recip(b.sqrt(b.add(b.mul(rk.w.get(square_acc), inv_count), epsilon)));
  b.for_loop(rk.cols, [&](Value j) {
    const Value at = rk.element(j);
    const Value v = rk.w.read(rk.x, at);
    rk.w.write(rk.y, at, b.mul(b.mul(v, inv_rms), rk.w.read(rk.weight, j)));
  });

  // Weights in [0.5, 1.5]: never near zero, like trained gains.
  StandardKernel k = finish(rk, dtype,
                            {input_arg("x", dtype, mn), input_arg("w", dtype, n_elements, 0.5, 1.5),
                             output_arg("y", dtype, mn)},
                            4.0 * static_cast<double>(mn), 2.0 * static_cast<double>(mn) + static_cast<double>(size.n));
  const std::int64_t m = size.m, n = size.n;
  k.reference = [m, n](std::span<const HostBuffer> in, std::span<HostBuffer> out) {
    each_row(m, 3.0 * static_cast<double>(n), [&](std::int64_t r) {
      const auto at = [&](std::int64_t j) { return static_cast<std::size_t>(r * n + j); };
      double squares = 0;
      for (std::int64_t j = 0; j < n; ++j) squares += in[0].get(at(j)) * in[0].get(at(j));
      const double inv_rms = 1.0 / std::sqrt(squares / static_cast<double>(n) + kRmsNormEpsilon);
      for (std::int64_t j = 0; j < n; ++j)
        out[0].set(at(j), in[0].get(at(j)) * inv_rms * in[1].get(static_cast<std::size_t>(j)));
    });
  };
  return k;
}

}  // namespace kiln::kernels::detail
