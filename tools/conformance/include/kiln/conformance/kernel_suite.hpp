// kiln/conformance/kernel_suite.hpp - the shared kernel suite of plugin tests:
// hand-built wire kernels that together use every op kind, every
// UNARY/BINARY op a device offers on every dtype, every CAST pair, vectors,
// LOCAL storage with barriers, REGISTER storage, loops, ifs, VARIABLE params
// and 3-D grids, plus the workload kernels of the GPU perf probe (vectorized
// add and exp-chain, row sums with a LOCAL tree, a register-blocked tiled
// matmul); each with random inputs and, per output, how close a device must
// come to the reference interpreter.
//
// run_suite_kernel() runs one on a plugin through the ABI and on the
// interpreter, and compares. `kiln conformance` runs it on any plugin
// (tools/conformance), and every device plugin's tests use it (OpenCL,
// CUDA, Vulkan, dummy); the CUDA tests also compile the suite with NVRTC
// alone where there is no GPU. The element-wise kernels use 64 threads per
// group, or as many as the device allows; the LOCAL tree reduction (64) and
// the 3-D grid (8x8) need theirs, and the kit reports them unsupported on
// devices with fewer.
#pragma once

#include <kiln/conformance/capabilities.hpp>
#include <kiln/conformance/kernel_runner.hpp>
#include <kiln/conformance/wire_builder.hpp>
#include <kiln/conformance/wire_kernels.hpp>

#include <kiln/plugin.h>
#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/wire.hpp>

#include <functional>
#include <string>
#include <vector>

namespace kiln::conformance {

// One output to compare with the interpreter's.
struct SuiteCheck {
  std::size_t arg = 0;  // which argument holds the result
  std::string what;     // e.g. "exp f16"
  Tolerance tolerance;  // exact unless set
};

struct SuiteKernel {
  std::string name;
  std::vector<kiln_op> ops;
  std::vector<HostArg> args;  // initial contents
  std::vector<SuiteCheck> checks;
};

namespace suite_detail {

using Id = WireBuilder::Id;
constexpr std::int64_t kLocal = 64;

// Exact ops must match bit for bit; the others (transcendentals, division,
// which devices may compute a few ulps apart, and anything on f16/bf16 whose
// f32 result may then round the other way) within a few ulps.
inline Tolerance tolerance(unsigned dt, bool exact) {
  if (exact) return {};
  switch (dt) {
    case KILN_DTYPE_F16: return {2.0 / 1024, 1e-4, 1};
    case KILN_DTYPE_BF16: return {2.0 / 128, 1e-3, 1};
    case KILN_DTYPE_F64: return {1e-12, 1e-13, 0};
    default: return {4e-6, 1e-6, 0};
  }
}
inline bool exact_unary(unsigned u) {
  return u == KILN_UNARY_NEG || u == KILN_UNARY_FLOOR || u == KILN_UNARY_TRUNC || u == KILN_UNARY_ABS ||
         u == KILN_UNARY_BIT_NOT;
}
inline bool exact_binary(unsigned b) { return b != KILN_BINARY_DIV && b != KILN_BINARY_POW; }
inline unsigned binary_result_dtype(unsigned b, unsigned dt) {
  return sdk::binary_is_comparison(b) ? unsigned{KILN_DTYPE_BOOL} : dt;
}

// The threads per group of the element-wise kernels on a device: 64, or the
// largest power of two the device allows when that is fewer (a CPU plugin
// with max_local_threads 1 still runs them). 0 limits (capabilities made
// up for compiling alone) count as no limit.
inline std::int64_t elementwise_local(const kiln_device_info& info) {
  std::int64_t local = kLocal;
  auto limit = [&](std::uint64_t max) {
    while (max != 0 && static_cast<std::uint64_t>(local) > max && local > 1) local /= 2;
  };
  limit(info.max_local_threads);
  limit(info.max_local_dims[0]);
  return local;
}

// The common frame: params first, then i = group * local + thread (local
// threads per group, 64 unless the device has fewer), and an IF (i < n)
// around the body, which `body(w, i)` writes.
inline std::vector<kiln_op> elementwise(std::size_t n, const std::function<void(WireBuilder&)>& params,
                                        const std::function<void(WireBuilder&, Id)>& body, std::int64_t local = kLocal) {
  WireBuilder w;
  params(w);
  const Id len = w.const_i64(static_cast<std::int64_t>((n + local - 1) / local));
  const Id g = w.group_index(0, len);
  const Id l = w.local_index(0, w.const_i64(local));
  const Id i = w.mad(KILN_DTYPE_I64, g, w.const_i64(local), l);
  const Id inside = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, i, w.const_i64(static_cast<std::int64_t>(n))));
  body(w, i);
  w.end_if(inside);
  return w.ops;
}

