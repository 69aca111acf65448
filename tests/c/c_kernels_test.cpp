// Whole kernels on the C plugin: control flow, storage, grids, constants,
// the rounding and wrapping rules, and a naive matmul, on random inputs
// against host computations.
#include <gtest/gtest.h>

#include "kiln/sdk/c_emitter.hpp"
#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace kiln::test {
namespace {

AbiPlugin& c_plugin() {
  static AbiPlugin plugin(plugin_path("c"));
  return plugin;
}

kiln_device* device() { return c_plugin().open(0); }

std::vector<float> random_floats(std::size_t n, std::uint64_t seed, float lo = -1, float hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// out[r] = sum_k a[r*K + k] with a REGISTER accumulator, K a VARIABLE: a
// LOOP with a dynamic trip count.
template <class T>
void row_sums(std::uint8_t dt) {
  const std::int64_t rows = 37, cols = 53;
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, dt, 0, rows * cols);
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, dt, 1, rows);
  auto k_count = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 2);
  auto acc = w.storage(KILN_SCOPE_REGISTER, dt, 1);
  auto r = w.group_index(0, w.const_i64(rows));
  auto zero = w.const_i64(0);
  w.store(dt, acc, zero, w.const_bits(dt, 0));
  auto base = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, r, k_count);
  auto k = w.loop(k_count);
  auto x = w.load(dt, a, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, base, k));
  w.store(dt, acc, zero, w.binary(KILN_BINARY_ADD, dt, w.load(dt, acc, zero), x));
  w.end_loop(k);
  w.store(dt, out, r, w.load(dt, acc, zero));

  std::mt19937_64 rng(5);
  std::vector<T> values(rows * cols);
  for (T& v : values) v = static_cast<T>(static_cast<std::int64_t>(rng() % 2001) - 1000) / T(7);
  std::vector<HostArg> args = {HostArg::of(dt, values), HostArg::buffer(dt, rows), HostArg::value(KILN_DTYPE_I64, cols)};
  run_kernel(c_plugin(), device(), w.ops, args);
  for (std::int64_t row = 0; row < rows; ++row) {
    T want = 0;
    for (std::int64_t col = 0; col < cols; ++col) want += values[row * cols + col];
    EXPECT_NEAR(static_cast<double>(args[1].as<T>(row)), static_cast<double>(want), 1e-4 * (1 + std::fabs(double(want)))) << row;
  }
}

TEST(CKernels, LoopWithRegisterAccumulatorF32) { row_sums<float>(KILN_DTYPE_F32); }
TEST(CKernels, LoopWithRegisterAccumulatorF64) { row_sums<double>(KILN_DTYPE_F64); }
TEST(CKernels, LoopWithRegisterAccumulatorI64) { row_sums<std::int64_t>(KILN_DTYPE_I64); }

// out[i] = a[i] only where a[i] > 0 (an IF); elsewhere out keeps its contents.
TEST(CKernels, IfGuardsStores) {
  const std::int64_t n = 1000;
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, n);
  auto i = w.group_index(0, w.const_i64(n));
  auto x = w.load(KILN_DTYPE_F32, a, i);
  auto iff = w.if_(w.binary(KILN_BINARY_CMPGT, KILN_DTYPE_BOOL, x, w.const_f32(0)));
  w.store(KILN_DTYPE_F32, out, i, x);
  w.end_if(iff);
  const auto values = random_floats(n, 11);
  std::vector<HostArg> args = {HostArg::of(KILN_DTYPE_F32, values), HostArg::of(KILN_DTYPE_F32, std::vector<float>(n, -7.0f))};
  run_kernel(c_plugin(), device(), w.ops, args);
  for (std::int64_t k = 0; k < n; ++k) EXPECT_EQ(args[1].as<float>(k), values[k] > 0 ? values[k] : -7.0f) << k;
}

