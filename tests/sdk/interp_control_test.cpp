// Control flow and indices: loops (zero, negative, per-thread trip counts,
// nesting), IFs (including partial groups), REGISTER storage, GROUP and
// LOCAL indices on every axis, and dynamic grid lengths from VARIABLE params.
#include <gtest/gtest.h>

#include "interp_util.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// out[i] = sum over k < count of x[i * stride + k], with the count a
// VARIABLE param, accumulated in REGISTER storage.
std::vector<kiln_op> row_sum_kernel(std::int64_t rows, std::int64_t stride) {
  WireBuilder w;
  const Id x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
  const Id out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, rows);
  const Id count = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 2);
  const Id acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1);
  const Id zero = w.const_i64(0);
  const Id i = w.group_index(0, w.const_i64(rows));
  w.store(KILN_DTYPE_F32, acc, zero, w.const_f32(0.0f));
  const Id k = w.loop(count);
  const Id at = w.mad(KILN_DTYPE_I64, i, w.const_i64(stride), k);
  w.store(KILN_DTYPE_F32, acc, zero,
          w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, acc, zero), w.load(KILN_DTYPE_F32, x, at)));
  w.end_loop(k);
  w.store(KILN_DTYPE_F32, out, i, w.load(KILN_DTYPE_F32, acc, zero));
  return w.ops;
}

}  // namespace

TEST(InterpreterControl, LoopsRunCountTimesAndNotAtAllForZeroOrNegative) {
  const std::int64_t rows = 9, stride = 7;
  std::vector<float> x = random_floats(rows * stride, 1);
  auto ops = row_sum_kernel(rows, stride);
  for (std::int64_t count : {7, 3, 1, 0, -1, -1000}) {
    std::vector<float> out(rows, 123.0f);
    run_ok(ops, {arg_of(x), arg_of(out), i64_arg(count)});
    for (std::int64_t r = 0; r < rows; ++r) {
      float want = 0.0f;
      for (std::int64_t k = 0; k < count; ++k) want += x[r * stride + k];
      EXPECT_EQ(out[r], want) << "count " << count << " row " << r;
    }
  }
}

TEST(InterpreterControl, NestedLoopsComputeAMatrixProduct) {
  // c[i][j] = sum_k a[i][k] * b[k][j]; one thread per (i, j) on GROUP axes 1, 0.
  const std::int64_t m = 5, n = 6, k = 7;
  std::vector<float> a = random_floats(m * k, 2), b = random_floats(k * n, 3), c(m * n);
  WireBuilder w;
  const Id pa = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, m * k);
  const Id pb = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, k * n);
  const Id pc = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, m * n);
  const Id acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1);
  const Id zero = w.const_i64(0);
  const Id j = w.group_index(0, w.const_i64(n));
  const Id i = w.group_index(1, w.const_i64(m));
  w.store(KILN_DTYPE_F32, acc, zero, w.const_f32(0.0f));
  // Split the k loop in two nested loops (k = 7 = outer 1 + ...): outer over
  // {0, 1} halves with inner lengths 4 and 3, to nest loops with a trip count
  // that depends on the outer counter.
  const Id half = w.loop(w.const_i64(2));
  const Id inner_len = w.binary(KILN_BINARY_SUB, KILN_DTYPE_I64, w.const_i64(4), half);  // 4, then 3
  const Id base = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, half, w.const_i64(4));
  const Id q = w.loop(inner_len);
  const Id kk = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, base, q);
  const Id av = w.load(KILN_DTYPE_F32, pa, w.mad(KILN_DTYPE_I64, i, w.const_i64(k), kk));
  const Id bv = w.load(KILN_DTYPE_F32, pb, w.mad(KILN_DTYPE_I64, kk, w.const_i64(n), j));
  w.store(KILN_DTYPE_F32, acc, zero, w.mad(KILN_DTYPE_F32, av, bv, w.load(KILN_DTYPE_F32, acc, zero)));
  w.end_loop(q);
  w.end_loop(half);
  w.store(KILN_DTYPE_F32, pc, w.mad(KILN_DTYPE_I64, i, w.const_i64(n), j), w.load(KILN_DTYPE_F32, acc, zero));
  run_ok(w.ops, {arg_of(a), arg_of(b), arg_of(c)});
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t s = 0; s < n; ++s) {
      float want = 0.0f;
      for (std::int64_t t = 0; t < k; ++t) {
        const float p = a[r * k + t] * b[t * n + s];
        want = p + want;
      }
      EXPECT_EQ(c[r * n + s], want) << r << "," << s;
    }
}