// Sets every 5th y to x (so EQ/NOT_EQ see both answers), keeping `nonzero`.
inline void share_some(const HostArg& x, HostArg& y, bool nonzero) {
  for (std::size_t k = 0; k < x.count(); k += 5) {
    const std::uint64_t bits = x.get(k);
    const bool zero = sdk::dtype_is_float(x.dtype) ? float_value(x.dtype, bits) == 0 : bits == 0;
    if (!(nonzero && zero)) y.set(k, bits);
  }
}

// One output per UNARY/BINARY op in `unary`/`binary`, plus MAD and SELECT.
inline SuiteKernel op_kernel(const std::string& name, std::uint8_t dt, const std::vector<unsigned>& unary,
                             const std::vector<unsigned>& binary, HostArg x, HostArg y, bool with_mad_select,
                             std::int64_t local = kLocal) {
  const std::size_t n = x.count();
  SuiteKernel k;
  k.name = name;
  k.args = {x, y};
  struct Out {
    std::string what;
    std::uint8_t dtype;
    bool exact;
    std::function<Id(WireBuilder&, Id, Id)> emit;
  };
  std::vector<Out> outs;
  for (unsigned u : unary)
    outs.push_back({std::string(sdk::unary_name(u)), dt, exact_unary(u),
                    [=](WireBuilder& w, Id a, Id) { return w.unary(static_cast<std::uint8_t>(u), dt, a); }});
  for (unsigned b : binary) {
    const auto result = static_cast<std::uint8_t>(binary_result_dtype(b, dt));
    outs.push_back({std::string(sdk::binary_name(b)), result, exact_binary(b),
                    [=](WireBuilder& w, Id a, Id c) { return w.binary(static_cast<std::uint8_t>(b), result, a, c); }});
  }
  if (with_mad_select) {
    // a * b + a * b: no cancellation, so fused and unfused agree closely.
    outs.push_back({"mad", dt, !sdk::dtype_is_float(dt),
                    [=](WireBuilder& w, Id a, Id c) { return w.mad(dt, a, c, w.binary(KILN_BINARY_MUL, dt, a, c)); }});
    outs.push_back({"select", dt, true, [=](WireBuilder& w, Id a, Id c) {
                      return w.select(dt, w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, a, c), a, c);
                    }});
  }
  for (const Out& o : outs) k.args.push_back(HostArg::poisoned(o.dtype, n));
  k.ops = elementwise(
      n,
      [&](WireBuilder& w) {
        w.param(KILN_PARAM_GLOBAL, dt, 0, n);
        w.param(KILN_PARAM_GLOBAL, dt, 1, n);
        for (std::size_t j = 0; j < outs.size(); ++j)
          w.param(KILN_PARAM_GLOBAL_MUT, outs[j].dtype, static_cast<std::uint32_t>(2 + j), n);
      },
      [&](WireBuilder& w, Id i) {
        const Id a = w.load(dt, 0, i);
        const Id b = w.load(dt, 1, i);
        for (std::size_t j = 0; j < outs.size(); ++j)
          w.store(outs[j].dtype, static_cast<Id>(2 + j), i, outs[j].emit(w, a, b));
      },
      local);
  for (std::size_t j = 0; j < outs.size(); ++j)
    k.checks.push_back({2 + j, outs[j].what + " " + std::string(sdk::dtype_name(dt)), tolerance(dt, outs[j].exact)});
  return k;
}