// Three group axes: out[z][y][x] = x + 10 y + 100 z; axis 0 varies fastest.
TEST(CKernels, ThreeGroupAxes) {
  WireBuilder w;
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I32, 0, 5 * 3 * 2);
  auto x = w.group_index(0, w.const_i64(5));
  auto y = w.group_index(1, w.const_i64(3));
  auto z = w.group_index(2, w.const_i64(2));
  auto mul = [&](WireBuilder::Id p, std::int64_t c) { return w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, p, w.const_i64(c)); };
  auto add = [&](WireBuilder::Id p, WireBuilder::Id q) { return w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, p, q); };
  auto value = add(add(x, mul(y, 10)), mul(z, 100));
  auto index = add(add(x, mul(y, 5)), mul(z, 15));
  w.store(KILN_DTYPE_I32, out, index, w.cast(KILN_DTYPE_I32, value));
  std::vector<HostArg> args = {HostArg::buffer(KILN_DTYPE_I32, 30)};
  run_kernel(c_plugin(), device(), w.ops, args);
  for (int zz = 0; zz < 2; ++zz)
    for (int yy = 0; yy < 3; ++yy)
      for (int xx = 0; xx < 5; ++xx) EXPECT_EQ(args[0].as<std::int32_t>(xx + 5 * yy + 15 * zz), xx + 10 * yy + 100 * zz);
}

// Group length from a VARIABLE: one program, launched at two sizes.
TEST(CKernels, DynamicGroupCountReusesTheProgram) {
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1);
  auto n = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I32, 2);
  auto i = w.group_index(0, w.cast(KILN_DTYPE_I64, n));
  w.store(KILN_DTYPE_F32, out, i, w.unary(KILN_UNARY_SQRT, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, a, i)));
  AbiPlugin& plugin = c_plugin();
  ProgramHandle program(plugin, plugin.compile(device(), w.ops));
  for (std::int32_t size : {17, 1000}) {
    const auto values = random_floats(1000, static_cast<std::uint64_t>(size), 0, 9);
    std::vector<HostArg> args = {HostArg::of(KILN_DTYPE_F32, values), HostArg::of(KILN_DTYPE_F32, std::vector<float>(1000, -1.0f)),
                                 HostArg::value(KILN_DTYPE_I32, static_cast<std::uint32_t>(size))};
    DeviceArgs device_args(plugin, device(), args);
    kiln_launch_args l = launch_args(w.ops, device(), program.get(), device_args.abi());
    ASSERT_EQ(l.groups[0], static_cast<std::uint64_t>(size));
    check(plugin.api().launch(&l));
    device_args.read_back(args);
    for (int k = 0; k < 1000; ++k) EXPECT_EQ(args[1].as<float>(k), k < size ? std::sqrt(values[k]) : -1.0f) << size << " " << k;
  }
}

// LOCAL storage and a BARRIER with one thread per group: a per-group
// scratch that reverses 8 elements.
TEST(CKernels, LocalStorageAndBarrier) {
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 64);
  auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, 64);
  auto scratch = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, 8);
  auto g = w.group_index(0, w.const_i64(8));
  auto eight = w.const_i64(8);
  auto base = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, eight);
  auto k = w.loop(eight);
  w.store(KILN_DTYPE_F32, scratch, k, w.load(KILN_DTYPE_F32, a, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, base, k)));
  w.end_loop(k);
  w.barrier();
  auto j = w.loop(eight);
  auto from = w.binary(KILN_BINARY_SUB, KILN_DTYPE_I64, w.const_i64(7), j);
  w.store(KILN_DTYPE_F32, out, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, base, j), w.load(KILN_DTYPE_F32, scratch, from));
  w.end_loop(j);
  const auto values = random_floats(64, 3);
  std::vector<HostArg> args = {HostArg::of(KILN_DTYPE_F32, values), HostArg::buffer(KILN_DTYPE_F32, 64)};
  run_kernel(c_plugin(), device(), w.ops, args);
  for (int gg = 0; gg < 8; ++gg)
    for (int jj = 0; jj < 8; ++jj) EXPECT_EQ(args[1].as<float>(gg * 8 + jj), values[gg * 8 + 7 - jj]);
}

