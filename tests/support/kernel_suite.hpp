// tests/support/kernel_suite.hpp - hand-built wire kernels that together use
// every op kind, every UNARY/BINARY op a device offers on every dtype, every
// CAST pair, vectors, LOCAL storage with barriers, REGISTER storage, loops,
// ifs, VARIABLE params and 3-D grids; each with random inputs and the
// outputs the host reference (scalar_reference.hpp) expects.
//
// Device plugins (OpenCL, CUDA) run them through the ABI (run_suite_kernel);
// the CUDA tests also compile them with NVRTC alone where there is no GPU.
#pragma once

#include "support/scalar_reference.hpp"
#include "support/wire_builder.hpp"

#include <kiln/plugin.h>
#include <kiln/sdk/wire.hpp>

#include <bit>
#include <functional>
#include <string>
#include <vector>

namespace kiln::test {

struct SuiteArg {
  bool scalar = false;
  std::uint8_t dtype = 0;
  HostArray data;                // buffers: initial contents
  std::uint64_t scalar_bits = 0;  // scalars
};

struct SuiteCheck {
  std::size_t arg = 0;  // which argument holds the result
  std::string what;     // e.g. "exp f16"
  HostArray expected;
  double rtol = 0;
  double atol = 0;
};

struct SuiteKernel {
  std::string name;
  std::vector<kiln_op> ops;
  std::vector<SuiteArg> args;
  std::vector<SuiteCheck> checks;
};

namespace suite_detail {

using Id = WireBuilder::Id;
constexpr std::int64_t kLocal = 64;

inline bool has_unary(const kiln_device_info& info, unsigned dt, unsigned u) {
  return (info.dtype_ops[dt] & KILN_CAP_UNARY(u)) != 0;
}
inline bool has_binary(const kiln_device_info& info, unsigned dt, unsigned b) {
  return (info.dtype_ops[dt] & KILN_CAP_BINARY(b)) != 0;
}

// Tolerances: exact ops must match bit for bit; the others (and anything on
// f16/bf16 whose f32 result may round the other way) within a few ulps.
struct Tolerance {
  double rtol = 0, atol = 0;
};
inline Tolerance tolerance(unsigned dt, bool exact) {
  if (exact) return {};
  switch (dt) {
    case KILN_DTYPE_F16: return {2.0 / 1024, 1e-4};
    case KILN_DTYPE_BF16: return {2.0 / 128, 1e-3};
    case KILN_DTYPE_F64: return {1e-12, 1e-13};
    default: return {4e-6, 1e-6};
  }
}
inline bool exact_unary(unsigned u) {
  return u == KILN_UNARY_NEG || u == KILN_UNARY_FLOOR || u == KILN_UNARY_TRUNC || u == KILN_UNARY_ABS ||
         u == KILN_UNARY_BIT_NOT;
}
inline bool exact_binary(unsigned b) {
  return b != KILN_BINARY_DIV && b != KILN_BINARY_POW;
}

// The common frame: params first, then i = group * 64 + local, and an IF
// (i < n) around the body, which `body(w, i)` writes.
inline std::vector<kiln_op> elementwise(std::size_t n, const std::function<void(WireBuilder&)>& params,
                                        const std::function<void(WireBuilder&, Id)>& body) {
  WireBuilder w;
  params(w);
  const Id len = w.const_i64(static_cast<std::int64_t>((n + kLocal - 1) / kLocal));
  const Id g = w.group_index(0, len);
  const Id l = w.local_index(0, w.const_i64(kLocal));
  const Id i = w.mad(KILN_DTYPE_I64, g, w.const_i64(kLocal), l);
  const Id inside = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, i, w.const_i64(static_cast<std::int64_t>(n))));
  body(w, i);
  w.end_if(inside);
  return w.ops;
}

inline SuiteArg buffer(HostArray data) {
  SuiteArg a;
  a.dtype = data.dtype;
  a.data = std::move(data);
  return a;
}

// Outputs start as a pattern no op produces by chance everywhere.
inline HostArray poisoned(std::uint8_t dt, std::size_t n) {
  HostArray a(dt, n);
  for (auto& b : a.bytes) b = 0xA5;
  return a;
}

