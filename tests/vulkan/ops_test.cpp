// Every op kind and dtype the device claims (kiln_device_info.dtype_ops),
// on random inputs, against the reference interpreter (the oracle).
#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"
#include "vulkan_fixture.hpp"

#include <random>
#include <sstream>

namespace kiln::test {
namespace {

using Id = WireBuilder::Id;
constexpr std::int64_t kN = 256;

// Random inputs: `a` of either sign, `b` positive / nonzero (a safe divisor,
// log argument and pow base).
struct Inputs {
  HostArg a, b;
};
Inputs random_inputs(unsigned dt, unsigned seed, std::size_t n = kN, double lo = -4.0, double hi = 4.0) {
  std::mt19937_64 rng(seed);
  const auto d = static_cast<std::uint8_t>(dt);
  Inputs in{HostArg::buffer(d, n), HostArg::buffer(d, n)};
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t a, b;
    if (sdk::dtype_is_float(dt)) {
      std::uniform_real_distribution<double> da(lo, hi), db(0.5, 4.0);
      a = float_bits(dt, da(rng));
      b = float_bits(dt, db(rng));
    } else {
      a = int_bits(dt, rng());
      b = int_bits(dt, rng());
      if (dt != KILN_DTYPE_BOOL) {
        if (i % 4 == 0) b &= 0xf;  // small shift counts and divisors too
        if (b == 0) b = 3;
        if (sdk::dtype_is_signed_int(dt) && sdk::int_from_bits(b, dt) == -1) b = 1;  // no MIN / -1
      }
    }
    in.a.set(i, a);
    in.b.set(i, b);
  }
  return in;
}

// Within `ulps` units of the result's magnitude (GPU approximations) plus `abs`.
Tolerance ulps(unsigned dt, double count, double abs = 0) {
  const double eps = dt == KILN_DTYPE_F64   ? 0x1p-52
                     : dt == KILN_DTYPE_F32 ? 0x1p-23
                     : dt == KILN_DTYPE_F16 ? 0x1p-10
                                            : 0x1p-7;
  return {count * eps, abs, 0};
}

Tolerance tolerance_for(unsigned kind, unsigned code, unsigned dt) {
  if (!sdk::dtype_is_float(dt)) return {};
  const bool half = dt == KILN_DTYPE_F16 || dt == KILN_DTYPE_BF16;
  if (kind == KILN_OP_UNARY) {
    switch (code) {
      case KILN_UNARY_NEG: case KILN_UNARY_FLOOR: case KILN_UNARY_TRUNC: case KILN_UNARY_ABS: return {};
      case KILN_UNARY_RECIP: case KILN_UNARY_SQRT: return ulps(dt, 3);
      default: return ulps(dt, half ? 2.0 : 1e-4 / 0x1p-23, 1e-4);  // transcendental: GPU approximations
    }
  }
  if (kind == KILN_OP_BINARY) {
    switch (code) {
      case KILN_BINARY_DIV: return ulps(dt, 3);
      case KILN_BINARY_POW: return ulps(dt, half ? 2.0 : 1e-4 / 0x1p-23, 1e-4);
      case KILN_BINARY_MOD: return ulps(dt, 2, 1e-5);  // x - y*trunc(x/y): error of one product
      default: return {};
    }
  }
  if (kind == KILN_OP_MAD) return ulps(dt, 2, 1e-6);  // fused or not
  return {};
}

std::string op_name(unsigned kind, unsigned code) {
  if (kind == KILN_OP_UNARY) return std::string(sdk::unary_name(code));
  if (kind == KILN_OP_BINARY) return std::string(sdk::binary_name(code));
  return std::string(sdk::op_kind_name(kind));
}

// `row` of `rows` rows of kN elements.
HostArg row_of(const HostArg& rows, std::int64_t row) {
  HostArg out = HostArg::buffer(rows.dtype, kN);
  const std::size_t size = out.bytes.size();
  std::memcpy(out.bytes.data(), rows.bytes.data() + static_cast<std::size_t>(row) * size, size);
  return out;
}

// Runs `ops` on the device and on the interpreter (grid of `groups` groups)
// and returns (device, interpreter) arguments.
std::pair<std::vector<HostArg>, std::vector<HostArg>> run_both(const AbiPlugin& plugin, kiln_device* device,
                                                               const std::vector<kiln_op>& ops, std::vector<HostArg> args,
                                                               std::uint64_t groups) {
  const sdk::LaunchGrid grid{{groups, 1, 1}, {1, 1, 1}};
  std::vector<HostArg> want = interpreted(ops, args, &grid);
  run_kernel(plugin, device, ops, args, grid);
  return {std::move(args), std::move(want)};
}

class VulkanOpsTest : public VulkanTest, public ::testing::WithParamInterface<unsigned> {
 protected:
  // bool vectors: (x ? y : !y) and (x && y), lane by lane.
  void check_bool_vectors() {
    const auto b = static_cast<std::uint8_t>(KILN_DTYPE_BOOL);
    for (std::uint8_t lanes : {2, 3, 4}) {
      const std::int64_t groups = kN / 4;
      const Inputs in = random_inputs(KILN_DTYPE_BOOL, 400 + lanes, static_cast<std::size_t>(groups * lanes));
      WireBuilder w;
      const Id pa = w.param(KILN_PARAM_GLOBAL, b, 0), pb = w.param(KILN_PARAM_GLOBAL, b, 1);
      const Id eq = w.param(KILN_PARAM_GLOBAL_MUT, b, 2), both = w.param(KILN_PARAM_GLOBAL_MUT, b, 3);
      const Id g = w.group_index(0, w.const_i64(groups));
      const Id base = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(lanes));
      const Id x = w.load(b, pa, base, lanes), y = w.load(b, pb, base, lanes);
      w.store(b, eq, base, w.select(b, x, y, w.unary(KILN_UNARY_BIT_NOT, b, y, lanes), lanes), lanes);
      w.store(b, both, base, w.binary(KILN_BINARY_AND, b, x, y, lanes), lanes);
      const std::size_t n = in.a.count();
      const auto [got, want] = run_both(*plugin, device, w.ops,
                                        {in.a, in.b, HostArg::poisoned(b, n), HostArg::poisoned(b, n)},
                                        static_cast<std::uint64_t>(groups));
      for (std::size_t slot : {2, 3})
        if (auto problem = difference(std::to_string(lanes) + " lanes, output " + std::to_string(slot), got[slot],
                                      want[slot], {}))
          ADD_FAILURE() << *problem;
    }
  }
};

