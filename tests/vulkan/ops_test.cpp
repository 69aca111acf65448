// Every op kind and dtype the device claims (kiln_device_info.dtype_ops),
// on random inputs, against the host reference (reference.hpp).
#include "kernel_runner.hpp"
#include "reference.hpp"
#include "support/wire_builder.hpp"
#include "vulkan_fixture.hpp"

#include <random>
#include <sstream>

namespace kiln::test {
namespace {

using Id = WireBuilder::Id;
constexpr std::int64_t kN = 256;

// Elements as raw bits, written in the dtype's memory layout.
std::vector<std::uint8_t> pack(unsigned dt, const std::vector<std::uint64_t>& bits) {
  const unsigned size = sdk::dtype_bytes(dt);
  std::vector<std::uint8_t> bytes(bits.size() * size);
  for (std::size_t i = 0; i < bits.size(); ++i) std::memcpy(&bytes[i * size], &bits[i], size);  // little endian
  return bytes;
}
std::vector<std::uint64_t> unpack(unsigned dt, const std::vector<std::uint8_t>& bytes) {
  const unsigned size = sdk::dtype_bytes(dt);
  std::vector<std::uint64_t> bits(bytes.size() / size, 0);
  for (std::size_t i = 0; i < bits.size(); ++i) std::memcpy(&bits[i], &bytes[i * size], size);
  return bits;
}

// Random inputs: `a` of either sign, `b` positive / nonzero (a safe divisor,
// log argument and pow base).
struct Inputs {
  std::vector<std::uint64_t> a, b;
};
Inputs random_inputs(unsigned dt, unsigned seed, double lo = -4.0, double hi = 4.0) {
  std::mt19937_64 rng(seed);
  Inputs in;
  for (std::int64_t i = 0; i < kN; ++i) {
    std::uint64_t a, b;
    if (ref::is_real(dt)) {
      std::uniform_real_distribution<double> da(lo, hi), db(0.5, 4.0);
      a = ref::from_double(dt, da(rng));
      b = ref::from_double(dt, db(rng));
    } else if (dt == KILN_DTYPE_BOOL) {
      a = rng() & 1;
      b = rng() & 1;
    } else {
      a = rng() & ref::mask(dt);
      b = rng() & ref::mask(dt);
      if (i % 4 == 0) b &= 0xf;  // small shift counts and divisors too
      if (b == 0) b = 3;
      if (sdk::dtype_is_signed_int(dt) && ref::to_signed(dt, b) == -1) b = 1;  // no MIN / -1
    }
    in.a.push_back(a);
    in.b.push_back(b);
  }
  return in;
}

struct Tolerance {
  double ulps = 0, abs = 0;
};
Tolerance tolerance_for(unsigned kind, unsigned code, unsigned dt) {
  if (!ref::is_real(dt)) return {};
  const bool half = dt == KILN_DTYPE_F16 || dt == KILN_DTYPE_BF16;
  if (kind == KILN_OP_UNARY) {
    switch (code) {
      case KILN_UNARY_NEG: case KILN_UNARY_FLOOR: case KILN_UNARY_TRUNC: case KILN_UNARY_ABS: return {};
      case KILN_UNARY_RECIP: case KILN_UNARY_SQRT: return {3, 0};
      default: return {half ? 2.0 : 1e-4 / 0x1p-23, 1e-4};  // transcendental: GPU approximations
    }
  }
  if (kind == KILN_OP_BINARY) {
    switch (code) {
      case KILN_BINARY_DIV: return {3, 0};
      case KILN_BINARY_POW: return {half ? 2.0 : 1e-4 / 0x1p-23, 1e-4};
      case KILN_BINARY_MOD: return {2, 1e-5};  // x - y*trunc(x/y): error of one product
      default: return {};
    }
  }
  if (kind == KILN_OP_MAD) return {2, 1e-6};  // fused or not
  return {};
}

class VulkanOpsTest : public VulkanTest, public ::testing::WithParamInterface<unsigned> {
 protected:
  // bool vectors: (x ? y : !y) and (x && y), lane by lane.
  void check_bool_vectors() {
    const auto b = static_cast<std::uint8_t>(KILN_DTYPE_BOOL);
    for (std::uint8_t lanes : {2, 3, 4}) {
      const std::int64_t groups = kN / 4;
      Inputs in = random_inputs(KILN_DTYPE_BOOL, 400 + lanes);
      in.a.resize(groups * lanes);
      in.b.resize(groups * lanes);
      WireBuilder w;
      const Id pa = w.param(KILN_PARAM_GLOBAL, b, 0), pb = w.param(KILN_PARAM_GLOBAL, b, 1);
      const Id eq = w.param(KILN_PARAM_GLOBAL_MUT, b, 2), both = w.param(KILN_PARAM_GLOBAL_MUT, b, 3);
      const Id g = w.group_index(0, w.const_i64(groups));
      const Id base = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(lanes));
      const Id x = w.load(b, pa, base, lanes), y = w.load(b, pb, base, lanes);
      w.store(b, eq, base, w.select(b, x, y, w.unary(KILN_UNARY_BIT_NOT, b, y, lanes), lanes), lanes);
      w.store(b, both, base, w.binary(KILN_BINARY_AND, b, x, y, lanes), lanes);
      std::vector<TestArg> args(4);
      args[0].bytes = pack(KILN_DTYPE_BOOL, in.a);
      args[1].bytes = pack(KILN_DTYPE_BOOL, in.b);
      args[2].bytes.assign(args[0].bytes.size(), 7);
      args[3].bytes.assign(args[0].bytes.size(), 7);
      run_kernel(*plugin, device, w.ops, args, {{static_cast<std::uint64_t>(groups), 1, 1}});
      for (std::size_t k = 0; k < in.a.size(); ++k) {
        ASSERT_EQ(args[2].bytes[k], in.a[k] == in.b[k] ? 1 : 0) << lanes << " lanes, at " << k;
        ASSERT_EQ(args[3].bytes[k], in.a[k] && in.b[k] ? 1 : 0) << lanes << " lanes, at " << k;
      }
    }
  }
};

TEST_P(VulkanOpsTest, ElementwiseOpsMatchTheHost) {
  const unsigned dt = GetParam();
  const std::uint32_t caps = info.dtype_ops[dt];
  if (caps == 0) GTEST_SKIP() << sdk::dtype_name(dt) << " is not supported by " << info.name;
  const bool bools = info.dtype_ops[KILN_DTYPE_BOOL] != 0;
  const auto d = static_cast<std::uint8_t>(dt);

  // One kernel per dtype: value results in `vals` at [k*n + i], comparison
  // results in `flags` at [j*n + i].
  struct Check {
    unsigned kind, code;
    bool flag;
    std::vector<std::uint64_t> want;
  };
  std::vector<Check> checks;
  const Inputs in = random_inputs(dt, 100 + dt);
  WireBuilder w;
  const Id pa = w.param(KILN_PARAM_GLOBAL, d, 0), pb = w.param(KILN_PARAM_GLOBAL, d, 1);
  const Id vals = w.param(KILN_PARAM_GLOBAL_MUT, d, 2);
  const Id flags = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_BOOL, 3);
  const Id n = w.const_i64(kN);
  const Id i = w.group_index(0, n);
  const Id a = w.load(d, pa, i), b = w.load(d, pb, i);
  std::int64_t n_vals = 0, n_flags = 0;
  auto out_value = [&](Id v, unsigned kind, unsigned code, auto&& f) {
    w.store(d, vals, w.mad(KILN_DTYPE_I64, w.const_i64(n_vals++), n, i), v);
    Check c{kind, code, false, {}};
    for (std::int64_t k = 0; k < kN; ++k) c.want.push_back(f(in.a[k], in.b[k]));
    checks.push_back(std::move(c));
  };
  for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u) {
    if (!(caps & KILN_CAP_UNARY(u))) continue;
    const bool positive = u == KILN_UNARY_LN || u == KILN_UNARY_LOG2 || u == KILN_UNARY_SQRT || u == KILN_UNARY_RECIP;
    out_value(w.unary(u, d, positive ? b : a), KILN_OP_UNARY, u,
              [&](auto x, auto y) { return ref::unary(u, dt, positive ? y : x); });
  }
  for (unsigned op = 1; op < KILN_BINARY_COUNT; ++op) {
    if (!(caps & KILN_CAP_BINARY(op))) continue;
    if (sdk::binary_is_comparison(op)) {
      if (!bools) continue;
      w.store(KILN_DTYPE_BOOL, flags, w.mad(KILN_DTYPE_I64, w.const_i64(n_flags++), n, i),
              w.binary(op, KILN_DTYPE_BOOL, a, b));
      Check c{KILN_OP_BINARY, op, true, {}};
      for (std::int64_t k = 0; k < kN; ++k) c.want.push_back(ref::binary(op, dt, in.a[k], in.b[k]));
      checks.push_back(std::move(c));
      continue;
    }
    const bool swap = op == KILN_BINARY_POW;  // pow(b, a): a positive base
    out_value(swap ? w.binary(op, d, b, a) : w.binary(op, d, a, b), KILN_OP_BINARY, op,
              [&](auto x, auto y) { return swap ? ref::binary(op, dt, y, x) : ref::binary(op, dt, x, y); });
  }
  if (dt != KILN_DTYPE_BOOL) {
    out_value(w.mad(d, a, b, a), KILN_OP_MAD, 0, [&](auto x, auto y) {
      return ref::binary(KILN_BINARY_ADD, dt, ref::binary(KILN_BINARY_MUL, dt, x, y), x);
    });
  }
  if (bools) {
    const Id cond = dt == KILN_DTYPE_BOOL ? a : w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, a, b);
    out_value(w.select(d, cond, b, a), KILN_OP_SELECT, 0, [&](auto x, auto y) {
      const bool c = dt == KILN_DTYPE_BOOL ? x != 0 : ref::binary(KILN_BINARY_CMPLT, dt, x, y) != 0;
      return c ? y : x;
    });
  }

  std::vector<TestArg> args(4);
  args[0].bytes = pack(dt, in.a);
  args[1].bytes = pack(dt, in.b);
  args[2].bytes.assign(static_cast<std::size_t>(std::max<std::int64_t>(n_vals, 1) * kN) * sdk::dtype_bytes(dt), 0);
  args[3].bytes.assign(static_cast<std::size_t>(std::max<std::int64_t>(n_flags, 1) * kN), 0);
  run_kernel(*plugin, device, w.ops, args, {{kN, 1, 1}});
  const auto got_vals = unpack(dt, args[2].bytes);
  const auto got_flags = unpack(KILN_DTYPE_BOOL, args[3].bytes);

  std::int64_t vi = 0, fi = 0;
  for (const Check& c : checks) {
    const std::int64_t row = c.flag ? fi++ : vi++;
    const Tolerance t = c.flag ? Tolerance{} : tolerance_for(c.kind, c.code, dt);
    int failures = 0;
    for (std::int64_t k = 0; k < kN && failures < 3; ++k) {
      const std::uint64_t got = (c.flag ? got_flags : got_vals)[row * kN + k];
      const bool ok = c.flag ? got == c.want[k] : ref::close(dt, got, c.want[k], t.ulps, t.abs);
      if (!ok) {
        ++failures;
        std::ostringstream what;
        what << sdk::op_kind_name(c.kind) << " "
             << (c.kind == KILN_OP_UNARY ? sdk::unary_name(c.code) : c.kind == KILN_OP_BINARY ? sdk::binary_name(c.code) : "")
             << " " << sdk::dtype_name(dt) << " at " << k << ": a=" << in.a[k] << " b=" << in.b[k];
        if (ref::is_real(dt) && !c.flag)
          what << " got " << ref::to_double(dt, got) << " want " << ref::to_double(dt, c.want[k]);
        else
          what << " got " << got << " want " << c.want[k];
        ADD_FAILURE() << what.str();
      }
    }
  }
}

