#include "kiln/kernels/host_buffer.hpp"

#include "each_row.hpp"
#include "kiln/ir/dtype.hpp"
#include "kiln/sdk/half.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kiln::kernels {

using ir::DType;

namespace {

// elements x dtype size, refusing a product that wraps (f32[2^62] once made
// a 0-byte buffer that set_bits then overflowed). Callers check sizes first
// (kernels::check_buffers_fit); this is the last line.
std::size_t checked_bytes(DType dtype, std::size_t elements) {
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(elements, std::size_t{ir::dtype_bytes(dtype)}, &bytes))
    throw std::length_error("HostBuffer: " + std::to_string(elements) + " " + std::string(ir::dtype_name(dtype)) +
                            " elements overflow the byte count");
  return bytes;
}

}  // namespace

HostBuffer::HostBuffer(DType dtype, std::size_t elements)
    : dtype_(dtype), elements_(elements), data_(checked_bytes(dtype, elements)) {}

std::uint64_t HostBuffer::bits(std::size_t i) const {
  const std::byte* p = data_.data() + i * ir::dtype_bytes(dtype_);
  switch (ir::dtype_bytes(dtype_)) {
    case 1: { std::uint8_t v; std::memcpy(&v, p, 1); return v; }
    case 2: { std::uint16_t v; std::memcpy(&v, p, 2); return v; }
    case 4: { std::uint32_t v; std::memcpy(&v, p, 4); return v; }
    default: { std::uint64_t v; std::memcpy(&v, p, 8); return v; }
  }
}

void HostBuffer::set_bits(std::size_t i, std::uint64_t bits) {
  std::byte* p = data_.data() + i * ir::dtype_bytes(dtype_);
  switch (ir::dtype_bytes(dtype_)) {
    case 1: { const auto v = static_cast<std::uint8_t>(bits); std::memcpy(p, &v, 1); break; }
    case 2: { const auto v = static_cast<std::uint16_t>(bits); std::memcpy(p, &v, 2); break; }
    case 4: { const auto v = static_cast<std::uint32_t>(bits); std::memcpy(p, &v, 4); break; }
    default: std::memcpy(p, &bits, 8); break;
  }
}

double HostBuffer::get(std::size_t i) const { return ir::decode_double(dtype_, bits(i)); }

void HostBuffer::set(std::size_t i, double value) { set_bits(i, ir::encode_float(dtype_, value)); }

namespace {

// splitmix64's output function: a bijective mix of 64 bits.
std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ull;

// Element `i` of the stream `key`: the i-th output of a splitmix64 generator
// started at `key`. Counter-based: any element is made alone, so threads
// fill disjoint ranges with exactly the values one thread would.
std::uint64_t random_bits(std::uint64_t key, std::uint64_t i) { return mix64(key + (i + 1) * kGolden); }

// Elements [begin, end) of the buffer.
void fill_range(HostBuffer& buffer, std::uint64_t key, double lo, double hi, bool integral, std::size_t begin,
                std::size_t end) {
  // Floats written straight (the tuner fills 2^28-element inputs: the
  // per-element dtype switch of set() costs seconds); the same values, the
  // 16-bit ones rounded from the f32 value as encode_float does (softmax
  // 4096 x 16384 f16: 0.57 s of a tuning's set-up through set()).
  const auto unit_float = [&](std::size_t i) {
    return static_cast<float>(lo + static_cast<double>(random_bits(key, i) >> 11) * 0x1.0p-53 * (hi - lo));
  };
  const auto write_16 = [&](auto to_bits) {
    auto* out = reinterpret_cast<std::uint16_t*>(buffer.data().data());
    for (std::size_t i = begin; i < end; ++i) out[i] = to_bits(unit_float(i));
  };
  switch (buffer.dtype()) {
    case DType::F32: {
      float* out = reinterpret_cast<float*>(buffer.data().data());
      for (std::size_t i = begin; i < end; ++i) out[i] = unit_float(i);
      return;
    }
    case DType::F16: return write_16([](float v) { return sdk::f32_to_f16_bits(v); });
    case DType::BF16: return write_16([](float v) { return sdk::f32_to_bf16_bits(v); });
    default: break;
  }
  for (std::size_t i = begin; i < end; ++i) {
    const double unit = static_cast<double>(random_bits(key, i) >> 11) * 0x1.0p-53;  // [0, 1)
    double value = lo + unit * (hi - lo + (integral ? 1.0 : 0.0));
    if (integral) value = std::min(std::floor(value), hi);
    buffer.set(i, value);
  }
}

}  // namespace