// Sets every 5th y to x (so EQ/NOT_EQ see both answers), keeping `nonzero`.
inline void share_some(const HostArray& x, HostArray& y, bool nonzero) {
  for (std::size_t k = 0; k < x.size(); k += 5) {
    const Scalar s = x.get(k);
    if (nonzero && (is_float(x.dtype) ? s.f == 0 : s.i == 0)) continue;
    y.set(k, s);
  }
}

// One output per UNARY/BINARY op in `unary`/`binary`, plus MAD and SELECT.
inline SuiteKernel op_kernel(const std::string& name, std::uint8_t dt, const std::vector<unsigned>& unary,
                             const std::vector<unsigned>& binary, HostArray x, HostArray y, bool with_mad_select) {
  const std::size_t n = x.size();
  SuiteKernel k;
  k.name = name;
  k.args.push_back(buffer(x));
  k.args.push_back(buffer(y));
  struct Out {
    std::string what;
    std::function<Scalar(Scalar, Scalar)> ref;
    std::uint8_t dtype;
    bool exact;
    std::function<Id(WireBuilder&, Id, Id)> emit;
  };
  std::vector<Out> outs;
  for (unsigned u : unary)
    outs.push_back({std::string(sdk::unary_name(u)), [=](Scalar a, Scalar) { return unary_ref(u, dt, a); }, dt,
                    exact_unary(u), [=](WireBuilder& w, Id a, Id) { return w.unary(static_cast<std::uint8_t>(u), dt, a); }});
  for (unsigned b : binary)
    outs.push_back({std::string(sdk::binary_name(b)), [=](Scalar a, Scalar c) { return binary_ref(b, dt, a, c); },
                    static_cast<std::uint8_t>(binary_result_dtype(b, dt)), exact_binary(b),
                    [=](WireBuilder& w, Id a, Id c) {
                      return w.binary(static_cast<std::uint8_t>(b), static_cast<std::uint8_t>(binary_result_dtype(b, dt)), a, c);
                    }});
  if (with_mad_select) {
    // a * b + a * b: no cancellation, so fused and unfused agree closely.
    outs.push_back({"mad",
                    [=](Scalar a, Scalar c) {
                      const Scalar p = binary_ref(KILN_BINARY_MUL, dt, a, c);
                      if (is_float(dt)) { Scalar r; r.f = round_to(dt, p.f + p.f); return r; }
                      return binary_ref(KILN_BINARY_ADD, dt, p, p);
                    },
                    dt, !is_float(dt),
                    [=](WireBuilder& w, Id a, Id c) { return w.mad(dt, a, c, w.binary(KILN_BINARY_MUL, dt, a, c)); }});
    outs.push_back({"select",
                    [=](Scalar a, Scalar c) { return binary_ref(KILN_BINARY_CMPLT, dt, a, c).i ? a : c; }, dt, true,
                    [=](WireBuilder& w, Id a, Id c) {
                      return w.select(dt, w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, a, c), a, c);
                    }});
  }
  for (const Out& o : outs) k.args.push_back(buffer(poisoned(o.dtype, n)));
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
      });
  for (std::size_t j = 0; j < outs.size(); ++j) {
    SuiteCheck c;
    c.arg = 2 + j;
    c.what = outs[j].what + " " + std::string(sdk::dtype_name(dt));
    c.expected = HostArray(outs[j].dtype, n);
    for (std::size_t e = 0; e < n; ++e) c.expected.set(e, outs[j].ref(x.get(e), y.get(e)));
    const Tolerance t = tolerance(dt, outs[j].exact);
    c.rtol = t.rtol;
    c.atol = t.atol;
    k.checks.push_back(std::move(c));
  }
  return k;
}