TEST_P(VulkanOpsTest, ElementwiseOpsMatchTheInterpreter) {
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
  auto out_value = [&](Id v, unsigned kind, unsigned code) {
    w.store(d, vals, w.mad(KILN_DTYPE_I64, w.const_i64(n_vals++), n, i), v);
    checks.push_back({kind, code, false});
  };
  for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u) {
    if (!sdk::has_unary(info, dt, u)) continue;  // the 1.1 arrays: the math ops from tanh on have no 1.0 bit
    const bool positive = u == KILN_UNARY_LN || u == KILN_UNARY_LOG2 || u == KILN_UNARY_SQRT || u == KILN_UNARY_RECIP ||
                          u == KILN_UNARY_RSQRT || u == KILN_UNARY_LOG1P;
    out_value(w.unary(u, d, positive ? b : a), KILN_OP_UNARY, u);
  }
  for (unsigned op = 1; op < KILN_BINARY_COUNT; ++op) {
    if (!(caps & KILN_CAP_BINARY(op))) continue;
    if (sdk::binary_is_comparison(op)) {
      if (!bools) continue;
      w.store(KILN_DTYPE_BOOL, flags, w.mad(KILN_DTYPE_I64, w.const_i64(n_flags++), n, i),
              w.binary(op, KILN_DTYPE_BOOL, a, b));
      checks.push_back({KILN_OP_BINARY, op, true});
      continue;
    }
    const bool swap = op == KILN_BINARY_POW;  // pow(b, a): a positive base
    out_value(swap ? w.binary(op, d, b, a) : w.binary(op, d, a, b), KILN_OP_BINARY, op);
  }
  if (dt != KILN_DTYPE_BOOL) out_value(w.mad(d, a, b, a), KILN_OP_MAD, 0);
  if (bools) {
    const Id cond = dt == KILN_DTYPE_BOOL ? a : w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, a, b);
    out_value(w.select(d, cond, b, a), KILN_OP_SELECT, 0);
  }

  std::vector<HostArg> args = {in.a, in.b,
                               HostArg::poisoned(d, static_cast<std::size_t>(std::max<std::int64_t>(n_vals, 1) * kN)),
                               HostArg::poisoned(KILN_DTYPE_BOOL, static_cast<std::size_t>(std::max<std::int64_t>(n_flags, 1) * kN))};
  const auto [got, want] = run_both(*plugin, device, w.ops, args, kN);
  std::int64_t vi = 0, fi = 0;
  for (const Check& c : checks) {
    const std::size_t slot = c.flag ? 3 : 2;
    const std::int64_t row = c.flag ? fi++ : vi++;
    const std::string what = std::string(sdk::op_kind_name(c.kind)) + " " + op_name(c.kind, c.code) + " " +
                             std::string(sdk::dtype_name(dt));
    const Tolerance t = c.flag ? Tolerance{} : tolerance_for(c.kind, c.code, dt);
    if (auto problem = difference(what, row_of(got[slot], row), row_of(want[slot], row), t)) ADD_FAILURE() << *problem;
  }
}