void fill_random(HostBuffer& buffer, std::uint64_t seed, double low, double high) {
  // The stream's key depends on the seed and the dtype only; the mapping to
  // [low, high] is ours (std's distributions are not specified exactly).
  const std::uint64_t key = mix64(seed ^ (static_cast<std::uint64_t>(buffer.dtype()) << 56));
  const bool integral = !ir::is_float(buffer.dtype());
  const double lo = integral ? std::ceil(low) : low;
  const double hi = integral ? std::floor(high) : high;
  // Large buffers (the tuner's 2^28-element inputs: seconds on one core) in
  // chunks on every hardware thread; the values do not depend on how many.
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  const std::size_t n = buffer.size();
  const std::size_t threads =
      std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), (n + kChunk - 1) / kChunk);
  if (threads <= 1) {
    fill_range(buffer, key, lo, hi, integral, 0, n);
    return;
  }
  std::atomic<std::size_t> next{0};
  detail::run_shares(threads, [&](std::size_t) {
    for (std::size_t begin; (begin = next.fetch_add(kChunk)) < n;)
      fill_range(buffer, key, lo, hi, integral, begin, std::min(n, begin + kChunk));
  });
}

namespace {

// compare() over values of type T read straight from the bytes; `get` is the
// general path for every dtype (the tuner compares 2^28-element outputs, where
// decoding each element through its bits costs seconds).
template <class Get>
double compare_values(std::size_t n, Get&& actual, Get&& expected) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double scale = 1e-30;
  for (std::size_t i = 0; i < n; ++i) {
    const double e = expected(i);
    if (std::isfinite(e)) scale = std::max(scale, std::fabs(e));
  }
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = actual(i);
    const double e = expected(i);
    if (!std::isfinite(a) || !std::isfinite(e)) {
      const bool same = (std::isnan(a) && std::isnan(e)) || a == e;
      if (!same) return kInf;
      continue;
    }
    worst = std::max(worst, std::fabs(a - e) / scale);
  }
  return worst;
}

template <class T>
auto typed_reader(const HostBuffer& buffer) {
  const std::byte* bytes = buffer.data().data();
  return [bytes](std::size_t i) {
    T value;
    std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));
    return static_cast<double>(value);
  };
}

}  // namespace

double compare(const HostBuffer& actual, const HostBuffer& expected) {
  if (actual.dtype() != expected.dtype() || actual.size() != expected.size())
    return std::numeric_limits<double>::infinity();
  const std::size_t n = expected.size();
  if (expected.dtype() == DType::F32) return compare_values(n, typed_reader<float>(actual), typed_reader<float>(expected));
  if (expected.dtype() == DType::F64)
    return compare_values(n, typed_reader<double>(actual), typed_reader<double>(expected));
  auto get = [](const HostBuffer& b) { return [&b](std::size_t i) { return b.get(i); }; };
  return compare_values(n, get(actual), get(expected));
}

DType accumulator_dtype(DType dtype) { return dtype == DType::F16 || dtype == DType::BF16 ? DType::F32 : dtype; }

double tolerance(DType dtype, std::int64_t reduction_length) {
  auto unit_roundoff = [](DType d) {
    switch (d) {
      case DType::BF16: return 0x1.0p-8;
      case DType::F16: return 0x1.0p-11;
      case DType::F32: return 0x1.0p-24;
      default: return 0x1.0p-53;
    }
  };
  if (!ir::is_float(dtype)) return 0;
  const double terms = static_cast<double>(std::max<std::int64_t>(reduction_length, 1));
  return 4 * unit_roundoff(dtype) + 4 * unit_roundoff(accumulator_dtype(dtype)) * (1 + std::sqrt(terms));
}

}  // namespace kiln::kernels