// Broadcast, insert and extract on vectors of several widths.
TEST(CKernels, VectorBroadcastInsertExtract) {
  for (std::uint8_t lanes : {2, 4, 8, 16}) {
    WireBuilder w;
    auto out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I16, 0, lanes + 1);
    auto zero = w.const_i64(0);
    auto v = w.broadcast(KILN_DTYPE_I16, w.const_bits(KILN_DTYPE_I16, 0xfff9), lanes);  // -7
    auto v2 = w.insert(KILN_DTYPE_I16, v, w.const_bits(KILN_DTYPE_I16, 42), lanes - 1u, lanes);
    w.store(KILN_DTYPE_I16, out, zero, v2, lanes);
    w.store(KILN_DTYPE_I16, out, w.const_i64(lanes), w.extract(KILN_DTYPE_I16, v2, lanes - 1u));
    std::vector<HostArg> args = {HostArg::buffer(KILN_DTYPE_I16, lanes + 1u)};
    run_kernel(c_plugin(), device(), w.ops, args);
    for (unsigned k = 0; k + 1 < lanes; ++k) EXPECT_EQ(args[0].as<std::int16_t>(k), -7) << int(lanes);
    EXPECT_EQ(args[0].as<std::int16_t>(lanes - 1u), 42);
    EXPECT_EQ(args[0].as<std::int16_t>(lanes), 42);
  }
}

// CONSTs of every dtype, including the values a printer gets wrong: NaN
// (payload kept), infinities, -0, subnormals, integer minimums.
TEST(CKernels, ConstantsKeepTheirBits) {
  struct Value {
    std::uint8_t dtype;
    std::uint64_t bits;
  };
  const std::vector<Value> values = {
      {KILN_DTYPE_F32, 0x7fc00001},  {KILN_DTYPE_F32, 0xff800000}, {KILN_DTYPE_F32, 0x80000000},
      {KILN_DTYPE_F32, 0x00000001},  {KILN_DTYPE_F32, 0x3f9d70a4}, {KILN_DTYPE_F64, 0x7ff8000000000123},
      {KILN_DTYPE_F64, 0x8000000000000000}, {KILN_DTYPE_F64, 0x0000000000000001}, {KILN_DTYPE_F64, 0x400921fb54442d18},
      {KILN_DTYPE_F16, 0x7c00},      {KILN_DTYPE_F16, 0x0001},     {KILN_DTYPE_F16, 0x8000},
      {KILN_DTYPE_F16, 0x3555},      {KILN_DTYPE_BF16, 0xff80},    {KILN_DTYPE_BF16, 0x3faa},
      {KILN_DTYPE_I64, 0x8000000000000000}, {KILN_DTYPE_I64, 0xffffffffffffffff}, {KILN_DTYPE_U64, 0xffffffffffffffff},
      {KILN_DTYPE_I32, 0x80000000},  {KILN_DTYPE_U32, 0xffffffff}, {KILN_DTYPE_I16, 0x8000},
      {KILN_DTYPE_U16, 0xffff},      {KILN_DTYPE_I8, 0x80},        {KILN_DTYPE_U8, 0xff},
      {KILN_DTYPE_BOOL, 1},          {KILN_DTYPE_BOOL, 0},
  };
  WireBuilder w;
  std::vector<HostArg> args;
  auto zero = w.const_i64(0);
  for (std::size_t k = 0; k < values.size(); ++k) {
    auto out = w.param(KILN_PARAM_GLOBAL_MUT, values[k].dtype, static_cast<std::uint32_t>(k), 1);
    w.store(values[k].dtype, out, zero, w.const_bits(values[k].dtype, values[k].bits));
    args.push_back(HostArg::buffer(values[k].dtype, 1));
  }
  const std::string source = run_kernel(c_plugin(), device(), w.ops, args);
  for (std::size_t k = 0; k < values.size(); ++k)
    EXPECT_EQ(args[k].get(0), values[k].bits) << sdk::dtype_name(values[k].dtype) << " #" << k << "\n" << source;
}

