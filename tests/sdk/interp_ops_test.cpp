// Every UNARY, BINARY, CAST and MAD op on every dtype that allows it, on
// random inputs, bit-exact against the independent reference semantics.
#include <gtest/gtest.h>

#include "interp_reference.hpp"
#include "interp_util.hpp"
#include "kiln/sdk/op_rules.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr std::size_t kN = 257;  // odd on purpose

const std::vector<unsigned> kAllDTypes = {
    KILN_DTYPE_BF16, KILN_DTYPE_F16, KILN_DTYPE_F32, KILN_DTYPE_F64, KILN_DTYPE_U8, KILN_DTYPE_U16, KILN_DTYPE_U32,
    KILN_DTYPE_U64,  KILN_DTYPE_I8,  KILN_DTYPE_I16, KILN_DTYPE_I32, KILN_DTYPE_I64, KILN_DTYPE_BOOL};

Buffer random_buffer(unsigned dt, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Buffer b(dt, kN);
  for (std::size_t i = 0; i < kN; ++i) b.set_bits(i, ref::random_bits(dt, rng));
  return b;
}

std::string label(unsigned dt, std::string_view op) { return std::string(op) + " on " + std::string(sdk::dtype_name(dt)); }

void expect_bits(const Buffer& out, std::size_t i, std::uint64_t want, const std::string& what, std::uint64_t x,
                 std::uint64_t y = 0) {
  ASSERT_EQ(out.bits(i), want) << what << " at element " << i << " x=0x" << std::hex << x << " y=0x" << y;
}

}  // namespace

TEST(InterpreterOps, EveryUnaryOpOnEveryDtype) {
  int tested = 0;
  for (unsigned dt : kAllDTypes) {
    for (unsigned op = 1; op < KILN_UNARY_COUNT; ++op) {
      if (!sdk::unary_allowed(dt, op)) continue;
      Buffer x = random_buffer(dt, dt * 100 + op);
      Buffer out(dt, kN);
      auto ops = map_kernel(kN, {dt}, dt, [&](WireBuilder& w, const std::vector<Id>& in) {
        return w.unary(static_cast<std::uint8_t>(op), static_cast<std::uint8_t>(dt), in[0]);
      });
      run_ok(ops, args_of({&x, &out}));
      for (std::size_t i = 0; i < kN; ++i)
        expect_bits(out, i, ref::unary(dt, op, x.bits(i)), label(dt, sdk::unary_name(op)), x.bits(i));
      ++tested;
    }
  }
  EXPECT_EQ(tested, 4 * 18 + 8 * 3 + 1);  // floats: all but bitnot; ints: neg bitnot abs; bool: bitnot
}

TEST(InterpreterOps, EveryBinaryOpOnEveryDtype) {
  int tested = 0;
  for (unsigned dt : kAllDTypes) {
    for (unsigned op = 1; op < KILN_BINARY_COUNT; ++op) {
      if (!sdk::binary_allowed(dt, op)) continue;
      Buffer x = random_buffer(dt, dt * 1000 + op);
      Buffer y = random_buffer(dt, dt * 1000 + op + 500);
      const bool int_division = sdk::dtype_is_int(dt) && (op == KILN_BINARY_DIV || op == KILN_BINARY_MOD);
      if (int_division) {
        for (std::size_t i = 0; i < kN; ++i)
          if (y.bits(i) == 0) y.set_bits(i, 1);
        y.set_bits(3, ref::wrap_bits(dt, ~std::uint64_t{0}));  // y = -1 (or the max unsigned)
      }
      if (op == KILN_BINARY_POW)  // a positive base keeps the results real
        for (std::size_t i = 0; i < kN; ++i) x.set_bits(i, ref::unary(dt, KILN_UNARY_ABS, x.bits(i)));
      const unsigned result = sdk::binary_is_comparison(op) ? unsigned{KILN_DTYPE_BOOL} : dt;
      Buffer out(result, kN);
      auto ops = map_kernel(kN, {dt, dt}, result, [&](WireBuilder& w, const std::vector<Id>& in) {
        return w.binary(static_cast<std::uint8_t>(op), static_cast<std::uint8_t>(result), in[0], in[1]);
      });
      run_ok(ops, args_of({&x, &y, &out}));
      for (std::size_t i = 0; i < kN; ++i)
        expect_bits(out, i, ref::binary(dt, op, x.bits(i), y.bits(i)), label(dt, sdk::binary_name(op)), x.bits(i),
                    y.bits(i));
      ++tested;
    }
  }
  EXPECT_EQ(tested, 4 * 12 + 8 * 18 + 11);  // bool: the logic ops, comparisons, max, min
}