inline std::vector<SuiteKernel> op_kernels(const kiln_device_info& info, std::size_t n, std::mt19937_64& rng) {
  std::vector<SuiteKernel> out;
  for (unsigned dt = KILN_DTYPE_BF16; dt < KILN_DTYPE_COUNT; ++dt) {
    if (info.dtype_ops[dt] == 0) continue;
    const auto d = static_cast<std::uint8_t>(dt);
    const std::string dn(sdk::dtype_name(dt));
    if (is_float(dt)) {
      // General domain: everything but the ops that need positive inputs.
      std::vector<unsigned> unary, binary, positive_unary;
      for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u) {
        if (!has_unary(info, dt, u)) continue;
        const bool positive = u == KILN_UNARY_LN || u == KILN_UNARY_LOG2 || u == KILN_UNARY_SQRT || u == KILN_UNARY_RECIP;
        (positive ? positive_unary : unary).push_back(u);
      }
      for (unsigned b = 1; b < KILN_BINARY_COUNT; ++b)
        if (has_binary(info, dt, b) && b != KILN_BINARY_POW) binary.push_back(b);
      HostArray x = random_array(d, n, rng, -4, 4);
      HostArray y = random_array(d, n, rng, -4, 4, true);
      share_some(x, y, true);
      out.push_back(op_kernel("ops " + dn, d, unary, binary, x, y, true));
      // Positive domain: ln, log2, sqrt, recip, and pow with a moderate exponent.
      std::vector<unsigned> positive_binary;
      if (has_binary(info, dt, KILN_BINARY_POW)) positive_binary.push_back(KILN_BINARY_POW);
      out.push_back(op_kernel("ops " + dn + " (positive)", d, positive_unary, positive_binary,
                              random_array(d, n, rng, 0.125, 8), random_array(d, n, rng, -3, 3), false));
    } else {
      std::vector<unsigned> unary, binary;
      for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u)
        if (has_unary(info, dt, u)) unary.push_back(u);
      for (unsigned b = 1; b < KILN_BINARY_COUNT; ++b)
        if (has_binary(info, dt, b)) binary.push_back(b);
      const bool divides = has_binary(info, dt, KILN_BINARY_DIV) || has_binary(info, dt, KILN_BINARY_MOD);
      HostArray x = random_array(d, n, rng);
      HostArray y = random_array(d, n, rng, 0, 0, divides && dt != KILN_DTYPE_BOOL);
      share_some(x, y, divides && dt != KILN_DTYPE_BOOL);
      if (sdk::dtype_is_signed_int(dt) && n > 1) {  // MIN / -1 wraps, MIN % -1 is 0
        Scalar min, minus_one;
        min.i = wrap(dt, std::uint64_t{1} << (bits_of(dt) - 1));
        minus_one.i = -1;
        x.set(1, min);
        y.set(1, minus_one);
      }
      out.push_back(op_kernel("ops " + dn, d, unary, binary, x, y, dt != KILN_DTYPE_BOOL));
    }
  }
  return out;
}

// Casts from one dtype to every dtype the device has.
inline SuiteKernel cast_kernel(const kiln_device_info& info, std::uint8_t from, std::size_t n, std::mt19937_64& rng) {
  // Float sources stay within every integer type's range (float -> int out
  // of range is undefined); some zeros for the casts to bool.
  HostArray x = is_float(from) ? random_array(from, n, rng, 0, 120) : random_array(from, n, rng);
  for (std::size_t e = 0; e < n; e += 7) x.set(e, Scalar{});
  std::vector<std::uint8_t> targets;
  for (unsigned to = KILN_DTYPE_BF16; to < KILN_DTYPE_COUNT; ++to)
    if (info.dtype_ops[to] != 0 && to != from) targets.push_back(static_cast<std::uint8_t>(to));
  SuiteKernel k;
  k.name = "casts from " + std::string(sdk::dtype_name(from));
  k.args.push_back(buffer(x));
  for (std::uint8_t to : targets) k.args.push_back(buffer(poisoned(to, n)));
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
      });
  for (std::size_t j = 0; j < targets.size(); ++j) {
    SuiteCheck c;
    c.arg = 1 + j;
    c.what = "cast " + std::string(sdk::dtype_name(from)) + " -> " + std::string(sdk::dtype_name(targets[j]));
    c.expected = HostArray(targets[j], n);
    for (std::size_t e = 0; e < n; ++e) c.expected.set(e, cast_ref(from, targets[j], x.get(e)));
    // An integer may round twice on the host (int -> double -> float).
    const Tolerance t = tolerance(targets[j], !is_float(targets[j]) || is_float(from));
    c.rtol = t.rtol > 0 ? t.rtol : 0;
    if (is_float(targets[j]) && is_float(from) && sdk::dtype_bytes(targets[j]) < sdk::dtype_bytes(from))
      c.rtol = tolerance(targets[j], false).rtol;  // f64 -> f16 may round twice on either side
    c.atol = t.atol;
    k.checks.push_back(std::move(c));
  }
  return k;
}