TEST(InterpreterControl, PerThreadTripCountsAndIfsMaskThreads) {
  // 64 threads per group, 5 groups, n = 300 < 320: thread g*64+l with
  // g*64+l < n computes out = number of k < (g*64+l) % 7 with k odd, and
  // writes -1 where x < 0 (an IF inside the loop-free part).
  const std::int64_t n = 300, local = 64, groups = 5;
  std::vector<float> x = random_floats(n, 4);
  std::vector<std::int32_t> out(groups * local, 777);
  WireBuilder w;
  const Id px = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I32, 1, groups * local);
  const Id acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_I32, 1);
  const Id zero = w.const_i64(0);
  const Id l = w.local_index(0, w.const_i64(local));
  const Id g = w.group_index(0, w.const_i64(groups));
  const Id gid = w.mad(KILN_DTYPE_I64, g, w.const_i64(local), l);
  const Id in_range = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, gid, w.const_i64(n)));
  w.store(KILN_DTYPE_I32, acc, zero, w.const_bits(KILN_DTYPE_I32, 0));
  const Id k = w.loop(w.binary(KILN_BINARY_MOD, KILN_DTYPE_I64, gid, w.const_i64(7)));
  const Id odd = w.if_(w.binary(KILN_BINARY_EQ, KILN_DTYPE_BOOL,
                                w.binary(KILN_BINARY_BIT_AND, KILN_DTYPE_I64, k, w.const_i64(1)), w.const_i64(1)));
  w.store(KILN_DTYPE_I32, acc, zero,
          w.binary(KILN_BINARY_ADD, KILN_DTYPE_I32, w.load(KILN_DTYPE_I32, acc, zero), w.const_bits(KILN_DTYPE_I32, 1)));
  w.end_if(odd);
  w.end_loop(k);
  w.store(KILN_DTYPE_I32, po, gid, w.load(KILN_DTYPE_I32, acc, zero));
  const Id negative = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, w.load(KILN_DTYPE_F32, px, gid), w.const_f32(0.0f)));
  w.store(KILN_DTYPE_I32, po, gid, w.const_bits(KILN_DTYPE_I32, 0xffffffffu));
  w.end_if(negative);
  w.end_if(in_range);
  run_ok(w.ops, {arg_of(x), arg_of(out)});
  for (std::int64_t t = 0; t < groups * local; ++t) {
    if (t >= n) {
      EXPECT_EQ(out[t], 777) << t;  // threads past n wrote nothing
      continue;
    }
    const std::int32_t odd_count = static_cast<std::int32_t>((t % 7) / 2);
    EXPECT_EQ(out[t], x[t] < 0 ? -1 : odd_count) << t;
  }
}