TEST(InterpreterOps, EveryCastBetweenEveryPairOfDtypes) {
  for (unsigned from : kAllDTypes) {
    for (unsigned to : kAllDTypes) {
      std::mt19937_64 rng(from * 31 + to);
      Buffer x(from, kN);
      for (std::size_t i = 0; i < kN; ++i) {
        std::uint64_t bits = ref::random_bits(from, rng);
        if (sdk::dtype_is_float(from) && sdk::dtype_is_int(to)) {
          // Float -> int is defined only in range: scale into [0, 100] for
          // unsigned targets and [-100, 100] for signed ones.
          long double v = ref::value_of(from, bits) * 12.5L;
          if (!sdk::dtype_is_signed_int(to)) v = std::fabs(v);
          bits = ref::cast(KILN_DTYPE_F64, from, std::bit_cast<std::uint64_t>(static_cast<double>(v)));
        }
        x.set_bits(i, bits);
      }
      Buffer out(to, kN);
      auto ops = map_kernel(kN, {from}, to, [&](WireBuilder& w, const std::vector<Id>& in) {
        return w.cast(static_cast<std::uint8_t>(to), in[0]);
      });
      run_ok(ops, args_of({&x, &out}));
      for (std::size_t i = 0; i < kN; ++i)
        expect_bits(out, i, ref::cast(from, to, x.bits(i)),
                    "cast " + std::string(sdk::dtype_name(from)) + " -> " + std::string(sdk::dtype_name(to)),
                    x.bits(i));
    }
  }
}

TEST(InterpreterOps, MadOnEveryArithmeticDtype) {
  for (unsigned dt : kAllDTypes) {
    if (!sdk::mad_allowed(dt)) continue;
    Buffer x = random_buffer(dt, dt + 1), y = random_buffer(dt, dt + 2), z = random_buffer(dt, dt + 3);
    Buffer out(dt, kN);
    auto ops = map_kernel(kN, {dt, dt, dt}, dt, [&](WireBuilder& w, const std::vector<Id>& in) {
      return w.mad(static_cast<std::uint8_t>(dt), in[0], in[1], in[2]);
    });
    run_ok(ops, args_of({&x, &y, &z, &out}));
    for (std::size_t i = 0; i < kN; ++i) expect_bits(out, i, ref::mad(dt, x.bits(i), y.bits(i), z.bits(i)), label(dt, "mad"), x.bits(i));
  }
}