// Vectors: out = select(a < b, insert(2 * (a + b), a[0], lane last), a) and
// lane 1 of a * b + (a + b) as a scalar, on `lanes`-wide loads and stores.
inline SuiteKernel vector_kernel(std::uint8_t dt, std::uint8_t lanes, std::size_t n_vectors, std::mt19937_64& rng) {
  const std::size_t n = n_vectors * lanes;
  HostArray x = random_array(dt, n, rng), y = random_array(dt, n, rng);
  SuiteKernel k;
  k.name = "vectors " + std::string(sdk::dtype_name(dt)) + "x" + std::to_string(lanes);
  k.args = {buffer(x), buffer(y), buffer(poisoned(dt, n)), buffer(poisoned(dt, n_vectors))};
  Scalar two;
  two.f = 2;
  two.i = 2;
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
        HostArray two_bits(dt, 1);
        two_bits.set(0, two);
        std::uint64_t bits = 0;
        std::memcpy(&bits, two_bits.bytes.data(), two_bits.bytes.size());
        const Id twos = w.broadcast(dt, w.const_bits(dt, bits), lanes);
        const Id doubled = w.binary(KILN_BINARY_MUL, dt, sum, twos, lanes);
        const Id first = w.extract(dt, a, 0);
        const Id inserted = w.insert(dt, doubled, first, lanes - 1u, lanes);
        const Id less = w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, a, b, lanes);
        w.store(dt, 2, i, w.select(dt, less, inserted, a, lanes), lanes);
        const Id fused = w.mad(dt, a, b, sum, lanes);
        w.store(dt, 3, v, w.extract(dt, fused, 1));
      });
  SuiteCheck main_out{2, k.name + " select/insert", HostArray(dt, n)};
  SuiteCheck lane_out{3, k.name + " mad lane 1", HostArray(dt, n_vectors)};
  for (std::size_t v = 0; v < n_vectors; ++v) {
    for (unsigned lane = 0; lane < lanes; ++lane) {
      const std::size_t e = v * lanes + lane;
      const Scalar a = x.get(e), b = y.get(e);
      Scalar inserted = binary_ref(KILN_BINARY_MUL, dt, binary_ref(KILN_BINARY_ADD, dt, a, b), two);
      if (lane == lanes - 1u) inserted = x.get(v * lanes);
      main_out.expected.set(e, binary_ref(KILN_BINARY_CMPLT, dt, a, b).i ? inserted : a);
    }
    const Scalar a = x.get(v * lanes + 1), b = y.get(v * lanes + 1);
    const Scalar product = binary_ref(KILN_BINARY_MUL, dt, a, b);
    lane_out.expected.set(v, binary_ref(KILN_BINARY_ADD, dt, product, binary_ref(KILN_BINARY_ADD, dt, a, b)));
  }
  if (is_float(dt)) {
    main_out.rtol = 0;
    lane_out.rtol = tolerance(dt, false).rtol;
    lane_out.atol = 4 * tolerance(dt, false).rtol * 16;  // fused or not, near a cancellation
  }
  k.checks = {main_out, lane_out};
  return k;
}

// A tree reduction per work-group of 64 threads in LOCAL storage, with a
// BARRIER after each step: out[g] = sum of x[64g .. 64g+63].
inline SuiteKernel local_reduction_kernel(std::size_t n, std::mt19937_64& rng) {
  const std::size_t groups = (n + kLocal - 1) / kLocal;
  HostArray x = random_array(KILN_DTYPE_F32, n, rng, -1, 1);
  SuiteKernel k;
  k.name = "local tree reduction f32";
  k.args = {buffer(x), buffer(poisoned(KILN_DTYPE_F32, groups))};
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
  SuiteCheck c{1, "group sums", HostArray(KILN_DTYPE_F32, groups), 1e-5, 1e-5};
  for (std::size_t gi = 0; gi < groups; ++gi) {
    double sum = 0;
    for (std::size_t e = gi * kLocal; e < std::min(n, (gi + 1) * kLocal); ++e) sum += x.get(e).f;
    Scalar s;
    s.f = sum;
    c.expected.set(gi, s);
  }
  k.checks = {c};
  return k;
}

