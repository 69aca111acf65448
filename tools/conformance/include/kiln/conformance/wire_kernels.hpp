// kiln/conformance/wire_kernels.hpp - hand-built wire kernels shared by the
// interpreter tests and plugin tests: shapes that optimizations produce
// (LOCAL tree reductions, grouped and vectorized element-wise ops, strided
// access, a naive matrix product), and, in namespace probe, the workload
// kernels of the GPU issue (add, exp-chain, row sum, matmul) written the way
// a tuner should reach or beat: the CUDA perf probe times them at full size
// on a GPU, the shared kernel suite (kernel_suite.hpp, probe_suite) checks
// them at small sizes on every device. Built with WireBuilder, so they depend
// on nothing but the ABI.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <kiln/conformance/wire_builder.hpp>

namespace kiln::conformance {

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

// out[0] = the 2^iterations_log2-th term of x -> x * 0.9999999 + 1 from 0:
// one dependent multiply-add per iteration of a LOOP over an index of 2^12
// iterations, in each of 2^(iterations_log2 - 12) work-groups (all store the
// same value). Long loops alone would not do: llvmpipe (lavapipe) cuts its
// loops short. Nothing can shorten the work: 2^36 takes minutes on a CPU but
// under 300 ms on an H200, 2^42 about 5 s there. For the timeout of timed
// launches (kiln_timed_launch_args.timeout_ns): it ends, but long after the
// tests' limit.
inline std::vector<kiln_op> wire_long_loop(int iterations_log2) {
  using Id = WireBuilder::Id;
  WireBuilder w;
  const Id out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 0, 1);
  const Id acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1);
  const Id zero = w.const_i64(0);
  const int loop_log2 = iterations_log2 < 12 ? iterations_log2 : 12;
  w.group_index(0, w.const_i64(std::int64_t{1} << (iterations_log2 - loop_log2)));
  w.store(KILN_DTYPE_F32, acc, zero, w.const_f32(0.0f));
  const Id i = w.loop(w.const_i64(std::int64_t{1} << loop_log2));
  w.store(KILN_DTYPE_F32, acc, zero,
          w.mad(KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, acc, zero), w.const_f32(0.9999999f), w.const_f32(1.0f)));
  w.end_loop(i);
  w.store(KILN_DTYPE_F32, out, zero, w.load(KILN_DTYPE_F32, acc, zero));
  return w.ops;
}

}  // namespace kiln::conformance

namespace kiln::conformance::probe {

// Hand-written for the workloads of the GPU issue: 256 threads a group,
// 128-bit accesses, LOCAL tiles and register blocking.

using Id = WireBuilder::Id;
constexpr std::int64_t kThreads = 256;

// out = f(x[, y]) over n floats (n a multiple of 1024), 4 per thread
// (128-bit accesses), 256 threads a group.
inline std::vector<kiln_op> vec4_map(std::int64_t n, int inputs, const std::function<Id(WireBuilder&, Id, Id)>& f) {
  WireBuilder w;
  const Id x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  const Id y = inputs > 1 ? w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, n) : 0;
  const Id out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, static_cast<std::uint32_t>(inputs), n);
  const Id g = w.group_index(0, w.const_i64(n / (4 * kThreads)));
  const Id l = w.local_index(0, w.const_i64(kThreads));
  const Id i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, w.mad(KILN_DTYPE_I64, g, w.const_i64(kThreads), l), w.const_i64(4));
  const Id a = w.load(KILN_DTYPE_F32, x, i, 4);
  const Id b = inputs > 1 ? w.load(KILN_DTYPE_F32, y, i, 4) : a;
  w.store(KILN_DTYPE_F32, out, i, f(w, a, b), 4);
  return w.ops;
}

// c = a + b
inline std::vector<kiln_op> add(std::int64_t n) {
  return vec4_map(n, 2, [](WireBuilder& w, Id a, Id b) { return w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, a, b, 4); });
}

// y = exp(x) * 2 + 1 in one pass
inline std::vector<kiln_op> exp_chain(std::int64_t n) {
  return vec4_map(n, 1, [](WireBuilder& w, Id a, Id) {
    const Id e = w.unary(KILN_UNARY_EXP, KILN_DTYPE_F32, a, 4);
    return w.mad(KILN_DTYPE_F32, e, w.broadcast(KILN_DTYPE_F32, w.const_f32(2), 4),
                 w.broadcast(KILN_DTYPE_F32, w.const_f32(1), 4), 4);
  });
}

// out[r] = sum of row r (cols a multiple of 1024): one group of 256 threads
// per row, 4-wide strided loads summed in a register, then a LOCAL tree.
inline std::vector<kiln_op> sum_rows(std::int64_t rows, std::int64_t cols) {
  WireBuilder w;
  const Id x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, rows * cols);
  const Id out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, rows);
  const Id acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1);
  const Id shared = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, kThreads);
  const Id row = w.group_index(0, w.const_i64(rows));
  const Id l = w.local_index(0, w.const_i64(kThreads));
  const Id zero = w.const_i64(0);
  w.store(KILN_DTYPE_F32, acc, zero, w.const_f32(0));
  const Id base = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, row, w.const_i64(cols));
  const Id step = w.loop(w.const_i64(cols / (4 * kThreads)));
  const Id col = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, w.mad(KILN_DTYPE_I64, step, w.const_i64(kThreads), l), w.const_i64(4));
  const Id v = w.load(KILN_DTYPE_F32, x, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, base, col), 4);
  Id sum = w.load(KILN_DTYPE_F32, acc, zero);
  for (unsigned lane = 0; lane < 4; ++lane) sum = w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, sum, w.extract(KILN_DTYPE_F32, v, lane));
  w.store(KILN_DTYPE_F32, acc, zero, sum);
  w.end_loop(step);
  w.store(KILN_DTYPE_F32, shared, l, w.load(KILN_DTYPE_F32, acc, zero));
  w.barrier();
  for (std::int64_t stride = kThreads / 2; stride >= 1; stride /= 2) {
    const Id active = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, l, w.const_i64(stride)));
    const Id other = w.load(KILN_DTYPE_F32, shared, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, l, w.const_i64(stride)));
    w.store(KILN_DTYPE_F32, shared, l, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, shared, l), other));
    w.end_if(active);
    w.barrier();
  }
  const Id first = w.if_(w.binary(KILN_BINARY_EQ, KILN_DTYPE_BOOL, l, zero));
  w.store(KILN_DTYPE_F32, out, row, w.load(KILN_DTYPE_F32, shared, zero));
  w.end_if(first);
  return w.ops;
}