TEST_P(VulkanOpsTest, CastsToEveryDtypeMatchTheHost) {
  const unsigned from = GetParam();
  if (info.dtype_ops[from] == 0) GTEST_SKIP() << sdk::dtype_name(from) << " is not supported";
  // Floats in [0, 120): within range of every integer target.
  const Inputs in = random_inputs(from, 200 + from, 0.0, 120.0);
  WireBuilder w;
  const Id pa = w.param(KILN_PARAM_GLOBAL, static_cast<std::uint8_t>(from), 0);
  std::vector<unsigned> targets;
  for (unsigned to = 1; to < KILN_DTYPE_COUNT; ++to)
    if (info.dtype_ops[to] != 0) targets.push_back(to);
  std::vector<Id> outs;
  for (std::size_t t = 0; t < targets.size(); ++t)
    outs.push_back(w.param(KILN_PARAM_GLOBAL_MUT, static_cast<std::uint8_t>(targets[t]), static_cast<std::uint32_t>(t + 1)));
  const Id i = w.group_index(0, w.const_i64(kN));
  const Id a = w.load(static_cast<std::uint8_t>(from), pa, i);
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const auto to = static_cast<std::uint8_t>(targets[t]);
    w.store(to, outs[t], i, w.cast(to, a));
  }
  std::vector<TestArg> args(targets.size() + 1);
  args[0].bytes = pack(from, in.a);
  for (std::size_t t = 0; t < targets.size(); ++t) args[t + 1].bytes.assign(kN * sdk::dtype_bytes(targets[t]), 0);
  run_kernel(*plugin, device, w.ops, args, {{kN, 1, 1}});
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const unsigned to = targets[t];
    const auto got = unpack(to, args[t + 1].bytes);
    for (std::int64_t k = 0; k < kN; ++k) {
      const std::uint64_t want = ref::cast(from, to, in.a[k]);
      ASSERT_TRUE(ref::close(to, got[k], want, 1, 0))
          << "cast " << sdk::dtype_name(from) << " -> " << sdk::dtype_name(to) << " at " << k << ": x=" << in.a[k]
          << " got " << got[k] << " want " << want;
    }
  }
}