TEST_P(VulkanOpsTest, CastsToEveryDtypeMatchTheInterpreter) {
  const unsigned from = GetParam();
  if (info.dtype_ops[from] == 0) GTEST_SKIP() << sdk::dtype_name(from) << " is not supported";
  // Floats in [0, 120): within range of every integer target.
  const Inputs in = random_inputs(from, 200 + from, kN, 0.0, 120.0);
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
  std::vector<HostArg> args = {in.a};
  for (unsigned to : targets) args.push_back(HostArg::poisoned(static_cast<std::uint8_t>(to), kN));
  const auto [got, want] = run_both(*plugin, device, w.ops, args, kN);
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const std::string what = "cast " + std::string(sdk::dtype_name(from)) + " -> " + std::string(sdk::dtype_name(targets[t]));
    if (auto problem = difference(what, got[t + 1], want[t + 1], sdk::dtype_is_float(targets[t]) ? ulps(targets[t], 1) : Tolerance{}))
      ADD_FAILURE() << *problem;
  }
}

// Vectors of 2, 3 and 4 lanes: LOAD/STORE, whole-vector and per-lane ops,
// broadcast, insert, extract, select with a vector condition.
TEST_P(VulkanOpsTest, VectorsMatchTheInterpreter) {
  const unsigned dt = GetParam();
  if (info.dtype_ops[dt] == 0) GTEST_SKIP() << sdk::dtype_name(dt) << " is not supported";
  if (info.dtype_ops[KILN_DTYPE_BOOL] == 0) GTEST_SKIP() << "no bool on this device: vector conditions need it";
  if (dt == KILN_DTYPE_BOOL) return check_bool_vectors();
  const auto d = static_cast<std::uint8_t>(dt);
  for (std::uint8_t lanes : {2, 3, 4}) {
    SCOPED_TRACE(std::to_string(lanes) + " lanes");
    const std::int64_t groups = kN / 4;
    const Inputs in = random_inputs(dt, 300 + dt + lanes, static_cast<std::size_t>(groups * lanes));
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
    const std::size_t n = in.a.count();
    const auto [got, want] = run_both(*plugin, device, w.ops, {in.a, in.b, HostArg::poisoned(d, n), HostArg::poisoned(d, n)},
                                      static_cast<std::uint64_t>(groups));
    if (auto problem = difference("min", got[3], want[3], {})) ADD_FAILURE() << *problem;
    if (auto problem = difference("2 (a + b) with lane 0 of min inserted last", got[2], want[2], {})) ADD_FAILURE() << *problem;
  }
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, VulkanOpsTest, ::testing::Range(1u, static_cast<unsigned>(KILN_DTYPE_COUNT)),
                         [](const ::testing::TestParamInfo<unsigned>& p) { return std::string(sdk::dtype_name(p.param)); });

}  // namespace
}  // namespace kiln::test
