// Every element op the C plugin claims (device_info.dtype_ops), on every
// dtype, as scalars and as vectors, on random inputs, against the reference
// interpreter (the oracle). One kernel per (dtype, lanes) computes all of
// them at once, so the suite compiles few objects.
#include <gtest/gtest.h>

#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"

#include <cmath>
#include <random>

namespace kiln::test {
namespace {

AbiPlugin& c_plugin() {
  static AbiPlugin plugin(plugin_path("c"));
  return plugin;
}

// ------------------------------------------------------------------ inputs --

std::uint64_t random_value(unsigned dt, std::mt19937_64& rng, double lo, double hi) {
  if (sdk::dtype_is_float(dt)) return float_bits(dt, std::uniform_real_distribution<double>(lo, hi)(rng));
  return int_bits(dt, rng());
}

// Values the ops accept: b and divisors away from 0, p positive (LN, SQRT,
// POW's base), and the integer edge cases (MIN, -1, MAX, 0) up front.
struct Inputs {
  HostArg a, b, c, p, cond;
};

Inputs make_inputs(unsigned dt, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Inputs in{HostArg::buffer(dt, n), HostArg::buffer(dt, n), HostArg::buffer(dt, n), HostArg::buffer(dt, n),
            HostArg::buffer(KILN_DTYPE_BOOL, n)};
  for (std::size_t i = 0; i < n; ++i) {
    in.a.set(i, random_value(dt, rng, -4, 4));
    std::uint64_t b = random_value(dt, rng, -4, 4);
    if (sdk::dtype_is_float(dt) && std::fabs(float_value(dt, b)) < 0.25) b = float_bits(dt, 0.5 + float_value(dt, b));
    if (!sdk::dtype_is_float(dt) && b == 0) b = 1;
    in.b.set(i, b);
    in.c.set(i, random_value(dt, rng, -4, 4));
    in.p.set(i, random_value(dt, rng, 0.125, 8));
    in.cond.set(i, rng() & 1);
  }
  if (sdk::dtype_is_int(dt)) {
    const unsigned bits = sdk::dtype_bytes(dt) * 8;
    const std::uint64_t min = sdk::dtype_is_signed_int(dt) ? std::uint64_t{1} << (bits - 1) : 0;
    const std::uint64_t all = int_bits(dt, ~std::uint64_t{0});
    const std::uint64_t edges[][2] = {{min, all}, {int_bits(dt, min - 1), 1}, {0, all}, {all, all}, {1, 2}};
    for (std::size_t i = 0; i < std::size(edges) && i < n; ++i) {
      in.a.set(i, edges[i][0]);
      in.b.set(i, edges[i][1]);
    }
  }
  return in;
}

// --------------------------------------------------------------- checking --

// Integers and f16/bf16 must match the interpreter exactly (a fused
// multiply-add may differ from its unfused MAD by one unit in the last
// place); f32/f64 within a few ulps (libm and libmvec differ slightly).
Tolerance tolerance(unsigned dt, bool fused) {
  if (dt == KILN_DTYPE_F32) return {1e-5, 0, 0};
  if (dt == KILN_DTYPE_F64) return {1e-12, 0, 0};
  return {0, 0, fused ? 1u : 0u};
}

// One checked result: which op it is and its output slot.
struct Case {
  std::string name;
  unsigned slot;
  unsigned dtype;   // result dtype
  bool fused = false;
};

// Runs `ops` on the plugin and on the interpreter and compares each case.
void run_and_check(const std::vector<kiln_op>& ops, std::vector<HostArg>& args, const std::vector<Case>& cases) {
  const std::vector<HostArg> want = interpreted(ops, args);
  AbiPlugin& plugin = c_plugin();
  const std::string source = run_kernel(plugin, plugin.open(0), ops, args);
  bool failed = false;
  for (const Case& c : cases)
    if (auto problem = difference(c.name, args[c.slot], want[c.slot], tolerance(c.dtype, c.fused))) {
      ADD_FAILURE() << *problem;
      failed = true;
    }
  if (failed) ADD_FAILURE() << "source:\n" << source;
}

// ---------------------------------------------------------- the batteries --

class COps : public ::testing::TestWithParam<std::tuple<unsigned, unsigned>> {};

std::string dtype_lanes(const ::testing::TestParamInfo<std::tuple<unsigned, unsigned>>& info) {
  return std::string(sdk::dtype_name(std::get<0>(info.param))) + "x" + std::to_string(std::get<1>(info.param));
}

// Loads a, b, c, p, cond at i (vectors of `lanes`), applies every op the
// device claims for dt, stores each into its own output buffer.
TEST_P(COps, EveryClaimedUnaryBinaryMadSelectMatchesTheInterpreter) {
  const auto [dt, lanes] = GetParam();
  AbiPlugin& plugin = c_plugin();
  const std::uint32_t claimed = plugin.info(0).dtype_ops[dt];
  ASSERT_NE(claimed, 0u) << "dtype " << sdk::dtype_name(dt) << " unsupported";
  const std::size_t n = 96;
  Inputs in = make_inputs(dt, n, 1000 + dt * 10 + lanes);
  std::vector<HostArg> args = {in.a, in.b, in.c, in.p, in.cond};
  std::vector<Case> cases;

  WireBuilder w;
  const auto L = static_cast<std::uint8_t>(lanes);
  std::vector<WireBuilder::Id> mem;
  for (unsigned slot = 0; slot < 5; ++slot)
    mem.push_back(w.param(KILN_PARAM_GLOBAL, args[slot].dtype, slot, n));
  const auto g = w.group_index(0, w.const_i64(static_cast<std::int64_t>(n / lanes)));
  const auto i = lanes == 1 ? g : w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(lanes));
  const auto a = w.load(dt, mem[0], i, L), b = w.load(dt, mem[1], i, L), c = w.load(dt, mem[2], i, L);
  const auto p = w.load(dt, mem[3], i, L), cond = w.load(KILN_DTYPE_BOOL, mem[4], i, L);