inline std::vector<SuiteKernel> op_kernels(const kiln_device_info& info, std::size_t n, std::mt19937_64& rng) {
  std::vector<SuiteKernel> out;
  const std::int64_t local = elementwise_local(info);
  for (unsigned dt = KILN_DTYPE_BF16; dt < KILN_DTYPE_COUNT; ++dt) {
    if (!has_dtype(info, dt)) continue;
    const auto d = static_cast<std::uint8_t>(dt);
    const std::string dn(sdk::dtype_name(dt));
    if (sdk::dtype_is_float(dt)) {
      // General domain: everything but the ops that need positive inputs.
      std::vector<unsigned> unary, binary, positive_unary;
      for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u) {
        if (!has_unary(info, dt, u)) continue;
        // (the ABI 1.1 math ops tanh, erf, sigmoid and expm1 join the
        // general domain where claimed; rsqrt and log1p the positive one)
        const bool positive = u == KILN_UNARY_LN || u == KILN_UNARY_LOG2 || u == KILN_UNARY_SQRT || u == KILN_UNARY_RECIP ||
                              u == KILN_UNARY_RSQRT || u == KILN_UNARY_LOG1P;
        (positive ? positive_unary : unary).push_back(u);
      }
      for (unsigned b = 1; b < KILN_BINARY_COUNT; ++b)
        if (has_binary(info, dt, b) && b != KILN_BINARY_POW) binary.push_back(b);
      HostArg x = random_arg(d, n, rng, -4, 4);
      HostArg y = random_arg(d, n, rng, -4, 4, true);
      share_some(x, y, true);
      out.push_back(op_kernel("ops " + dn, d, unary, binary, x, y, true, local));
      // Positive domain: ln, log2, sqrt, recip, rsqrt, log1p, and pow with a moderate exponent.
      std::vector<unsigned> positive_binary;
      if (has_binary(info, dt, KILN_BINARY_POW)) positive_binary.push_back(KILN_BINARY_POW);
      out.push_back(op_kernel("ops " + dn + " (positive)", d, positive_unary, positive_binary,
                              random_arg(d, n, rng, 0.125, 8), random_arg(d, n, rng, -3, 3), false, local));
    } else {
      std::vector<unsigned> unary, binary;
      for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u)
        if (has_unary(info, dt, u)) unary.push_back(u);
      for (unsigned b = 1; b < KILN_BINARY_COUNT; ++b)
        if (has_binary(info, dt, b)) binary.push_back(b);
      HostArg x = random_arg(d, n, rng);
      HostArg y = random_arg(d, n, rng);
      share_some(x, y, false);
      if (sdk::dtype_is_signed_int(dt) && n > 1) {  // MIN / -1 wraps, MIN % -1 is 0
        x.set(1, int_bits(dt, std::uint64_t{1} << (sdk::dtype_bytes(dt) * 8 - 1)));
        y.set(1, int_bits(dt, ~std::uint64_t{0}));
      }
      // x / 0 and x % 0 are 0 on every backend (kernel_ir.h): every 11th
      // divisor is zero, so a trap or another answer shows.
      if (dt != KILN_DTYPE_BOOL)
        for (std::size_t e = 2; e < n; e += 11) y.set(e, 0);
      out.push_back(op_kernel("ops " + dn, d, unary, binary, x, y, dt != KILN_DTYPE_BOOL, local));
    }
  }
  return out;
}

// Casts from one dtype to every dtype the device has.
inline SuiteKernel cast_kernel(const kiln_device_info& info, std::uint8_t from, std::size_t n, std::mt19937_64& rng) {
  const std::int64_t local = elementwise_local(info);
  // Float sources stay within every integer type's range (float -> int out
  // of range is undefined); some zeros for the casts to bool.
  HostArg x = sdk::dtype_is_float(from) ? random_arg(from, n, rng, 0, 120) : random_arg(from, n, rng);
  for (std::size_t e = 0; e < n; e += 7) x.set(e, 0);
  std::vector<std::uint8_t> targets;
  for (unsigned to = KILN_DTYPE_BF16; to < KILN_DTYPE_COUNT; ++to)
    if (has_dtype(info, to) && to != from) targets.push_back(static_cast<std::uint8_t>(to));
  SuiteKernel k;
  k.name = "casts from " + std::string(sdk::dtype_name(from));
  k.args.push_back(x);
  for (std::uint8_t to : targets) k.args.push_back(HostArg::poisoned(to, n));
  k.ops = elementwise(
      n,
      [&](WireBuilder& w) {
        w.param(KILN_PARAM_GLOBAL, from, 0, n);
        for (std::size_t j = 0; j < targets.size(); ++j)
          w.param(KILN_PARAM_GLOBAL_MUT, targets[j], static_cast<std::uint32_t>(1 + j), n);
      },
      [&](WireBuilder& w, Id i) {
        const Id v = w.load(from, 0, i);
        for (std::size_t j = 0; j < targets.size(); ++j)
          w.store(targets[j], static_cast<Id>(1 + j), i, w.cast(targets[j], v));
      },
      local);
  for (std::size_t j = 0; j < targets.size(); ++j)
    k.checks.push_back({1 + j,
                        "cast " + std::string(sdk::dtype_name(from)) + " -> " + std::string(sdk::dtype_name(targets[j])),
                        {}});
  return k;
}

