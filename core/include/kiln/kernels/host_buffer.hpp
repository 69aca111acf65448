// kiln/kernels/host_buffer.hpp - typed host memory for kernel arguments and
// references, random inputs, and the comparison every consumer (kiln run,
// tests, benchmarks) uses to accept a result.
#pragma once

#include "kiln/ir/kernel.hpp"
#include "kiln/kernels/host_bytes.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kiln::kernels {

// Elements of one dtype in host memory, in the layout devices use (bool is
// one byte, f16/bf16 are their 16-bit patterns), host byte order.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(ir::DType dtype, std::size_t elements);

  ir::DType dtype() const { return dtype_; }
  std::size_t size() const { return elements_; }
  std::size_t bytes() const { return data_.size(); }
  std::span<std::byte> data() { return data_; }
  std::span<const std::byte> data() const { return data_; }

  // Element i as the bit pattern of a CONST of this dtype.
  std::uint64_t bits(std::size_t i) const;
  void set_bits(std::size_t i, std::uint64_t bits);
  // Element i as a double (exact for every dtype but 64-bit integers
  // beyond 2^53).
  double get(std::size_t i) const;
  // Stores `value` converted as CAST converts (floats round to nearest even,
  // integers truncate toward zero and wrap).
  void set(std::size_t i, double value);

 private:
  ir::DType dtype_ = ir::DType::Invalid;
  std::size_t elements_ = 0;
  HostBytes data_;  // zeroed; large ones on huge pages (host_bytes.hpp)
};

// Fills `buffer` with values uniform in [low, high] (integers: whole numbers
// in that range), from a counter-based generator keyed by `seed` and the
// dtype (element i is the i-th output of splitmix64, so large buffers fill
// on every hardware thread). The values depend only on the seed, the dtype
// and the index: the same on every platform, build and thread count.
void fill_random(HostBuffer& buffer, std::uint64_t seed, double low = -1.0, double high = 1.0);

// The relative error of `actual` against `expected`:
//   max_i |actual_i - expected_i| / max(max_i |expected_i|, 1e-30)
// i.e. relative to the largest expected magnitude, so that results near zero
// (a row sum that cancels) are judged at the scale of the output. A NaN or
// infinity where the expected value differs, and a dtype or size mismatch,
// give +inf; matching NaNs and infinities count as equal.
double compare(const HostBuffer& actual, const HostBuffer& expected);

// The compare() error accepted for results stored as `dtype` after
// reductions of `reduction_length` terms (1 for elementwise kernels):
//   0 for integers and bool;
//   4 * u(dtype) + 4 * u(accumulator) * (1 + sqrt(reduction_length))
// for floats, where u is the unit roundoff (bf16 2^-8, f16 2^-11, f32 2^-24,
// f64 2^-53) and the accumulator is f32 for f16/bf16, the dtype otherwise.
double tolerance(ir::DType dtype, std::int64_t reduction_length);

// The dtype the standard kernels accumulate and compute reductions in: f32
// for f16 and bf16, the dtype itself otherwise.
ir::DType accumulator_dtype(ir::DType dtype);

}  // namespace kiln::kernels
