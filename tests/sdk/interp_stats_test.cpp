// The interpreter's statistics (what the dummy device's timing model reads),
// and its speed on a matrix product (printed, not asserted).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "interp_util.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// out[t] = x[t * stride] for `threads` threads of one group.
std::vector<kiln_op> strided_copy(std::int64_t threads, std::int64_t stride) {
  WireBuilder w;
  const Id px = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, threads * stride);
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, threads);
  const Id t = w.local_index(0, w.const_i64(threads));
  w.store(KILN_DTYPE_F32, po, t, w.load(KILN_DTYPE_F32, px, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, t, w.const_i64(stride))));
  return w.ops;
}

// c = a + b over n elements in groups of `local` threads.
std::vector<kiln_op> add_in_groups(std::int64_t n, std::int64_t local, std::uint8_t lanes = 1) {
  WireBuilder w;
  const Id a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  const Id b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, n);
  const Id c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, n);
  const Id l = w.local_index(0, w.const_i64(local));
  const Id g = w.group_index(0, w.const_i64(n / local / lanes));
  const Id i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, w.mad(KILN_DTYPE_I64, g, w.const_i64(local), l), w.const_i64(lanes));
  w.store(KILN_DTYPE_F32, c, i,
          w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, a, i, lanes), w.load(KILN_DTYPE_F32, b, i, lanes), lanes),
          lanes);
  return w.ops;
}

// c[i][j] = sum_k a[i][k] * b[k][j], one thread per element, accumulator in
// REGISTER storage: the shape of a naive kernel before any optimization.
std::vector<kiln_op> naive_matmul(std::int64_t m, std::int64_t n, std::int64_t k) {
  WireBuilder w;
  const Id pa = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, m * k);
  const Id pb = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, k * n);
  const Id pc = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, m * n);
  const Id acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1);
  const Id zero = w.const_i64(0);
  const Id j = w.group_index(0, w.const_i64(n));
  const Id i = w.group_index(1, w.const_i64(m));
  w.store(KILN_DTYPE_F32, acc, zero, w.const_f32(0.0f));
  const Id kk = w.loop(w.const_i64(k));
  const Id av = w.load(KILN_DTYPE_F32, pa, w.mad(KILN_DTYPE_I64, i, w.const_i64(k), kk));
  const Id bv = w.load(KILN_DTYPE_F32, pb, w.mad(KILN_DTYPE_I64, kk, w.const_i64(n), j));
  w.store(KILN_DTYPE_F32, acc, zero, w.mad(KILN_DTYPE_F32, av, bv, w.load(KILN_DTYPE_F32, acc, zero)));
  w.end_loop(kk);
  w.store(KILN_DTYPE_F32, pc, w.mad(KILN_DTYPE_I64, i, w.const_i64(n), j), w.load(KILN_DTYPE_F32, acc, zero));
  return w.ops;
}

}  // namespace

TEST(InterpreterStats, NeighbouringThreadsReadingNeighbouringElementsShareSectors) {
  const std::int64_t threads = 256;
  std::vector<float> x(threads * 32), out(threads);
  const sdk::ExecStats coalesced = run_ok(strided_copy(threads, 1), {arg_of(x), arg_of(out)});
  const sdk::ExecStats strided = run_ok(strided_copy(threads, 32), {arg_of(x), arg_of(out)});
  // 8 warps of 32 threads; 32 * 4 bytes = 4 sectors of 32 bytes per warp.
  EXPECT_EQ(coalesced.global().loads, 256u);
  EXPECT_EQ(coalesced.global().warp_accesses, 8u + 8u);  // the load and the store
  EXPECT_EQ(coalesced.global().sectors, 32u + 32u);
  // Stride 32 floats = 128 bytes: every thread its own sector.
  EXPECT_EQ(strided.global().sectors, 256u + 32u);
  EXPECT_EQ(strided.global().load_bytes, coalesced.global().load_bytes);
}