// Spot checks with values written out, so the reference itself is checked.
TEST(InterpreterOps, KnownValues) {
  auto one = [](unsigned in_dt, unsigned out_dt, std::uint64_t a, std::uint64_t b,
                const std::function<Id(WireBuilder&, Id, Id)>& f) {
    Buffer x(in_dt, 1), y(in_dt, 1), out(out_dt, 1);
    x.set_bits(0, a);
    y.set_bits(0, b);
    run_ok(map_kernel(1, {in_dt, in_dt}, out_dt, [&](WireBuilder& w, const std::vector<Id>& in) { return f(w, in[0], in[1]); }),
           args_of({&x, &y, &out}));
    return out.bits(0);
  };
  auto bin = [&](unsigned dt, unsigned op, std::uint64_t a, std::uint64_t b) {
    const unsigned result = sdk::binary_is_comparison(op) ? unsigned{KILN_DTYPE_BOOL} : dt;
    return one(dt, result, a, b, [&](WireBuilder& w, Id x, Id y) {
      return w.binary(static_cast<std::uint8_t>(op), static_cast<std::uint8_t>(result), x, y);
    });
  };
  // Integer wrap.
  EXPECT_EQ(bin(KILN_DTYPE_I8, KILN_BINARY_ADD, 127, 1), 0x80u);                      // 127 + 1 = -128
  EXPECT_EQ(bin(KILN_DTYPE_U8, KILN_BINARY_SUB, 0, 1), 0xffu);                        // 0 - 1 = 255
  EXPECT_EQ(bin(KILN_DTYPE_I32, KILN_BINARY_MUL, 0x10000, 0x10000), 0u);              // 2^32 wraps to 0
  EXPECT_EQ(bin(KILN_DTYPE_I64, KILN_BINARY_DIV, 0x8000000000000000u, ~0ull), 0x8000000000000000u);  // MIN / -1
  // Signed and unsigned division and remainder (C semantics).
  EXPECT_EQ(bin(KILN_DTYPE_I32, KILN_BINARY_DIV, static_cast<std::uint32_t>(-7), 2), static_cast<std::uint32_t>(-3));
  EXPECT_EQ(bin(KILN_DTYPE_I32, KILN_BINARY_MOD, static_cast<std::uint32_t>(-7), 2), static_cast<std::uint32_t>(-1));
  EXPECT_EQ(bin(KILN_DTYPE_U32, KILN_BINARY_DIV, static_cast<std::uint32_t>(-7), 2), 0x7ffffffcu);
  // Shifts take y mod the width; SHR is arithmetic on signed types.
  EXPECT_EQ(bin(KILN_DTYPE_U8, KILN_BINARY_SHL, 1, 9), 2u);
  EXPECT_EQ(bin(KILN_DTYPE_I16, KILN_BINARY_SHR, 0x8000, 15), 0xffffu);
  EXPECT_EQ(bin(KILN_DTYPE_U16, KILN_BINARY_SHR, 0x8000, 15), 1u);
  // f16 arithmetic rounds to nearest even: 1 + 2^-11 is a tie -> 1.
  EXPECT_EQ(bin(KILN_DTYPE_F16, KILN_BINARY_ADD, 0x3c00, 0x1000), 0x3c00u);
  EXPECT_EQ(bin(KILN_DTYPE_F16, KILN_BINARY_MUL, 0x7bff, 0x4000), 0x7c00u);  // 65504 * 2 -> inf
  EXPECT_EQ(bin(KILN_DTYPE_BF16, KILN_BINARY_ADD, 0x3f80, 0x3b80), 0x3f80u);  // 1 + 2^-8: tie -> 1
  // Comparisons give bools.
  EXPECT_EQ(bin(KILN_DTYPE_I8, KILN_BINARY_CMPLT, 0xff, 0), 1u);   // -1 < 0
  EXPECT_EQ(bin(KILN_DTYPE_U8, KILN_BINARY_CMPLT, 0xff, 0), 0u);   // 255 < 0
  auto cast = [&](unsigned from, unsigned to, std::uint64_t a) {
    return one(from, to, a, 0, [&](WireBuilder& w, Id x, Id) { return w.cast(static_cast<std::uint8_t>(to), x); });
  };
  EXPECT_EQ(cast(KILN_DTYPE_F32, KILN_DTYPE_I32, std::bit_cast<std::uint32_t>(-2.75f)), static_cast<std::uint32_t>(-2));
  EXPECT_EQ(cast(KILN_DTYPE_F32, KILN_DTYPE_BOOL, std::bit_cast<std::uint32_t>(-0.0f)), 0u);
  EXPECT_EQ(cast(KILN_DTYPE_F32, KILN_DTYPE_BOOL, std::bit_cast<std::uint32_t>(0.5f)), 1u);
  EXPECT_EQ(cast(KILN_DTYPE_BOOL, KILN_DTYPE_F32, 1), std::bit_cast<std::uint32_t>(1.0f));
  EXPECT_EQ(cast(KILN_DTYPE_I32, KILN_DTYPE_I8, 0x1ff), 0xffu);  // wraps to -1
  EXPECT_EQ(cast(KILN_DTYPE_I8, KILN_DTYPE_U16, 0xff), 0xffffu);  // -1 sign-extends
  EXPECT_EQ(cast(KILN_DTYPE_F32, KILN_DTYPE_F16, std::bit_cast<std::uint32_t>(65520.0f)), 0x7c00u);
  // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is above the tie, so rounds up
  // (rounding through f32 first would give 1).
  EXPECT_EQ(cast(KILN_DTYPE_F64, KILN_DTYPE_F16, std::bit_cast<std::uint64_t>(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40))),
            0x3c01u);
  // i64 -> bf16 likewise: 2^25 + 2^17 + 1 rounds up to 2^25 + 2^18.
  EXPECT_EQ(cast(KILN_DTYPE_I64, KILN_DTYPE_BF16, (1ull << 25) + (1ull << 17) + 1), 0x4c01u);
  // Float -> int outside the range is undefined in the ABI; the interpreter's
  // choice: NaN -> 0, saturate to i64, then wrap.
  EXPECT_EQ(cast(KILN_DTYPE_F32, KILN_DTYPE_I64, std::bit_cast<std::uint32_t>(NAN)), 0u);
  EXPECT_EQ(cast(KILN_DTYPE_F32, KILN_DTYPE_I64, std::bit_cast<std::uint32_t>(1e30f)), 0x7fffffffffffffffu);
}