// REGISTER storage (a scalar accumulator and a 4-element array indexed by a
// loop counter), a LOOP with an IF inside:
//   out[i] = sum over k < 4 of (x[i] > 0 ? x[i] * k : 0) + r[3] - r[1]  (r[k] = k * k)
inline SuiteKernel register_loop_kernel(std::size_t n, std::mt19937_64& rng) {
  HostArray x = random_array(KILN_DTYPE_F32, n, rng);
  SuiteKernel k;
  k.name = "register storage, loops and ifs";
  k.args = {buffer(x), buffer(poisoned(KILN_DTYPE_F32, n))};
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
      });
  SuiteCheck c{1, "accumulated", HostArray(KILN_DTYPE_F32, n), 1e-6, 1e-6};
  for (std::size_t e = 0; e < n; ++e) {
    const float v = static_cast<float>(x.get(e).f);
    float acc = 0;
    for (int s = 0; s < 4; ++s)
      if (v > 0) acc += v * static_cast<float>(s);
    Scalar r;
    r.f = acc + 8.0f;
    c.expected.set(e, r);
  }
  k.checks = {c};
  return k;
}

// A 3-D grid (8x8 threads per group on axes 0 and 1, 2 groups on axis 2)
// whose group counts are expressions over VARIABLE params, and scalar
// params of f16 and bool: out[z][y][x] = flag ? a * s : a, for x < W, y < H.
inline SuiteKernel grid_3d_kernel(std::int64_t width, std::int64_t height, std::mt19937_64& rng) {
  const std::int64_t depth = 2;
  const std::size_t n = static_cast<std::size_t>(width * height * depth);
  HostArray x = random_array(KILN_DTYPE_F32, n, rng);
  const float scale = 1.5f;
  SuiteKernel k;
  k.name = "3-D grid with variable params";
  SuiteArg w_arg, h_arg, s_arg, flag_arg;
  w_arg.scalar = h_arg.scalar = s_arg.scalar = flag_arg.scalar = true;
  w_arg.dtype = h_arg.dtype = KILN_DTYPE_I64;
  w_arg.scalar_bits = static_cast<std::uint64_t>(width);
  h_arg.scalar_bits = static_cast<std::uint64_t>(height);
  s_arg.dtype = KILN_DTYPE_F16;
  s_arg.scalar_bits = sdk::f32_to_f16_bits(scale);
  flag_arg.dtype = KILN_DTYPE_BOOL;
  flag_arg.scalar_bits = 1;
  k.args = {buffer(x), buffer(poisoned(KILN_DTYPE_F32, n)), w_arg, h_arg, s_arg, flag_arg};
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
  SuiteCheck c{1, "scaled", HostArray(KILN_DTYPE_F32, n)};
  for (std::size_t e = 0; e < n; ++e) {
    Scalar r;
    r.f = static_cast<float>(x.get(e).f) * scale;
    c.expected.set(e, r);
  }
  k.checks = {c};
  return k;
}

}  // namespace suite_detail

// The whole suite for a device's capabilities, `n` elements per
// elementwise kernel (odd sizes exercise the IF guard).
inline std::vector<SuiteKernel> kernel_suite(const kiln_device_info& info, std::size_t n, unsigned seed = 1) {
  using namespace suite_detail;
  std::mt19937_64 rng(seed);
  std::vector<SuiteKernel> suite = op_kernels(info, n, rng);
  for (unsigned from = KILN_DTYPE_BF16; from < KILN_DTYPE_COUNT; ++from)
    if (info.dtype_ops[from] != 0) suite.push_back(cast_kernel(info, static_cast<std::uint8_t>(from), n, rng));
  for (std::uint8_t lanes : {2, 4, 8})
    if (info.vector_widths & (1u << lanes))
      for (std::uint8_t dt : {KILN_DTYPE_F32, KILN_DTYPE_I32, KILN_DTYPE_F16})
        suite.push_back(vector_kernel(dt, lanes, n / lanes, rng));
  suite.push_back(local_reduction_kernel(n, rng));
  suite.push_back(register_loop_kernel(n, rng));
  suite.push_back(grid_3d_kernel(37, 23, rng));
  return suite;
}

// Capabilities that include everything the IR defines (for compiling the
// suite where no device can be asked).
inline kiln_device_info full_capabilities(std::uint32_t (*dtype_ops)(unsigned), std::uint32_t vector_widths) {
  kiln_device_info info{};
  info.struct_size = KILN_DEVICE_INFO_STRUCT_SIZE;
  for (unsigned dt = KILN_DTYPE_BF16; dt < KILN_DTYPE_COUNT; ++dt) info.dtype_ops[dt] = dtype_ops(dt);
  info.vector_widths = vector_widths;
  return info;
}

}  // namespace kiln::test