// f16/bf16 arithmetic rounds to nearest even after each op.
TEST(CKernels, HalfPrecisionRoundsToNearestEven) {
  struct Sum {
    std::uint8_t dtype;
    std::uint16_t a, b, want;
  };
  const std::vector<Sum> sums = {
      {KILN_DTYPE_F16, 0x3c00, 0x1000, 0x3c00},   // 1 + 2^-11: tie, to even (1)
      {KILN_DTYPE_F16, 0x3c01, 0x1000, 0x3c02},   // (1 + 2^-10) + 2^-11: tie, to even (up)
      {KILN_DTYPE_F16, 0x3c00, 0x1001, 0x3c01},   // just above the tie: up
      {KILN_DTYPE_F16, 0x7bff, 0x5000, 0x7c00},   // 65504 + 32: overflows to inf
      {KILN_DTYPE_BF16, 0x3f80, 0x3b80, 0x3f80},  // 1 + 2^-8: tie, to even (1)
      {KILN_DTYPE_BF16, 0x3f81, 0x3b80, 0x3f82},  // (1 + 2^-7) + 2^-8: tie, up
  };
  for (const Sum& s : sums) {
    WireBuilder w;
    auto a = w.param(KILN_PARAM_GLOBAL, s.dtype, 0, 1);
    auto b = w.param(KILN_PARAM_GLOBAL, s.dtype, 1, 1);
    auto out = w.param(KILN_PARAM_GLOBAL_MUT, s.dtype, 2, 1);
    auto zero = w.const_i64(0);
    w.store(s.dtype, out, zero, w.binary(KILN_BINARY_ADD, s.dtype, w.load(s.dtype, a, zero), w.load(s.dtype, b, zero)));
    std::vector<HostArg> args = {HostArg::buffer(s.dtype, 1), HostArg::buffer(s.dtype, 1), HostArg::buffer(s.dtype, 1)};
    args[0].set(0, s.a);
    args[1].set(0, s.b);
    run_kernel(c_plugin(), device(), w.ops, args);
    EXPECT_EQ(args[2].get(0), s.want) << std::hex << s.a << " + " << s.b;
  }
}

// f64 and wide integers reach f16/bf16 with one rounding, not two through f32.
TEST(CKernels, CastsToHalfRoundOnce) {
  struct Cast {
    std::uint8_t from, to;
    std::uint64_t bits, want;
  };
  const double just_above_tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  const std::vector<Cast> casts = {
      {KILN_DTYPE_F64, KILN_DTYPE_F16, std::bit_cast<std::uint64_t>(just_above_tie), 0x3c01},
      {KILN_DTYPE_F64, KILN_DTYPE_F16, std::bit_cast<std::uint64_t>(-just_above_tie), 0xbc01},
      {KILN_DTYPE_F64, KILN_DTYPE_BF16, std::bit_cast<std::uint64_t>(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)), 0x3f81},
      {KILN_DTYPE_I64, KILN_DTYPE_BF16, (std::uint64_t{1} << 24) + (1u << 16) + 1, 0x4b81},      // 2^24 + 2^17
      {KILN_DTYPE_I64, KILN_DTYPE_BF16, static_cast<std::uint64_t>(-((std::int64_t{1} << 24) + (1 << 16) + 1)), 0xcb81},
      {KILN_DTYPE_U64, KILN_DTYPE_F16, 2049, 0x6800},  // 2049: tie between 2048 and 2050, to even (2048)
      {KILN_DTYPE_U64, KILN_DTYPE_F16, 65520, 0x7c00},  // rounds to inf
      {KILN_DTYPE_F64, KILN_DTYPE_F16, std::bit_cast<std::uint64_t>(1e300), 0x7c00},
  };
  for (const Cast& c : casts) {
    WireBuilder w;
    auto in = w.param(KILN_PARAM_VARIABLE, c.from, 0);
    auto out = w.param(KILN_PARAM_GLOBAL_MUT, c.to, 1, 1);
    w.store(c.to, out, w.const_i64(0), w.cast(c.to, in));
    std::vector<HostArg> args = {HostArg::value(c.from, c.bits), HostArg::buffer(c.to, 1)};
    EXPECT_EQ(interpreted(w.ops, args)[1].get(0), c.want) << "the interpreter disagrees";
    run_kernel(c_plugin(), device(), w.ops, args);
    EXPECT_EQ(args[1].get(0), c.want) << sdk::dtype_name(c.from) << " -> " << sdk::dtype_name(c.to) << " of " << std::hex << c.bits;
  }
}