// C = A B for n x n f32 (n a multiple of 128): 16x16 threads per group,
// each computing an 8x8 block of C (register blocking) from 128x8 / 8x128
// tiles of A and B staged in LOCAL storage with 128-bit loads.
inline std::vector<kiln_op> matmul(std::int64_t n) {
  constexpr std::int64_t tile = 128, kstep = 8, per = 8;
  WireBuilder w;
  const Id a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n * n);
  const Id b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 1, n * n);
  const Id c = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, n * n);
  const Id acc = w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, per * per);
  const Id as = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, kstep * tile);  // [k][row]
  const Id bs = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, kstep * tile);  // [k][col]
  auto c64 = [&](std::int64_t v) { return w.const_i64(v); };
  auto add = [&](Id p, Id q) { return w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, p, q); };
  auto mul = [&](Id p, Id q) { return w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, p, q); };
  auto div = [&](Id p, std::int64_t q) { return w.binary(KILN_BINARY_DIV, KILN_DTYPE_I64, p, c64(q)); };
  auto mod = [&](Id p, std::int64_t q) { return w.binary(KILN_BINARY_MOD, KILN_DTYPE_I64, p, c64(q)); };
  const Id gx = w.group_index(0, c64(n / tile));
  const Id gy = w.group_index(1, c64(n / tile));
  const Id tx = w.local_index(0, c64(16));
  const Id ty = w.local_index(1, c64(16));
  for (std::int64_t e = 0; e < per * per; ++e) w.store(KILN_DTYPE_F32, acc, c64(e), w.const_f32(0));
  const Id t = add(mul(ty, c64(16)), tx);  // 0..255
  const Id row0 = mul(gy, c64(tile));
  const Id col0 = mul(gx, c64(tile));
  // Per K step each thread brings one float4 of A (row t/2, k 4*(t%2)..) and
  // one of B (k t/32, columns 4*(t%32)..).
  const Id a_row = div(t, 2), a_k = mul(mod(t, 2), c64(4));
  const Id b_k = div(t, 32), b_col = mul(mod(t, 32), c64(4));
  const Id kk = w.loop(c64(n / kstep));
  const Id k0 = mul(kk, c64(kstep));
  const Id av = w.load(KILN_DTYPE_F32, a, add(mul(add(row0, a_row), c64(n)), add(k0, a_k)), 4);
  for (std::uint32_t j = 0; j < 4; ++j)
    w.store(KILN_DTYPE_F32, as, add(mul(add(a_k, c64(j)), c64(tile)), a_row), w.extract(KILN_DTYPE_F32, av, j));
  const Id bv = w.load(KILN_DTYPE_F32, b, add(mul(add(k0, b_k), c64(n)), add(col0, b_col)), 4);
  w.store(KILN_DTYPE_F32, bs, add(mul(b_k, c64(tile)), b_col), bv, 4);
  w.barrier();
  const Id k = w.loop(c64(kstep));
  const Id at_k = mul(k, c64(tile));
  Id ra[2], rb[2];
  for (int half = 0; half < 2; ++half) {
    ra[half] = w.load(KILN_DTYPE_F32, as, add(at_k, add(mul(ty, c64(per)), c64(4 * half))), 4);
    rb[half] = w.load(KILN_DTYPE_F32, bs, add(at_k, add(mul(tx, c64(per)), c64(4 * half))), 4);
  }
  Id a_val[per], b_val[per];
  for (std::uint32_t i = 0; i < per; ++i) {
    a_val[i] = w.extract(KILN_DTYPE_F32, ra[i / 4], i % 4);
    b_val[i] = w.extract(KILN_DTYPE_F32, rb[i / 4], i % 4);
  }
  for (std::int64_t i = 0; i < per; ++i)
    for (std::int64_t j = 0; j < per; ++j) {
      const Id slot = c64(i * per + j);
      w.store(KILN_DTYPE_F32, acc, slot, w.mad(KILN_DTYPE_F32, a_val[i], b_val[j], w.load(KILN_DTYPE_F32, acc, slot)));
    }
  w.end_loop(k);
  w.barrier();
  w.end_loop(kk);
  for (std::int64_t i = 0; i < per; ++i)
    for (std::int64_t j = 0; j < per; j += 4) {
      Id v = w.broadcast(KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, acc, c64(i * per + j)), 4);
      for (std::uint32_t lane = 1; lane < 4; ++lane)
        v = w.insert(KILN_DTYPE_F32, v, w.load(KILN_DTYPE_F32, acc, c64(i * per + j + lane)), lane, 4);
      const Id r = add(row0, add(mul(ty, c64(per)), c64(i)));
      const Id col = add(col0, add(mul(tx, c64(per)), c64(j)));
      w.store(KILN_DTYPE_F32, c, add(mul(r, c64(n)), col), v, 4);
    }
  return w.ops;
}

}  // namespace kiln::conformance::probe