// Vectors: out = select(a < b, insert(2 * (a + b), a[0], lane last), a) and
// lane 1 of a * b + (a + b) as a scalar, on `lanes`-wide loads and stores.
inline SuiteKernel vector_kernel(std::uint8_t dt, std::uint8_t lanes, std::size_t n_vectors, std::mt19937_64& rng,
                                 std::int64_t local = kLocal) {
  const std::size_t n = n_vectors * lanes;
  SuiteKernel k;
  k.name = "vectors " + std::string(sdk::dtype_name(dt)) + "x" + std::to_string(lanes);
  k.args = {random_arg(dt, n, rng), random_arg(dt, n, rng), HostArg::poisoned(dt, n), HostArg::poisoned(dt, n_vectors)};
  const std::uint64_t two = sdk::dtype_is_float(dt) ? float_bits(dt, 2.0) : 2;
  k.ops = elementwise(
      n_vectors,
      [&](WireBuilder& w) {
        w.param(KILN_PARAM_GLOBAL, dt, 0, n);
        w.param(KILN_PARAM_GLOBAL, dt, 1, n);
        w.param(KILN_PARAM_GLOBAL_MUT, dt, 2, n);
        w.param(KILN_PARAM_GLOBAL_MUT, dt, 3, n_vectors);
      },
      [&](WireBuilder& w, Id v) {
        const Id i = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, v, w.const_i64(lanes));
        const Id a = w.load(dt, 0, i, lanes);
        const Id b = w.load(dt, 1, i, lanes);
        const Id sum = w.binary(KILN_BINARY_ADD, dt, a, b, lanes);
        const Id twos = w.broadcast(dt, w.const_bits(dt, two), lanes);
        const Id doubled = w.binary(KILN_BINARY_MUL, dt, sum, twos, lanes);
        const Id first = w.extract(dt, a, 0);
        const Id inserted = w.insert(dt, doubled, first, lanes - 1u, lanes);
        const Id less = w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, a, b, lanes);
        w.store(dt, 2, i, w.select(dt, less, inserted, a, lanes), lanes);
        const Id fused = w.mad(dt, a, b, sum, lanes);
        w.store(dt, 3, v, w.extract(dt, fused, 1));
      },
      local);
  Tolerance mad_lane;
  if (sdk::dtype_is_float(dt)) {
    mad_lane = tolerance(dt, false);
    mad_lane.atol = 4 * mad_lane.rtol * 16;  // fused or not, near a cancellation
  }
  k.checks = {{2, k.name + " select/insert", {}}, {3, k.name + " mad lane 1", mad_lane}};
  return k;
}