  std::vector<std::pair<WireBuilder::Id, unsigned>> results;  // value op, result dtype
  auto output = [&](WireBuilder::Id value, unsigned result_dt, std::string name, bool fused = false) {
    const unsigned slot = static_cast<unsigned>(args.size());
    args.push_back(HostArg::poisoned(static_cast<std::uint8_t>(result_dt), n));
    results.emplace_back(value, result_dt);
    cases.push_back({std::move(name), slot, result_dt, fused});
  };
  // The claims as ABI 1.1 states them (the 1.0 word has no bit for the
  // math ops from tanh on). Those are computed in double by the interpreter
  // and in float by libm here: f16/bf16 may round one ulp apart.
  for (unsigned u = 1; u < KILN_UNARY_COUNT; ++u) {
    if (!sdk::has_unary(plugin.info(0), dt, u)) continue;
    const bool positive = u == KILN_UNARY_LN || u == KILN_UNARY_LOG2 || u == KILN_UNARY_SQRT ||
                          u == KILN_UNARY_RSQRT || u == KILN_UNARY_LOG1P;
    output(w.unary(static_cast<std::uint8_t>(u), dt, positive ? p : a, L), dt, std::string(sdk::unary_name(u)),
           u >= KILN_UNARY_TANH);
  }
  for (unsigned op = 1; op < KILN_BINARY_COUNT; ++op) {
    if ((claimed & KILN_CAP_BINARY(op)) == 0) continue;
    const bool pow = op == KILN_BINARY_POW;
    const unsigned result_dt = sdk::binary_is_comparison(op) ? unsigned{KILN_DTYPE_BOOL} : dt;
    output(w.binary(static_cast<std::uint8_t>(op), static_cast<std::uint8_t>(result_dt), pow ? p : a, b, L), result_dt,
           std::string(sdk::binary_name(op)));
  }
  if (dt != KILN_DTYPE_BOOL) output(w.mad(dt, a, b, c, L), dt, "mad", true);
  output(w.select(dt, cond, a, b, L), dt, "select (vector condition)");
  if (lanes > 1) {  // a scalar condition selecting whole vectors
    const auto c0 = w.load(KILN_DTYPE_BOOL, mem[4], g);
    output(w.select(dt, c0, a, b, L), dt, "select (scalar condition)");
  }
  for (std::size_t r = 0; r < results.size(); ++r) {
    const unsigned slot = static_cast<unsigned>(5 + r);
    const auto out = w.param(KILN_PARAM_GLOBAL_MUT, static_cast<std::uint8_t>(results[r].second), slot, n);
    w.store(static_cast<std::uint8_t>(results[r].second), out, i, results[r].first, L);
  }
  run_and_check(w.ops, args, cases);
}

// CAST from dt to every dtype, as scalars and vectors.
TEST_P(COps, CastsToEveryDtypeMatchTheInterpreter) {
  const auto [from, lanes] = GetParam();
  const std::size_t n = 64;
  std::mt19937_64 rng(77 + from * 3 + lanes);
  // Float sources stay within every target's range: [0, 100) for unsigned
  // targets, [-100, 100) for the others.
  HostArg signed_in = HostArg::buffer(static_cast<std::uint8_t>(from), n), unsigned_in = signed_in;
  for (std::size_t k = 0; k < n; ++k) {
    signed_in.set(k, random_value(from, rng, -100, 100));
    unsigned_in.set(k, random_value(from, rng, 0, 100));
  }
  if (sdk::dtype_is_float(from)) signed_in.set(0, float_bits(from, -0.0));
  std::vector<HostArg> args = {signed_in, unsigned_in};
  WireBuilder w;
  const auto L = static_cast<std::uint8_t>(lanes);
  const auto ms = w.param(KILN_PARAM_GLOBAL, static_cast<std::uint8_t>(from), 0, n);
  const auto mu = w.param(KILN_PARAM_GLOBAL, static_cast<std::uint8_t>(from), 1, n);
  const auto g = w.group_index(0, w.const_i64(static_cast<std::int64_t>(n / lanes)));
  const auto i = lanes == 1 ? g : w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(lanes));
  const auto xs = w.load(static_cast<std::uint8_t>(from), ms, i, L), xu = w.load(static_cast<std::uint8_t>(from), mu, i, L);
  std::vector<Case> cases;
  for (unsigned to = 1; to < KILN_DTYPE_COUNT; ++to) {
    const bool use_unsigned = sdk::dtype_is_int(to) && !sdk::dtype_is_signed_int(to);
    const unsigned slot = static_cast<unsigned>(args.size());
    const auto out = w.param(KILN_PARAM_GLOBAL_MUT, static_cast<std::uint8_t>(to), slot, n);
    w.store(static_cast<std::uint8_t>(to), out, i, w.cast(static_cast<std::uint8_t>(to), use_unsigned ? xu : xs, L), L);
    args.push_back(HostArg::poisoned(static_cast<std::uint8_t>(to), n));
    cases.push_back({"cast to " + std::string(sdk::dtype_name(to)), slot, to});
  }
  run_and_check(w.ops, args, cases);
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, COps,
                         ::testing::Combine(::testing::Range(1u, static_cast<unsigned>(KILN_DTYPE_COUNT)),
                                            ::testing::Values(1u, 2u, 4u, 16u)),
                         dtype_lanes);

}  // namespace
}  // namespace kiln::test
