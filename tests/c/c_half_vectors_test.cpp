// Whole-vector f16/bf16 conversions in the C dialect (Dialect::half_vector):
// F16C / AVX-512F instructions for f16 where the compiler targets them,
// vector-extension integer rounding for bf16, one software conversion per
// lane otherwise. Checked against the interpreter (kiln/sdk/half.hpp) bit for
// bit over every f16 and bf16 pattern and a million f32 patterns, at every
// vector width, with the plugin's default flags (-march=native) and with
// generic x86-64 flags (no F16C: the per-lane fallback inside the helpers);
// and the scalar conversions (Dialect::half_conversion) the same way.
#include <gtest/gtest.h>

#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"

#include <filesystem>
#include <random>
#include <string>

#include <unistd.h>

namespace kiln::test {
namespace {

constexpr std::int64_t kElements = std::int64_t{1} << 20;

// Per `lanes`-wide vector g: f16 and bf16 bits to f32, f32 to f16 and bf16
// (CAST then STORE: the Round and Store helpers), and f16 arithmetic
// (x16 + f16(f), rounded as one vector).
std::vector<kiln_op> conversions(std::uint8_t lanes) {
  WireBuilder w;
  const auto h = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F16, 0, kElements);
  const auto hb = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_BF16, 1, kElements);
  const auto f = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 2, kElements);
  const auto from16 = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 3, kElements);
  const auto fromb16 = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 4, kElements);
  const auto to16 = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F16, 5, kElements);
  const auto tob16 = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_BF16, 6, kElements);
  const auto sum16 = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F16, 7, kElements);
  const auto g = w.group_index(0, w.const_i64(kElements / lanes));
  const auto at = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(lanes));
  const auto x16 = w.load(KILN_DTYPE_F16, h, at, lanes);
  w.store(KILN_DTYPE_F32, from16, at, w.cast(KILN_DTYPE_F32, x16, lanes), lanes);
  w.store(KILN_DTYPE_F32, fromb16, at, w.cast(KILN_DTYPE_F32, w.load(KILN_DTYPE_BF16, hb, at, lanes), lanes), lanes);
  const auto x = w.load(KILN_DTYPE_F32, f, at, lanes);
  const auto x_as16 = w.cast(KILN_DTYPE_F16, x, lanes);
  w.store(KILN_DTYPE_F16, to16, at, x_as16, lanes);
  w.store(KILN_DTYPE_BF16, tob16, at, w.cast(KILN_DTYPE_BF16, x, lanes), lanes);
  w.store(KILN_DTYPE_F16, sum16, at, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F16, x16, x_as16, lanes), lanes);
  return w.ops;
}

// Every 16-bit pattern, 16 times over (i * 40503, odd: a permutation).
std::vector<std::uint16_t> every_half() {
  std::vector<std::uint16_t> halves(kElements);
  for (std::int64_t i = 0; i < kElements; ++i) halves[i] = static_cast<std::uint16_t>(i * 40503);
  return halves;
}