// Vector accesses at any element index (KILN_ACCESS_UNALIGNED), for a
// device that claims KILN_FEATURE_UNALIGNED_VECTORS: thread v loads the
// `lanes` elements of x from v * lanes + v % lanes (every residue), stores
// them doubled to out at v * lanes (aligned), and stores x's aligned vector
// at v * (lanes + 1) + 1 of out2 (every residue, no overlap). For a device
// that claims KILN_FEATURE_UNALIGNED_VECTOR_LOADS alone (`stores` false)
// the loads only, of every width from 2 lanes (a GPU shifts whole words
// into place: 4 bytes and up), x ending at the last vector's last element.
inline SuiteKernel unaligned_vector_kernel(std::uint8_t dt, std::uint8_t lanes, std::size_t n_vectors, std::mt19937_64& rng,
                                           std::int64_t local = kLocal, bool stores = true) {
  const std::size_t n = n_vectors * lanes, spread = n_vectors * (lanes + 1) + 1;
  const std::size_t in = stores ? n + lanes : n + (n_vectors - 1) % lanes;
  SuiteKernel k;
  k.name = std::string(stores ? "unaligned vectors " : "unaligned vector loads ") + std::string(sdk::dtype_name(dt)) + "x" +
           std::to_string(lanes);
  k.args = {random_arg(dt, in, rng), HostArg::poisoned(dt, n)};
  if (stores) k.args.push_back(HostArg::poisoned(dt, spread));
  const std::uint64_t two = sdk::dtype_is_float(dt) ? float_bits(dt, 2.0) : 2;
  k.ops = elementwise(
      n_vectors,
      [&](WireBuilder& w) {
        w.param(KILN_PARAM_GLOBAL, dt, 0, in);
        w.param(KILN_PARAM_GLOBAL_MUT, dt, 1, n);
        if (stores) w.param(KILN_PARAM_GLOBAL_MUT, dt, 2, spread);
      },
      [&](WireBuilder& w, Id v) {
        const Id aligned = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, v, w.const_i64(lanes));
        const Id residue = w.binary(KILN_BINARY_MOD, KILN_DTYPE_I64, v, w.const_i64(lanes));
        const Id shifted = w.load(dt, 0, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, aligned, residue), lanes);
        w.ops[shifted].attr = KILN_ACCESS_UNALIGNED;
        const Id doubled = w.binary(KILN_BINARY_MUL, dt, shifted, w.broadcast(dt, w.const_bits(dt, two), lanes), lanes);
        w.store(dt, 1, aligned, doubled, lanes);
        if (!stores) return;
        const Id at = w.mad(KILN_DTYPE_I64, v, w.const_i64(lanes + 1), w.const_i64(1));
        const Id store = w.store(dt, 2, at, w.load(dt, 0, aligned, lanes), lanes);
        w.ops[store].attr = KILN_ACCESS_UNALIGNED;
      },
      local);
  k.checks = {{1, k.name + " loads", {}}};
  if (stores) k.checks.push_back({2, k.name + " stores", {}});
  return k;
}

// A tree reduction per work-group of 64 threads in LOCAL storage, with a
// BARRIER after each step: out[g] = sum of x[64g .. 64g+63].
inline SuiteKernel local_reduction_kernel(std::size_t n, std::mt19937_64& rng) {
  const std::size_t groups = (n + kLocal - 1) / kLocal;
  SuiteKernel k;
  k.name = "local tree reduction f32";
  k.args = {random_arg(KILN_DTYPE_F32, n, rng, -1, 1), HostArg::poisoned(KILN_DTYPE_F32, groups)};
  WireBuilder w;
  const Id in = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  const Id out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, groups);
  const Id shared = w.storage(KILN_SCOPE_LOCAL, KILN_DTYPE_F32, kLocal);
  const Id g = w.group_index(0, w.const_i64(static_cast<std::int64_t>(groups)));
  const Id l = w.local_index(0, w.const_i64(kLocal));
  const Id i = w.mad(KILN_DTYPE_I64, g, w.const_i64(kLocal), l);
  w.store(KILN_DTYPE_F32, shared, l, w.const_f32(0));
  const Id inside = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, i, w.const_i64(static_cast<std::int64_t>(n))));
  w.store(KILN_DTYPE_F32, shared, l, w.load(KILN_DTYPE_F32, in, i));
  w.end_if(inside);
  w.barrier();
  const Id step = w.loop(w.const_i64(6));
  const Id stride = w.binary(KILN_BINARY_SHR, KILN_DTYPE_I64, w.const_i64(kLocal / 2), step);
  const Id active = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, l, stride));
  const Id mine = w.load(KILN_DTYPE_F32, shared, l);
  const Id other = w.load(KILN_DTYPE_F32, shared, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, l, stride));
  w.store(KILN_DTYPE_F32, shared, l, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, mine, other));
  w.end_if(active);
  w.barrier();
  w.end_loop(step);
  const Id first = w.if_(w.binary(KILN_BINARY_EQ, KILN_DTYPE_BOOL, l, w.const_i64(0)));
  w.store(KILN_DTYPE_F32, out, g, w.load(KILN_DTYPE_F32, shared, w.const_i64(0)));
  w.end_if(first);
  k.ops = w.ops;
  k.checks = {{1, "group sums", {1e-5, 1e-5, 0}}};
  return k;
}