TEST(InterpreterControl, IndicesOnEveryAxis) {
  // out[((gz*2+lz)*Y ...)] = coordinates, for groups (3,2,2) and local (4,3,2).
  const std::int64_t G[3] = {3, 2, 2}, L[3] = {4, 3, 2};
  const std::int64_t X = G[0] * L[0], Y = G[1] * L[1], Z = G[2] * L[2];
  std::vector<std::int64_t> out(X * Y * Z, -1);
  WireBuilder w;
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I64, 0, X * Y * Z);
  Id coord[3];
  for (std::uint32_t axis = 0; axis < 3; ++axis) {
    const Id g = w.group_index(axis, w.const_i64(G[axis]));
    const Id l = w.local_index(axis, w.const_i64(L[axis]));
    coord[axis] = w.mad(KILN_DTYPE_I64, g, w.const_i64(L[axis]), l);
  }
  const Id at = w.mad(KILN_DTYPE_I64, w.mad(KILN_DTYPE_I64, coord[2], w.const_i64(Y), coord[1]), w.const_i64(X), coord[0]);
  const Id value = w.mad(KILN_DTYPE_I64, w.mad(KILN_DTYPE_I64, coord[2], w.const_i64(100), coord[1]), w.const_i64(100), coord[0]);
  w.store(KILN_DTYPE_I64, po, at, value);
  const sdk::ExecStats stats = run_ok(w.ops, {arg_of(out)});
  EXPECT_EQ(stats.groups, 12u);
  EXPECT_EQ(stats.threads_per_group, 24u);
  for (std::int64_t z = 0; z < Z; ++z)
    for (std::int64_t y = 0; y < Y; ++y)
      for (std::int64_t x = 0; x < X; ++x) EXPECT_EQ(out[(z * Y + y) * X + x], z * 10000 + y * 100 + x);
}

TEST(InterpreterControl, DynamicGroupLengthFromAVariableParam) {
  // c = a + b over n elements, n an i32 VARIABLE param: GROUP length = cast(n).
  WireBuilder w;
  const Id pa = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0);
  const Id pb = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1);
  const Id pc = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2);
  const Id pn = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I32, 3);
  const Id i = w.group_index(0, w.cast(KILN_DTYPE_I64, pn));
  w.store(KILN_DTYPE_F32, pc, i,
          w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, pa, i), w.load(KILN_DTYPE_F32, pb, i)));
  sdk::InterpretedProgram program(w.ops);
  for (std::int64_t n : {1, 7, 257, 1000}) {
    std::vector<float> a = random_floats(1000, 5), b = random_floats(1000, 6), c(1000, -7.0f);
    const sdk::ExecStats stats = program.run(std::vector<kiln_arg>{arg_of(a), arg_of(b), arg_of(c),
                                                                  sdk::scalar_arg(KILN_DTYPE_I32, static_cast<std::uint64_t>(n))});
    EXPECT_EQ(stats.groups, static_cast<std::uint64_t>(n));
    for (std::int64_t k = 0; k < 1000; ++k) EXPECT_EQ(c[k], k < n ? a[k] + b[k] : -7.0f) << "n " << n << " k " << k;
  }
}

TEST(InterpreterControl, RegisterStorageIsPrivateToEachThread) {
  // Every thread of a 128-thread group writes its id into its REGISTER
  // storage, then reads it back after all threads wrote.
  const std::int64_t threads = 128;
  std::vector<std::int64_t> out(threads * 3, -1);
  WireBuilder w;
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_I64, 0, threads * 3);
  const Id reg = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_I64, 2);
  const Id l = w.local_index(0, w.const_i64(threads));
  const Id g = w.group_index(0, w.const_i64(3));
  const Id gid = w.mad(KILN_DTYPE_I64, g, w.const_i64(threads), l);
  w.store(KILN_DTYPE_I64, reg, w.const_i64(1), gid);
  w.barrier();
  w.store(KILN_DTYPE_I64, po, gid, w.load(KILN_DTYPE_I64, reg, w.const_i64(1)));
  run_ok(w.ops, {arg_of(out)});
  for (std::int64_t t = 0; t < threads * 3; ++t) EXPECT_EQ(out[t], t);
}

TEST(InterpreterControl, ProgramIsReusableAcrossLaunches) {
  auto ops = wire_add_f32(100);
  sdk::InterpretedProgram program(ops);
  for (int launch = 0; launch < 3; ++launch) {
    std::vector<float> a = random_floats(100, launch), b = random_floats(100, launch + 10), c(100);
    program.run(std::vector<kiln_arg>{arg_of(a), arg_of(b), arg_of(c)});
    for (int k = 0; k < 100; ++k) EXPECT_EQ(c[k], a[k] + b[k]);
  }
}

TEST(InterpreterControl, EmptyKernelRunsOneThread) {
  const sdk::ExecStats stats = run_ok({}, {});
  EXPECT_EQ(stats.groups, 1u);
  EXPECT_EQ(stats.threads, 1u);
}