TEST(InterpreterStats, WarpsCountThreadsOfOneGroupOnly) {
  const std::int64_t n = 1024;
  std::vector<float> a(n), b(n), c(n);
  const sdk::ExecStats single = run_ok(add_in_groups(n, 1), {arg_of(a), arg_of(b), arg_of(c)});
  const sdk::ExecStats wide = run_ok(add_in_groups(n, 32), {arg_of(a), arg_of(b), arg_of(c)});
  EXPECT_EQ(single.warps, 1024u);
  EXPECT_EQ(wide.warps, 32u);
  // The add: once per thread either way, but one issue per warp.
  EXPECT_EQ(single.thread(sdk::OpClass::FloatAlu), 1024u);
  EXPECT_EQ(wide.thread(sdk::OpClass::FloatAlu), 1024u);
  EXPECT_EQ(single.warp(sdk::OpClass::FloatAlu), 1024u);
  EXPECT_EQ(wide.warp(sdk::OpClass::FloatAlu), 32u);
  EXPECT_EQ(single.global().sectors, 3u * 1024u);
  EXPECT_EQ(wide.global().sectors, 3u * 32u * 4u);
}

TEST(InterpreterStats, VectorAccessesAreFewerInstructionsForTheSameBytes) {
  const std::int64_t n = 4096;
  std::vector<float> a(n), b(n), c(n);
  const sdk::ExecStats scalar = run_ok(add_in_groups(n, 64, 1), {arg_of(a), arg_of(b), arg_of(c)});
  const sdk::ExecStats vector = run_ok(add_in_groups(n, 64, 4), {arg_of(a), arg_of(b), arg_of(c)});
  EXPECT_EQ(scalar.global().load_bytes, vector.global().load_bytes);
  EXPECT_EQ(scalar.global().loads, 4 * vector.global().loads);
  EXPECT_EQ(scalar.global().warp_accesses, 4 * vector.global().warp_accesses);
  EXPECT_EQ(scalar.global().sectors, vector.global().sectors);
  EXPECT_EQ(scalar.thread(sdk::OpClass::FloatAlu), vector.thread(sdk::OpClass::FloatAlu));  // per lane
}

TEST(InterpreterStats, OpClassesAndStorageTraffic) {
  const std::int64_t m = 8, n = 8, k = 16;
  std::vector<float> a = random_floats(m * k, 1), b = random_floats(k * n, 2), c(m * n);
  const sdk::ExecStats s = run_ok(naive_matmul(m, n, k), {arg_of(a), arg_of(b), arg_of(c)});
  const std::uint64_t threads = m * n, iterations = m * n * k;
  EXPECT_EQ(s.thread(sdk::OpClass::FloatAlu), iterations);                // the float mad
  EXPECT_EQ(s.thread(sdk::OpClass::IntAlu), 2 * iterations + threads);    // two index mads per iteration, one after
  EXPECT_EQ(s.thread(sdk::OpClass::Control), threads * (1 + k));          // loop + k end_loops
  EXPECT_EQ(s.registers().loads, iterations + threads);
  EXPECT_EQ(s.registers().stores, iterations + threads);
  EXPECT_EQ(s.register_bytes_per_thread, 4u);
  EXPECT_EQ(s.global().loads, 2 * iterations);
  EXPECT_EQ(s.global().stores, threads);
  EXPECT_EQ(s.executed_ops, threads /* starts */ + threads * (2 + k * 8 + 1 + 2));
}

TEST(InterpreterStats, MatmulSpeed) {
  const std::int64_t size = 128;
  std::vector<float> a = random_floats(size * size, 1), b = random_floats(size * size, 2), c(size * size);
  auto ops = naive_matmul(size, size, size);
  sdk::InterpretedProgram program(ops);
  const auto begin = std::chrono::steady_clock::now();
  const sdk::ExecStats s = program.run(std::vector<kiln_arg>{arg_of(a), arg_of(b), arg_of(c)});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  // Spot-check one element against a plain loop.
  float want = 0.0f;
  for (std::int64_t t = 0; t < size; ++t) {
    const float p = a[5 * size + t] * b[t * size + 7];
    want = p + want;
  }
  EXPECT_EQ(c[5 * size + 7], want);
  std::printf("[ speed    ] %lldx%lldx%lld matmul: %.0f executed ops in %.3f s = %.1f M ops/s\n",
              static_cast<long long>(size), static_cast<long long>(size), static_cast<long long>(size),
              static_cast<double>(s.executed_ops), seconds, s.executed_ops / seconds / 1e6);
  RecordProperty("ops_per_second", std::to_string(static_cast<long long>(s.executed_ops / seconds)));
}