// REGISTER storage (a scalar accumulator and a 4-element array indexed by a
// loop counter), a LOOP with an IF inside:
//   out[i] = sum over k < 4 of (x[i] > 0 ? x[i] * k : 0) + r[3] - r[1]  (r[k] = k * k)
inline SuiteKernel register_loop_kernel(std::size_t n, std::mt19937_64& rng, std::int64_t local = kLocal) {
  SuiteKernel k;
  k.name = "register storage, loops and ifs";
  k.args = {random_arg(KILN_DTYPE_F32, n, rng), HostArg::poisoned(KILN_DTYPE_F32, n)};
  k.ops = elementwise(
      n,
      [&](WireBuilder& w) {
        w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
        w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, n);
        w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1);  // op 2
        w.storage(KILN_SCOPE_REGISTER, KILN_DTYPE_I32, 4);  // op 3
      },
      [&](WireBuilder& w, Id i) {
        const Id acc = 2, squares = 3;
        const Id zero = w.const_i64(0);
        const Id v = w.load(KILN_DTYPE_F32, 0, i);
        w.store(KILN_DTYPE_F32, acc, zero, w.const_f32(0));
        const Id loop = w.loop(w.const_i64(4));
        const Id k32 = w.cast(KILN_DTYPE_I32, loop);
        w.store(KILN_DTYPE_I32, squares, loop, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I32, k32, k32));
        const Id positive = w.if_(w.binary(KILN_BINARY_CMPGT, KILN_DTYPE_BOOL, v, w.const_f32(0)));
        const Id term = w.binary(KILN_BINARY_MUL, KILN_DTYPE_F32, v, w.cast(KILN_DTYPE_F32, loop));
        w.store(KILN_DTYPE_F32, acc, zero, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, acc, zero), term));
        w.end_if(positive);
        w.end_loop(loop);
        const Id diff = w.binary(KILN_BINARY_SUB, KILN_DTYPE_I32, w.load(KILN_DTYPE_I32, squares, w.const_i64(3)),
                                 w.load(KILN_DTYPE_I32, squares, w.const_i64(1)));
        w.store(KILN_DTYPE_F32, 1, i,
                w.binary(KILN_BINARY_ADD, KILN_DTYPE_F32, w.load(KILN_DTYPE_F32, acc, zero), w.cast(KILN_DTYPE_F32, diff)));
      },
      local);
  k.checks = {{1, "accumulated", {1e-6, 1e-6, 0}}};
  return k;
}

// A 3-D grid (8x8 threads per group on axes 0 and 1, 2 groups on axis 2)
// whose group counts are expressions over VARIABLE params, and scalar
// params of f16 and bool: out[z][y][x] = flag ? a * s : a, for x < W, y < H.
// i64 index arithmetic whose intermediate values pass 2^32 while the
// indices it ends in are small: big = i * c (c about 2^33 / n, itself and
// i within 32 bits), y[i] = x[big / c] (clamped into the buffer, so that
// arithmetic done in 32 bits gives wrong values, not a fault) and
// z[i] = (big + 12345) % c + ((i + 1000) >> 40), i.e. 12345. A backend that declares values in
// a narrower type where their range allows (the CUDA and OpenCL dialects:
// Dialect::index32_type) must still compute these in 64 bits.
inline SuiteKernel wide_index_kernel(std::size_t n, std::mt19937_64& rng, std::int64_t local = kLocal) {
  SuiteKernel k;
  k.name = "i64 index arithmetic past 2^32";
  k.args = {random_arg(KILN_DTYPE_F32, n, rng), HostArg::poisoned(KILN_DTYPE_F32, n), HostArg::poisoned(KILN_DTYPE_F32, n)};
  const std::int64_t c = ((std::int64_t{1} << 33) / static_cast<std::int64_t>(std::max<std::size_t>(n, 4))) | 1;
  Id x = 0, y = 0, z = 0;
  k.ops = elementwise(
      n,
      [&](WireBuilder& w) {
        x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
        y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, n);
        z = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, n);
      },
      [&](WireBuilder& w, Id i) {
        const Id cv = w.const_i64(c);
        const Id big = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, i, cv);
        const Id back = w.binary(KILN_BINARY_DIV, KILN_DTYPE_I64, big, cv);
        const Id last = w.const_i64(static_cast<std::int64_t>(n) - 1);
        const Id clamped = w.binary(KILN_BINARY_MIN, KILN_DTYPE_I64,
                                    w.binary(KILN_BINARY_MAX, KILN_DTYPE_I64, back, w.const_i64(0)), last);
        w.store(KILN_DTYPE_F32, y, i, w.load(KILN_DTYPE_F32, x, clamped));
        const Id rest = w.binary(KILN_BINARY_MOD, KILN_DTYPE_I64,
                                 w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, big, w.const_i64(12345)), cv);
        // (i + 1000) >> 40 is 0 in i64, (i + 1000) >> 8 if the shift went 32-bit
        // (amounts are taken modulo the width).
        const Id gone = w.binary(KILN_BINARY_SHR, KILN_DTYPE_I64, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, i, w.const_i64(1000)),
                                 w.const_i64(40));
        w.store(KILN_DTYPE_F32, z, i, w.cast(KILN_DTYPE_F32, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, rest, gone)));
      },
      local);
  k.checks = {{1, "x[i * c / c]", {}}, {2, "(i * c + 12345) % c + ((i + 1000) >> 40)", {}}};
  return k;
}