// Integer arithmetic wraps, including the promotion trap u16 * u16, and
// division by zero or MIN / -1 cannot bring the host down.
TEST(CKernels, IntegerArithmeticWraps) {
  struct Case {
    std::uint8_t dtype, op;
    std::uint64_t a, b, want;
  };
  const std::vector<Case> cases = {
      {KILN_DTYPE_I32, KILN_BINARY_ADD, 0x7fffffff, 1, 0x80000000},
      {KILN_DTYPE_U16, KILN_BINARY_MUL, 0xffff, 0xffff, 0x0001},
      {KILN_DTYPE_I64, KILN_BINARY_MUL, 0x4000000000000000, 4, 0},
      {KILN_DTYPE_I8, KILN_BINARY_SUB, 0x80, 1, 0x7f},
      {KILN_DTYPE_I32, KILN_BINARY_DIV, 0x80000000, 0xffffffff, 0x80000000},
      {KILN_DTYPE_I64, KILN_BINARY_MOD, 0x8000000000000000, 0xffffffffffffffff, 0},
      {KILN_DTYPE_I32, KILN_BINARY_DIV, 7, 0, 0},   // a kernel bug; 0, not SIGFPE
      {KILN_DTYPE_U32, KILN_BINARY_MOD, 7, 0, 0},
      {KILN_DTYPE_I32, KILN_BINARY_SHL, 1, 33, 2},  // shift count mod 32
      {KILN_DTYPE_I8, KILN_BINARY_SHR, 0x80, 9, 0xc0},  // arithmetic, count mod 8
      {KILN_DTYPE_U8, KILN_BINARY_SHR, 0x80, 9, 0x40},
  };
  for (const Case& c : cases) {
    WireBuilder w;
    auto out = w.param(KILN_PARAM_GLOBAL_MUT, c.dtype, 0, 1);
    auto a = w.param(KILN_PARAM_VARIABLE, c.dtype, 1);
    auto b = w.param(KILN_PARAM_VARIABLE, c.dtype, 2);
    w.store(c.dtype, out, w.const_i64(0), w.binary(c.op, c.dtype, a, b));
    std::vector<HostArg> args = {HostArg::buffer(c.dtype, 1), HostArg::value(c.dtype, c.a), HostArg::value(c.dtype, c.b)};
    run_kernel(c_plugin(), device(), w.ops, args);
    EXPECT_EQ(args[0].get(0), c.want) << sdk::dtype_name(c.dtype) << " " << sdk::binary_name(c.op) << " " << c.a << ", " << c.b;
  }
}

// C[m][n] = sum_k A[m][k] B[k][n], one group per output element.
template <class T>
void naive_matmul(std::uint8_t dt, std::int64_t m, std::int64_t n, std::int64_t k) {
  WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, dt, 0, m * k);
  auto b = w.param(KILN_PARAM_GLOBAL, dt, 1, k * n);
  auto c = w.param(KILN_PARAM_GLOBAL_MUT, dt, 2, m * n);
  auto acc = w.storage(KILN_SCOPE_REGISTER, dt, 1);
  auto col = w.group_index(0, w.const_i64(n));
  auto row = w.group_index(1, w.const_i64(m));
  auto zero = w.const_i64(0);
  auto kk = w.const_i64(k), nn = w.const_i64(n);
  w.store(dt, acc, zero, w.const_bits(dt, 0));
  auto l = w.loop(kk);
  auto x = w.load(dt, a, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, row, kk), l));
  auto y = w.load(dt, b, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, l, nn), col));
  w.store(dt, acc, zero, w.mad(dt, x, y, w.load(dt, acc, zero)));
  w.end_loop(l);
  w.store(dt, c, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, row, nn), col),
          w.load(dt, acc, zero));
  std::mt19937_64 rng(static_cast<std::uint64_t>(m * 1000 + n * 10 + k));
  std::uniform_real_distribution<T> dist(-1, 1);
  std::vector<T> av(m * k), bv(k * n);
  for (T& v : av) v = dist(rng);
  for (T& v : bv) v = dist(rng);
  std::vector<HostArg> args = {HostArg::of(dt, av), HostArg::of(dt, bv), HostArg::buffer(dt, m * n)};
  run_kernel(c_plugin(), device(), w.ops, args);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (std::int64_t p = 0; p < k; ++p) want += double(av[i * k + p]) * double(bv[p * n + j]);
      ASSERT_NEAR(double(args[2].as<T>(i * n + j)), want, (sizeof(T) == 4 ? 1e-4 : 1e-12) * (1 + std::sqrt(double(k))))
          << i << "," << j;
    }
}

