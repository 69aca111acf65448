// tests/support/wire_kernels.hpp - small hand-built wire kernels shared by
// the interpreter tests and plugin tests: shapes that optimizations produce
// (LOCAL tree reductions, grouped and vectorized element-wise ops, strided
// access, a naive matrix product). Built with WireBuilder, so they depend on
// nothing but the ABI.
#pragma once

#include <cstdint>
#include <vector>

#include "support/wire_builder.hpp"

namespace kiln::test {

// out[g] = sum of x[g*T .. g*T + T) by a tree in LOCAL storage (T a power of two):
//   s[t] = x[g*T + t]; barrier
//   for step < log2(T): half = T >> (step + 1); if t < half: s[t] += s[t + half]; barrier
//   if t == 0: out[g] = s[0]
// Without `loop_barrier` the barrier inside the loop is missing (a race).
inline std::vector<kiln_op> wire_tree_sum(std::int64_t groups, std::int64_t threads, unsigned dtype = KILN_DTYPE_F32,
                                          bool loop_barrier = true) {
  using Id = WireBuilder::Id;
  const auto d = static_cast<std::uint8_t>(dtype);
  WireBuilder w;
  const Id px = w.param(KILN_PARAM_GLOBAL, d, 0, static_cast<std::uint64_t>(groups * threads));
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, d, 1, static_cast<std::uint64_t>(groups));
  const Id s = w.storage(KILN_SCOPE_LOCAL, d, static_cast<std::uint64_t>(threads));
  const Id t = w.local_index(0, w.const_i64(threads));
  const Id g = w.group_index(0, w.const_i64(groups));
  w.store(d, s, t, w.load(d, px, w.mad(KILN_DTYPE_I64, g, w.const_i64(threads), t)));
  w.barrier();
  std::int64_t steps = 0;
  while ((std::int64_t{1} << steps) < threads) ++steps;
  const Id step = w.loop(w.const_i64(steps));
  const Id half = w.binary(KILN_BINARY_SHR, KILN_DTYPE_I64, w.const_i64(threads),
                           w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, step, w.const_i64(1)));
  const Id active = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, t, half));
  const Id other = w.load(d, s, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, t, half));
  w.store(d, s, t, w.binary(KILN_BINARY_ADD, d, w.load(d, s, t), other));
  w.end_if(active);
  if (loop_barrier) w.barrier();
  w.end_loop(step);
  const Id first = w.if_(w.binary(KILN_BINARY_EQ, KILN_DTYPE_BOOL, t, w.const_i64(0)));
  w.store(d, po, g, w.load(d, s, w.const_i64(0)));
  w.end_if(first);
  return w.ops;
}

// c = a + b over n f32 elements: `local` threads per group, each handling
// `lanes` consecutive elements with vector loads and stores.
inline std::vector<kiln_op> wire_add_grouped(std::int64_t n, std::int64_t local, std::uint8_t lanes = 1) {
  using Id = WireBuilder::Id;
  WireBuilder w;
  const auto count = static_cast<std::uint64_t>(n);
  const Id a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, count);
  const Id b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, count);
  const Id c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, count);
  const Id l = w.local_index(0, w.const_i64(local));
  const Id g = w.group_index(0, w.const_i64(n / local / lanes));
  const Id i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, w.mad(KILN_DTYPE_I64, g, w.const_i64(local), l), w.const_i64(lanes));
  w.store(KILN_DTYPE_F32, c, i,
          w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, a, i, lanes), w.load(KILN_DTYPE_F32, b, i, lanes),
                   lanes),
          lanes);
  return w.ops;
}

// out[g*T + t] = x[(g*T + t) * stride] for groups of T threads: stride 1
// reads neighbouring elements from neighbouring threads, larger strides do not.
inline std::vector<kiln_op> wire_strided_copy(std::int64_t groups, std::int64_t threads, std::int64_t stride) {
  using Id = WireBuilder::Id;
  WireBuilder w;
  const auto n = static_cast<std::uint64_t>(groups * threads);
  const Id px = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n * static_cast<std::uint64_t>(stride));
  const Id po = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, n);
  const Id t = w.local_index(0, w.const_i64(threads));
  const Id g = w.group_index(0, w.const_i64(groups));
  const Id i = w.mad(KILN_DTYPE_I64, g, w.const_i64(threads), t);
  w.store(KILN_DTYPE_F32, po, i, w.load(KILN_DTYPE_F32, px, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, i, w.const_i64(stride))));
  return w.ops;
}

// c[i][j] = sum_k a[i][k] * b[k][j] (row-major f32), one thread per element
// (GROUP axis 0 = j, 1 = i), accumulated in REGISTER storage: the shape of a
// matrix product before any optimization.
inline std::vector<kiln_op> wire_naive_matmul(std::int64_t m, std::int64_t n, std::int64_t k) {
  using Id = WireBuilder::Id;
  WireBuilder w;
  const Id pa = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, static_cast<std::uint64_t>(m * k));
  const Id pb = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, static_cast<std::uint64_t>(k * n));
  const Id pc = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, static_cast<std::uint64_t>(m * n));
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

}  // namespace kiln::test