inline SuiteKernel grid_3d_kernel(std::int64_t width, std::int64_t height, std::mt19937_64& rng) {
  const std::int64_t depth = 2;
  const std::size_t n = static_cast<std::size_t>(width * height * depth);
  SuiteKernel k;
  k.name = "3-D grid with variable params";
  k.args = {random_arg(KILN_DTYPE_F32, n, rng), HostArg::poisoned(KILN_DTYPE_F32, n),
            HostArg::value(KILN_DTYPE_I64, static_cast<std::uint64_t>(width)),
            HostArg::value(KILN_DTYPE_I64, static_cast<std::uint64_t>(height)),
            HostArg::value(KILN_DTYPE_F16, sdk::f32_to_f16_bits(1.5f)), HostArg::value(KILN_DTYPE_BOOL, 1)};
  WireBuilder w;
  const Id in = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  const Id out = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, n);
  const Id wv = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 2);
  const Id hv = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_I64, 3);
  const Id sv = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_F16, 4);
  const Id flag = w.param(KILN_PARAM_VARIABLE, KILN_DTYPE_BOOL, 5);
  const Id seven = w.const_i64(7), eight = w.const_i64(8);
  const Id gx_len = w.binary(KILN_BINARY_DIV, KILN_DTYPE_I64, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, wv, seven), eight);
  const Id gy_len = w.binary(KILN_BINARY_DIV, KILN_DTYPE_I64, w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, hv, seven), eight);
  const Id gx = w.group_index(0, gx_len);
  const Id gy = w.group_index(1, gy_len);
  const Id gz = w.group_index(2, w.const_i64(depth));
  const Id lx = w.local_index(0, eight);
  const Id ly = w.local_index(1, eight);
  const Id xi = w.mad(KILN_DTYPE_I64, gx, eight, lx);
  const Id yi = w.mad(KILN_DTYPE_I64, gy, eight, ly);
  const Id inside = w.binary(KILN_BINARY_AND, KILN_DTYPE_BOOL, w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, xi, wv),
                             w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, yi, hv));
  const Id guard = w.if_(inside);
  const Id row = w.mad(KILN_DTYPE_I64, gz, hv, yi);
  const Id idx = w.mad(KILN_DTYPE_I64, row, wv, xi);
  const Id v = w.load(KILN_DTYPE_F32, in, idx);
  const Id scaled = w.binary(KILN_BINARY_MUL, KILN_DTYPE_F32, v, w.cast(KILN_DTYPE_F32, sv));
  w.store(KILN_DTYPE_F32, out, idx, w.select(KILN_DTYPE_F32, flag, scaled, v));
  w.end_if(guard);
  k.ops = w.ops;
  k.checks = {{1, "scaled", {}}};
  return k;
}

}  // namespace suite_detail

// The whole suite for a device's capabilities and work-group limits, `n`
// elements per elementwise kernel (odd sizes exercise the IF guard).
inline std::vector<SuiteKernel> kernel_suite(const kiln_device_info& info, std::size_t n, unsigned seed = 1) {
  using namespace suite_detail;
  std::mt19937_64 rng(seed);
  std::vector<SuiteKernel> suite = op_kernels(info, n, rng);
  for (unsigned from = KILN_DTYPE_BF16; from < KILN_DTYPE_COUNT; ++from)
    if (has_dtype(info, from)) suite.push_back(cast_kernel(info, static_cast<std::uint8_t>(from), n, rng));
  for (std::uint8_t lanes : {2, 4, 8})
    if (info.vector_widths & (1u << lanes))
      for (std::uint8_t dt : {KILN_DTYPE_F32, KILN_DTYPE_I32, KILN_DTYPE_F16})
        if (has_dtype(info, dt)) suite.push_back(vector_kernel(dt, lanes, n / lanes, rng, elementwise_local(info)));
  const bool any_index = sdk::has_feature(info, KILN_FEATURE_UNALIGNED_VECTORS);
  if (any_index || sdk::has_feature(info, KILN_FEATURE_UNALIGNED_VECTOR_LOADS)) {
    for (std::uint8_t lanes : {2, 4, 8, 16}) {
      if ((info.vector_widths & (1u << lanes)) == 0 || (any_index && lanes == 2)) continue;
      for (std::uint8_t dt : {KILN_DTYPE_F32, KILN_DTYPE_F16})
        if (has_dtype(info, dt))
          suite.push_back(unaligned_vector_kernel(dt, lanes, n / lanes, rng, elementwise_local(info), any_index));
    }
  }
  suite.push_back(local_reduction_kernel(n, rng));
  suite.push_back(register_loop_kernel(n, rng, elementwise_local(info)));
  suite.push_back(grid_3d_kernel(37, 23, rng));
  suite.push_back(wide_index_kernel(n, rng, elementwise_local(info)));
  return suite;
}