TEST(CKernels, NaiveMatmulF32) {
  naive_matmul<float>(KILN_DTYPE_F32, 7, 13, 5);
  naive_matmul<float>(KILN_DTYPE_F32, 64, 48, 96);
}
TEST(CKernels, NaiveMatmulF64) { naive_matmul<double>(KILN_DTYPE_F64, 33, 17, 65); }

}  // namespace
}  // namespace kiln::test

namespace kiln::test {
namespace {

// y[16g .. 16g+15] = exp(x[16g .. 16g+15]) * 2 + 1 as f32x16 over buffers of
// `n` floats: past kStreamingStoreBytes the store is non-temporal; the exp
// is the inline kiln_exp_f32 under `omp simd` (the shape the CPU elementwise
// recipe gives).
std::vector<kiln_op> vector_exp_chain(std::int64_t n) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, static_cast<std::uint64_t>(n));
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, static_cast<std::uint64_t>(n));
  auto g = w.group_index(0, w.const_i64(n / 16));
  auto i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(16));
  auto e = w.unary(KILN_UNARY_EXP, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, x, i, 16), 16);
  auto r = w.mad(KILN_DTYPE_F32, e, w.broadcast(KILN_DTYPE_F32, w.const_f32(2), 16),
                 w.broadcast(KILN_DTYPE_F32, w.const_f32(1), 16), 16);
  w.store(KILN_DTYPE_F32, y, i, r, 16);
  return w.ops;
}

// Two group axes (the OpenMP loop collapsed inside the parallel region that
// fences): out[r][16c .. 16c+15] = in[r][...] * 3 over a 64 MiB output.
TEST(CKernels, StreamingStoresOnTwoGroupAxes) {
  const std::int64_t rows = 1024, cols = 16384;  // 64 MiB of f32
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, static_cast<std::uint64_t>(rows * cols));
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, static_cast<std::uint64_t>(rows * cols));
  auto r = w.group_index(1, w.const_i64(rows));
  auto c = w.group_index(0, w.const_i64(cols / 16));
  auto i = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, r, w.const_i64(cols)),
                    w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, c, w.const_i64(16)));
  auto v = w.binary(KILN_BINARY_MUL, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, x, i, 16),
                    w.broadcast(KILN_DTYPE_F32, w.const_f32(3), 16), 16);
  w.store(KILN_DTYPE_F32, y, i, v, 16);
  const std::vector<float> in = random_floats(static_cast<std::size_t>(rows * cols), 11);
  std::vector<HostArg> args = {HostArg::of(in), HostArg::poisoned(KILN_DTYPE_F32, in.size())};
  const std::string source = run_kernel(c_plugin(), device(), w.ops, args);
  EXPECT_NE(source.find("collapse(2)"), std::string::npos) << source;
  EXPECT_NE(source.find("kiln_stream64(&"), std::string::npos) << source;
  const std::vector<float> out = args[1].values<float>();
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < out.size(); ++k)
    if (out[k] != in[k] * 3.0f && wrong++ < 5) ADD_FAILURE() << "out[" << k << "] = " << out[k] << ", want " << in[k] * 3;
  EXPECT_EQ(wrong, 0u);
}