TEST(InterpreterOps, HalfPrecisionRoundsAfterEveryOp) {
  // (x + y) - x with x = 1, y = 2^-12: the sum rounds back to 1 in f16 and
  // bf16, so the difference is 0; computed in f32 throughout it would be 2^-12.
  for (std::uint8_t dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    Buffer x(dt, 1), y(dt, 1), out(dt, 1);
    x.set_bits(0, ref::cast(KILN_DTYPE_F32, dt, std::bit_cast<std::uint32_t>(1.0f)));
    y.set_bits(0, ref::cast(KILN_DTYPE_F32, dt, std::bit_cast<std::uint32_t>(std::ldexp(1.0f, -12))));
    run_ok(map_kernel(1, {dt, dt}, dt, [&](WireBuilder& w, const std::vector<Id>& in) {
             return w.binary(KILN_BINARY_SUB, dt, w.binary(KILN_BINARY_ADD, dt, in[0], in[1]), in[0]);
           }),
           args_of({&x, &y, &out}));
    EXPECT_EQ(out.bits(0), 0u) << sdk::dtype_name(dt);
  }
}

TEST(InterpreterOps, SelectPicksByCondition) {
  // out[i] = x[i] < y[i] ? x[i] : y[i]
  Buffer x = random_buffer(KILN_DTYPE_F32, 1), y = random_buffer(KILN_DTYPE_F32, 2), out(KILN_DTYPE_F32, kN);
  auto ops = map_kernel(kN, {KILN_DTYPE_F32, KILN_DTYPE_F32}, KILN_DTYPE_F32, [](WireBuilder& w, const std::vector<Id>& in) {
    const Id lt = w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, in[0], in[1]);
    return w.select(KILN_DTYPE_F32, lt, in[0], in[1]);
  });
  run_ok(ops, args_of({&x, &y, &out}));
  for (std::size_t i = 0; i < kN; ++i) EXPECT_EQ(out.get<float>(i), std::min(x.get<float>(i), y.get<float>(i)));
}