// The workload kernels of the GPU perf probe (wire_kernels.hpp, probe::) at
// sizes the interpreter checks quickly: `n` elements (a multiple of 1024),
// `rows` rows of 2048, an `size`^3 matmul (a multiple of 128).
inline std::vector<SuiteKernel> probe_suite(std::int64_t n = 8192, std::int64_t rows = 37, std::int64_t size = 128,
                                            unsigned seed = 1) {
  std::mt19937_64 rng(seed);
  auto floats = [&](std::int64_t count) { return random_arg(KILN_DTYPE_F32, static_cast<std::size_t>(count), rng, -1, 1); };
  auto empty = [](std::int64_t count) { return HostArg::poisoned(KILN_DTYPE_F32, static_cast<std::size_t>(count)); };
  const std::int64_t cols = 2048;
  std::vector<SuiteKernel> out;
  out.push_back({"probe add", probe::add(n), {floats(n), floats(n), empty(n)}, {{2, "c", {}}}});
  // exp may differ by an ulp or two between libms, and e * 2 + 1 may be fused.
  out.push_back({"probe exp chain", probe::exp_chain(n), {floats(n), empty(n)}, {{1, "y", {1e-6, 1e-6, 0}}}});
  out.push_back({"probe sum rows", probe::sum_rows(rows, cols), {floats(rows * cols), empty(rows)},
                 {{1, "sums", {1e-5, 1e-5, 0}}}});
  out.push_back({"probe tiled matmul", probe::matmul(size), {floats(size * size), floats(size * size), empty(size * size)},
                 {{2, "C", {1e-5, 1e-5, 0}}}});
  return out;
}

// Capabilities that include everything the IR defines (for compiling the
// suite where no device can be asked).
inline kiln_device_info full_capabilities(std::uint32_t (*dtype_ops)(unsigned), std::uint32_t vector_widths) {
  kiln_device_info info{};
  info.struct_size = KILN_DEVICE_INFO_STRUCT_SIZE;
  for (unsigned dt = KILN_DTYPE_BF16; dt < KILN_DTYPE_COUNT; ++dt) sdk::set_dtype_caps(info, dt, dtype_ops(dt));
  sdk::normalize_capabilities(info);
  info.vector_widths = vector_widths;
  return info;
}

// ---------------------------------------------------------------- running --

// One line per checked output of `got` that is not close enough to
// `expected` (at most a few elements each); empty when everything matches.
inline std::vector<std::string> compare_suite_outputs(const SuiteKernel& kernel, const std::vector<HostArg>& got,
                                                      const std::vector<HostArg>& expected) {
  std::vector<std::string> problems;
  for (const SuiteCheck& c : kernel.checks)
    if (auto problem = difference(c.what, got[c.arg], expected[c.arg], c.tolerance))
      problems.push_back(kernel.name + ": " + *problem);
  return problems;
}

// Runs `kernel` once on the plugin and once on the reference interpreter;
// returns the differences (compare_suite_outputs). Throws AbiError when the
// plugin fails.
inline std::vector<std::string> run_suite_kernel(const AbiPlugin& plugin, kiln_device* device, const SuiteKernel& kernel) {
  std::vector<HostArg> got = kernel.args;
  run_kernel(plugin, device, kernel.ops, got);
  return compare_suite_outputs(kernel, got, interpreted(kernel.ops, kernel.args));
}

}  // namespace kiln::conformance