TEST(CKernels, StreamingStoresAndVectorMathComputeTheSameValues) {
  for (const std::int64_t n : {std::int64_t{1} << 12, (std::int64_t{32} << 20) / 4 + 64}) {
    const std::vector<float> x = random_floats(static_cast<std::size_t>(n), 7, -4, 4);
    std::vector<HostArg> args = {HostArg::of(x), HostArg::poisoned(KILN_DTYPE_F32, static_cast<std::size_t>(n))};
    const std::string source = run_kernel(c_plugin(), device(), vector_exp_chain(n), args);
    const bool large = n * 4 >= static_cast<std::int64_t>(sdk::kStreamingStoreBytes);
    EXPECT_EQ(source.find("kiln_stream64(&") != std::string::npos, large) << source;
    EXPECT_NE(source.find("kiln_simd_exp_f32_16("), std::string::npos) << source;
    const std::vector<float> y = args[1].values<float>();
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < y.size(); ++k) {
      const double want = std::exp(static_cast<double>(x[k])) * 2 + 1;
      if (!(std::fabs(y[k] - want) <= 4e-6 * std::fabs(want)) && wrong++ < 5)
        ADD_FAILURE() << "n=" << n << " y[" << k << "] = " << y[k] << ", want " << want;
    }
    EXPECT_EQ(wrong, 0u) << "n=" << n;
  }
}

// y = exp(x) as f32 vectors of `lanes` over `n` floats (a multiple of them).
std::vector<kiln_op> vector_exp(std::int64_t n, std::uint8_t lanes = 16) {
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, static_cast<std::uint64_t>(n));
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, static_cast<std::uint64_t>(n));
  auto i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, w.group_index(0, w.const_i64(n / lanes)), w.const_i64(lanes));
  w.store(KILN_DTYPE_F32, y, i, w.unary(KILN_UNARY_EXP, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, x, i, lanes), lanes), lanes);
  return w.ops;
}

// PREFETCH on the C plugin (which claims it): __builtin_prefetch of the next
// group's row before each row load, past the buffer for the last group; the
// results are the kernel's (out = 2 x), nothing faults.
TEST(CKernels, PrefetchOfTheNextRowIsAHintThatNeverFaults) {
  const std::int64_t rows = 64, cols = 256;
  WireBuilder w;
  auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, static_cast<std::uint64_t>(rows * cols));
  auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, static_cast<std::uint64_t>(rows * cols));
  auto g = w.group_index(0, w.const_i64(rows));
  auto row = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(cols));
  auto j = w.loop(w.const_i64(cols / 16));
  auto i = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, row, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, j, w.const_i64(16)));
  w.prefetch(KILN_DTYPE_F32, x, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, i, w.const_i64(cols)));
  auto v = w.load(KILN_DTYPE_F32, x, i, 16);
  w.store(KILN_DTYPE_F32, y, i, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, v, v, 16), 16);
  w.end_loop(j);
  const std::vector<float> in = random_floats(static_cast<std::size_t>(rows * cols), 5);
  std::vector<HostArg> args = {HostArg::of(in), HostArg::poisoned(KILN_DTYPE_F32, in.size())};
  const std::string source = run_kernel(c_plugin(), device(), w.ops, args);
  EXPECT_NE(source.find("__builtin_prefetch((const void*)((uintptr_t)v0 + (uintptr_t)v"), std::string::npos) << source;
  const std::vector<float> out = args[1].values<float>();
  for (std::size_t k = 0; k < out.size(); ++k) ASSERT_EQ(out[k], in[k] + in[k]) << k;
}

// Every 509th f32 bit pattern, both signs, and the edges of exp's ranges
// (-87.33654 flushes, 88.72283 overflows, 89 and above clamp), padded to
// whole vectors of 16.
std::vector<float> exp_inputs() {
  std::vector<float> x;
  for (std::uint64_t bits = 0; bits <= 0xffffffffu; bits += 509) x.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  for (const float edge : {0.0f, -0.0f, 1.0f, -1.0f, 88.72283f, 88.7228394f, 88.9f, 89.0f, 89.1f, 1e30f, -87.33654f,
                           -87.3365f, -103.97208f, -104.0f, std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::denorm_min()})
    for (const float e : {edge, std::nextafter(edge, 1e9f), std::nextafter(edge, -1e9f)}) x.push_back(e);
  while (x.size() % 16 != 0) x.push_back(0.5f);
  return x;
}