// Every 16-bit pattern (16 times over), and f32 patterns: the edges (overflow
// to inf, the subnormal and underflow bounds, f32 subnormals, NaN, inf) and
// random ones, most with the bits below the f16 / bf16 precision at or beside
// the halfway point (as CudaDevice.HalfConversionsMatchTheInterpreterBitForBit).
std::vector<HostArg> inputs() {
  const std::vector<std::uint16_t> halves = every_half();
  std::vector<std::uint32_t> floats = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u,
                                       0x7f800001u, 0x00000001u, 0x807fffffu, 0x477fe000u, 0x477fefffu, 0x477ff000u,
                                       0xc77ff000u, 0x38800000u, 0x387fffffu, 0x33800000u, 0x33000000u, 0x33000001u,
                                       0xb3000000u, 0x32ffffffu, 0x7f7fffffu, 0x7f7f8000u, 0x7f7f7fffu, 0xff7fffffu};
  std::mt19937 rng(31);
  constexpr std::uint32_t kLow16[] = {0x0fffu, 0x1000u, 0x1001u, 0x3000u, 0x0000u};
  constexpr std::uint32_t kLowBf16[] = {0x7fffu, 0x8000u, 0x8001u, 0x18000u};
  while (floats.size() < static_cast<std::size_t>(kElements)) {
    std::uint32_t bits = static_cast<std::uint32_t>(rng());
    switch (floats.size() % 4) {
      case 0: break;
      case 1: bits = (bits & ~0x1fffu) | kLow16[rng() % 5]; break;
      case 2: bits = (bits & ~0x1ffffu) | kLowBf16[rng() % 4]; break;
      default: bits = (bits & 0x807fe000u) | ((102u + static_cast<std::uint32_t>(rng() % 42)) << 23) | kLow16[rng() % 5];  // 2^-25..2^16
    }
    floats.push_back(bits);
  }
  return {HostArg::of(KILN_DTYPE_F16, halves),         HostArg::of(KILN_DTYPE_BF16, halves),
          HostArg::of(KILN_DTYPE_F32, floats),         HostArg::buffer(KILN_DTYPE_F32, kElements),
          HostArg::buffer(KILN_DTYPE_F32, kElements),  HostArg::buffer(KILN_DTYPE_F16, kElements),
          HostArg::buffer(KILN_DTYPE_BF16, kElements), HostArg::buffer(KILN_DTYPE_F16, kElements)};
}

bool is_nan(unsigned dtype, std::uint64_t bits) {
  if (dtype == KILN_DTYPE_F32) return (bits & 0x7fffffffu) > 0x7f800000u;
  if (dtype == KILN_DTYPE_F16) return (bits & 0x7fffu) > 0x7c00u;
  return (bits & 0x7fffu) > 0x7f80u;
}

// Which NaN bits may differ from the interpreter's.
enum class Nans {
  Same,        // conversions: none
  QuietedF16,  // f16 -> f32: F16C quiets a signalling NaN (half.hpp keeps its payload as it is)
  AnyNan,      // arithmetic: which operand's NaN comes out is not specified (kernel_ir.h)
};

// Bit for bit, NaNs as `nans` allows.
void expect_same_bits(const char* what, const HostArg& got, const HostArg& want, Nans nans) {
  std::size_t wrong = 0;
  for (std::size_t e = 0; e < want.count(); ++e) {
    const std::uint64_t g = got.get(e), w = want.get(e);
    if (g == w) continue;
    if (nans == Nans::QuietedF16 && is_nan(KILN_DTYPE_F32, w) && g == (w | 0x400000u)) continue;
    if (nans == Nans::AnyNan && is_nan(want.dtype, w) && is_nan(want.dtype, g)) continue;
    if (wrong++ < 5) ADD_FAILURE() << what << " [" << e << "]: got 0x" << std::hex << g << ", want 0x" << w;
  }
  EXPECT_EQ(wrong, 0u) << what;
}

struct Flags {
  const char* name;
  std::string options;  // the plugin's "flags" (empty: its default, -O3 -march=native -ffp-contract=fast)
};

class CHalfVectors : public ::testing::TestWithParam<Flags> {
 protected:
  void TearDown() override { std::filesystem::remove_all(cache_); }
  std::string options() const {
    std::string o = "{\"cache_dir\": \"" + cache_.string() + "\"";
    if (!GetParam().options.empty()) o += ", \"flags\": \"" + GetParam().options + "\"";
    return o + "}";
  }
  std::filesystem::path cache_ =
      std::filesystem::temp_directory_path() / ("kiln-c-half-vectors-" + std::to_string(::getpid()));
};