// Vectors of 2, 3 and 4 lanes: LOAD/STORE, whole-vector and per-lane ops,
// broadcast, insert, extract, select with a vector condition.
TEST_P(VulkanOpsTest, VectorsMatchTheHost) {
  const unsigned dt = GetParam();
  if (info.dtype_ops[dt] == 0) GTEST_SKIP() << sdk::dtype_name(dt) << " is not supported";
  if (info.dtype_ops[KILN_DTYPE_BOOL] == 0) GTEST_SKIP() << "no bool on this device: vector conditions need it";
  if (dt == KILN_DTYPE_BOOL) return check_bool_vectors();
  const auto d = static_cast<std::uint8_t>(dt);
  for (std::uint8_t lanes : {2, 3, 4}) {
    SCOPED_TRACE(std::to_string(lanes) + " lanes");
    const std::int64_t groups = kN / 4;
    Inputs in = random_inputs(dt, 300 + dt + lanes);
    in.a.resize(groups * lanes);
    in.b.resize(groups * lanes);
    WireBuilder w;
    const Id pa = w.param(KILN_PARAM_GLOBAL, d, 0), pb = w.param(KILN_PARAM_GLOBAL, d, 1);
    const Id out = w.param(KILN_PARAM_GLOBAL_MUT, d, 2), out_min = w.param(KILN_PARAM_GLOBAL_MUT, d, 3);
    const Id g = w.group_index(0, w.const_i64(groups));
    const Id base = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(lanes));
    const Id va = w.load(d, pa, base, lanes), vb = w.load(d, pb, base, lanes);
    const Id sum = w.binary(KILN_BINARY_ADD, d, va, vb, lanes);
    const Id doubled = w.binary(KILN_BINARY_MUL, d, sum, w.broadcast(d, w.cast(d, w.const_i64(2)), lanes), lanes);
    const Id less = w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, va, vb, lanes);
    const Id min = w.select(d, less, va, vb, lanes);
    const Id mixed = w.insert(d, doubled, w.extract(d, min, 0), lanes - 1u, lanes);
    w.store(d, out, base, mixed, lanes);
    w.store(d, out_min, base, min, lanes);
    std::vector<TestArg> args(4);
    args[0].bytes = pack(dt, in.a);
    args[1].bytes = pack(dt, in.b);
    args[2].bytes.assign(args[0].bytes.size(), 0);
    args[3].bytes.assign(args[0].bytes.size(), 0);
    run_kernel(*plugin, device, w.ops, args, {{static_cast<std::uint64_t>(groups), 1, 1}});
    const auto got = unpack(dt, args[2].bytes), got_min = unpack(dt, args[3].bytes);
    const std::uint64_t two = ref::cast(KILN_DTYPE_I64, dt, 2);
    for (std::int64_t gi = 0; gi < groups; ++gi) {
      for (unsigned l = 0; l < lanes; ++l) {
        const std::size_t k = gi * lanes + l;
        const std::uint64_t x = in.a[k], y = in.b[k];
        const std::uint64_t m = ref::binary(KILN_BINARY_CMPLT, dt, x, y) ? x : y;
        ASSERT_EQ(got_min[k], m) << "min at " << k;
        std::uint64_t want = ref::binary(KILN_BINARY_MUL, dt, ref::binary(KILN_BINARY_ADD, dt, x, y), two);
        if (l == lanes - 1u) {
          const std::size_t k0 = gi * lanes;
          want = ref::binary(KILN_BINARY_CMPLT, dt, in.a[k0], in.b[k0]) ? in.a[k0] : in.b[k0];
        }
        ASSERT_TRUE(ref::close(dt, got[k], want, 0, 0)) << "at " << k << " got " << got[k] << " want " << want;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, VulkanOpsTest, ::testing::Range(1u, static_cast<unsigned>(KILN_DTYPE_COUNT)),
                         [](const ::testing::TestParamInfo<unsigned>& p) { return std::string(sdk::dtype_name(p.param)); });

}  // namespace
}  // namespace kiln::test