// exp(x) on c:0 in vectors of `lanes` (1: scalar code) over exp_inputs(),
// checked against exp in double: within `bound` ulp, 0 (or right) where
// exp is below FLT_MIN and never a subnormal (bf16 rounding of exp results
// skips the subnormal check, kiln_round_normal_bf16x16), inf past FLT_MAX,
// NaN for NaN. Returns the results.
std::vector<float> expect_exp_within(std::uint8_t lanes, double bound, const std::string& function) {
  const std::vector<float> x = exp_inputs();
  std::vector<HostArg> args = {HostArg::of(x), HostArg::poisoned(KILN_DTYPE_F32, x.size())};
  const std::string source = run_kernel(c_plugin(), device(), vector_exp(static_cast<std::int64_t>(x.size()), lanes), args);
  EXPECT_NE(source.find(function), std::string::npos) << source;
  const std::vector<float> y = args[1].values<float>();
  double worst = 0;
  std::size_t wrong = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double want = std::exp(static_cast<double>(x[k]));
    const float rounded = static_cast<float>(want);
    bool ok;
    if (std::isnan(x[k])) {
      ok = std::isnan(y[k]);
    } else if (std::isinf(rounded)) {
      ok = std::isinf(y[k]) && y[k] > 0;
    } else if (rounded < std::numeric_limits<float>::min()) {
      ok = y[k] == 0 || std::fabs(y[k] - want) <= std::numeric_limits<float>::denorm_min();
    } else {
      const double ulps = std::fabs(y[k] - want) / (std::nextafter(rounded, INFINITY) - rounded);
      worst = std::max(worst, ulps);
      ok = ulps <= bound;
    }
    ok = ok && std::fpclassify(y[k]) != FP_SUBNORMAL;
    if (!ok && wrong++ < 5) ADD_FAILURE() << int(lanes) << " lanes: exp(" << x[k] << ") = " << y[k] << ", want " << want;
  }
  EXPECT_EQ(wrong, 0u) << int(lanes) << " lanes, of " << x.size() << " inputs; worst " << worst << " ulp";
  EXPECT_GT(worst, 0.5) << "the inputs reached no hard case: the check tested nothing";
  return y;
}

// The C dialect's scalar f32 exp with vector math (c_dialects.cpp,
// kInlineExpF32): within 1.01 ulp of exp over every f32 input (checked
// exhaustively when it was written). Where the compiler targets AVX-512 the
// lane loop is not used for vectors, so this runs it on one lane (GCC
// vectorises the scalar function itself over the group loop's elements).
TEST(CKernels, ScalarExpIsWithinAnUlpOfExpOverEveryRange) { expect_exp_within(1, 1.01, "kiln_exp_f32("); }

// Where the compiler targets AVX-512, vectors of 16, 8 and 4 lanes take exp
// on whole registers (c_dialects.cpp, avx512_exp_f32: a table of 2^(j/16) and
// a cubic): within 1.07 ulp (1.06 over every input, checked exhaustively
// when written), and the same value at every width (the 4-lane form computes
// on 8 lanes).
TEST(CKernels, WholeRegisterExpIsWithinItsBoundAndTheSameAtEveryWidth) {
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vl"))
    GTEST_SKIP() << "no AVX-512F/VL here: vectors take exp lane by lane (the scalar form)";
  const std::vector<float> sixteen = expect_exp_within(16, 1.07, "v = kiln_exp_f32_m512(v);");
  for (const std::uint8_t lanes : {4, 8}) {
    const std::vector<float> narrow = expect_exp_within(lanes, 1.07, "v = kiln_exp_f32_m" + std::to_string(32 * lanes) + "(v);");
    std::size_t differ = 0;
    for (std::size_t k = 0; k < narrow.size(); ++k)
      if (std::bit_cast<std::uint32_t>(narrow[k]) != std::bit_cast<std::uint32_t>(sixteen[k]) &&
          !(std::isnan(narrow[k]) && std::isnan(sixteen[k])) && differ++ < 5)
        ADD_FAILURE() << int(lanes) << " lanes: " << narrow[k] << ", 16 lanes: " << sixteen[k] << " (element " << k << ")";
    EXPECT_EQ(differ, 0u) << int(lanes) << " lanes against 16";
  }
}

}  // namespace
}  // namespace kiln::test