TEST_P(CHalfVectors, ConversionsMatchTheInterpreterBitForBit) {
  AbiPlugin plugin(plugin_path("c"), options());
  kiln_device* device = plugin.open(0);
  const std::vector<HostArg> start = inputs();
  // Lanes 1: the scalar conversions (F16C's one-lane instructions under the
  // native flags, the software form under the generic ones).
  for (std::uint8_t lanes : {16, 8, 4, 2, 1}) {
    SCOPED_TRACE("lanes " + std::to_string(lanes));
    const std::vector<kiln_op> ops = conversions(lanes);
    const std::vector<HostArg> want = interpreted(ops, start);
    std::vector<HostArg> got = start;
    const std::string source = run_kernel(plugin, device, ops, got);
    if (lanes == 1) {
      EXPECT_NE(source.find("_cvtsh_ss(h)"), std::string::npos) << source;
      EXPECT_NE(source.find("_cvtss_sh(v, "), std::string::npos) << source;
    } else {
      // The whole-vector helpers, not lane-by-lane conversions, did the work.
      for (const std::string helper : {"kiln_load_f16x", "kiln_load_bf16x", "kiln_round_f16x", "kiln_round_bf16x"})
        EXPECT_NE(source.find(helper + std::to_string(lanes) + "("), std::string::npos) << helper << "\n" << source;
      // Every store takes the float value before its rounding (one conversion, the same bits).
      for (const std::string helper : {"kiln_store_f16x", "kiln_store_bf16x"}) {
        const std::string call = "  " + helper + std::to_string(lanes) + "(&";
        const std::size_t at = source.find(call);
        ASSERT_NE(at, std::string::npos) << helper << "\n" << source;
        EXPECT_EQ(source.substr(source.find('\n', at) - 4, 4), "_f);") << source.substr(at, source.find('\n', at) - at);
      }
    }
    expect_same_bits("f16 -> f32", got[3], want[3], Nans::QuietedF16);
    expect_same_bits("bf16 -> f32", got[4], want[4], Nans::Same);
    expect_same_bits("f32 -> f16", got[5], want[5], Nans::Same);
    expect_same_bits("f32 -> bf16", got[6], want[6], Nans::Same);
    expect_same_bits("f16 + f16", got[7], want[7], Nans::AnyNan);
  }
}

// exp of bf16 vectors, doubled: the f32 exp is the same value at every width
// (kiln_exp_f32_m512/_m256/_m128), and its bf16 rounding (the RoundNormal
// helper: vcvtneps2bf16 on 16 lanes, and on 8 with AVX-512VL, where the
// compiler targets AVX-512 BF16; integer rounding elsewhere) must give the
// same bits at every width too, for every bf16 input. Against the interpreter
// within one bf16 ulp (exp's f32 result, within a few f32 ulp, is rounded
// once more), or zero where the interpreter's exp is subnormal.
TEST_P(CHalfVectors, Bf16ExpRoundsTheSameAtEveryWidth) {
  AbiPlugin plugin(plugin_path("c"), options());
  kiln_device* device = plugin.open(0);
  const std::vector<std::uint16_t> halves = every_half();
  const std::vector<HostArg> start = {HostArg::of(KILN_DTYPE_BF16, halves), HostArg::buffer(KILN_DTYPE_BF16, kElements)};
  std::vector<HostArg> widest;
  for (std::uint8_t lanes : {16, 8, 4}) {
    SCOPED_TRACE("lanes " + std::to_string(lanes));
    WireBuilder w;
    const auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_BF16, 0, kElements);
    const auto y = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_BF16, 1, kElements);
    const auto at = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, w.group_index(0, w.const_i64(kElements / lanes)), w.const_i64(lanes));
    // exp(x) + exp(x): the sum reads the rounded exp (a store would take the
    // float before its rounding), and doubling is exact.
    const auto ex = w.unary(KILN_UNARY_EXP, KILN_DTYPE_BF16, w.load(KILN_DTYPE_BF16, x, at, lanes), lanes);
    w.store(KILN_DTYPE_BF16, y, at, w.binary(KILN_BINARY_ADD, KILN_DTYPE_BF16, ex, ex, lanes), lanes);
    std::vector<HostArg> got = start;
    const std::string source = run_kernel(plugin, device, w.ops, got);
    EXPECT_NE(source.find("kiln_round_normal_bf16x" + std::to_string(lanes) + "("), std::string::npos) << source;
    if (widest.empty()) {
      widest = got;
      const std::vector<HostArg> want = interpreted(w.ops, start);
      std::size_t far = 0;
      for (std::size_t e = 0; e < want[1].count(); ++e) {
        const std::uint64_t g = got[1].get(e), v = want[1].get(e);
        if (is_nan(KILN_DTYPE_BF16, v) && is_nan(KILN_DTYPE_BF16, g)) continue;
        // An exp below the least normal value may be zero (docs/ir.md): doubled, below twice that.
        if ((v & 0x7fffu) < 0x0100u && (g & 0x7fffu) == 0) continue;
        const std::int64_t apart = static_cast<std::int64_t>(g) - static_cast<std::int64_t>(v);
        if ((g ^ v) & 0x8000u || apart > 1 || apart < -1) {
          if (far++ < 5) ADD_FAILURE() << "x 0x" << std::hex << halves[e] << ": got 0x" << g << ", want 0x" << v;
        }
      }
      EXPECT_EQ(far, 0u) << "bf16 exp results more than one ulp from the interpreter's";
    } else {
      expect_same_bits("bf16 exp", got[1], widest[1], Nans::Same);
    }
  }
}

// 16-lane f16/bf16 stores into outputs of 32 MiB and more are non-temporal
// (kiln_stream_*: 32-byte streaming stores, each thread fenced), and still
// round as the interpreter does.
TEST_P(CHalfVectors, StreamingStoresMatchTheInterpreter) {
  constexpr std::int64_t n = std::int64_t{16} << 20;  // 32 MiB of f16
  WireBuilder w;
  const auto f = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, n);
  const auto to16 = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F16, 1, n);
  const auto tob16 = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_BF16, 2, n);
  const auto g = w.group_index(0, w.const_i64(n / 16));
  const auto at = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(16));
  const auto x = w.load(KILN_DTYPE_F32, f, at, 16);
  w.store(KILN_DTYPE_F16, to16, at, w.cast(KILN_DTYPE_F16, x, 16), 16);
  w.store(KILN_DTYPE_BF16, tob16, at, w.cast(KILN_DTYPE_BF16, x, 16), 16);
  std::mt19937 rng(37);
  std::vector<std::uint32_t> floats(n);
  for (std::uint32_t& bits : floats) bits = static_cast<std::uint32_t>(rng());
  const std::vector<HostArg> start = {HostArg::of(KILN_DTYPE_F32, floats), HostArg::buffer(KILN_DTYPE_F16, n),
                                      HostArg::buffer(KILN_DTYPE_BF16, n)};
  AbiPlugin plugin(plugin_path("c"), options());
  std::vector<HostArg> got = start;
  const std::string source = run_kernel(plugin, plugin.open(0), w.ops, got);
  EXPECT_NE(source.find("kiln_stream_f16x16(&"), std::string::npos) << source;
  EXPECT_NE(source.find("kiln_stream_bf16x16(&"), std::string::npos) << source;
  EXPECT_NE(source.find("kiln_sfence();"), std::string::npos) << source;
  const std::vector<HostArg> want = interpreted(w.ops, start);
  expect_same_bits("f32 -> f16", got[1], want[1], Nans::Same);
  expect_same_bits("f32 -> bf16", got[2], want[2], Nans::Same);
}

INSTANTIATE_TEST_SUITE_P(Targets, CHalfVectors,
                         ::testing::Values(Flags{"Native", ""}, Flags{"GenericX86_64", "-O3 -march=x86-64 -ffp-contract=fast"}),
                         [](const ::testing::TestParamInfo<Flags>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln::test
