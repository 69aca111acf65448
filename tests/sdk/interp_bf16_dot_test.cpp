// BF16_PAIR and DOT_BF16 in the reference interpreter: known answers that
// pin down what VDPBF16PS does and a plain loop of multiply-adds does not
// (the high pair first; subnormal inputs, the accumulator too, read as
// zeros; a subnormal step result flushed to zero), and the pair's bits.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "interp_util.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr std::size_t kLanes = 6;  // one element per case below

// out[i] = dot_bf16(acc[i], a[i], b[i]) on u32 words.
std::vector<kiln_op> dot_kernel() {
  return map_kernel(kLanes, {KILN_DTYPE_F32, KILN_DTYPE_U32, KILN_DTYPE_U32}, KILN_DTYPE_F32,
                    [](WireBuilder& w, const std::vector<Id>& in) {
                      return w.op(KILN_OP_DOT_BF16, KILN_DTYPE_F32, 0, in[0], in[1], in[2], 0);
                    });
}

std::uint32_t word(std::uint16_t lo, std::uint16_t hi) { return lo | (std::uint32_t{hi} << 16); }
std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

struct Case {
  const char* what;
  float acc;
  std::uint32_t a, b;
  std::uint32_t want;  // f32 bits
};

}  // namespace

TEST(InterpreterDotBf16, KnownAnswersOfVdpbf16ps) {
  // bf16 bits: 1.0 = 0x3f80, -1.0 = 0xbf80, 2^-30 = 0x3080, 2^100 = 0x7180,
  // 2^-70 = 0x1c80; 0x0001 is the smallest subnormal bf16 (2^-133).
  const Case cases[kLanes] = {
      {"high pair first: (1 + 1*-1) + 2^-30*1 = 2^-30 (low first: 0)", 1.0f, word(0x3080, 0x3f80), word(0x3f80, 0xbf80),
       bits(0x1p-30f)},
      {"subnormal input read as zero: 2^-133 * 2^100 adds nothing", 0.0f, word(0x0001, 0), word(0x7180, 0), 0},
      {"subnormal result flushed: 2^-70 * 2^-70 = 2^-140 gives +0", 0.0f, word(0, 0x1c80), word(0, 0x1c80), 0},
      {"subnormal accumulator read as zero", std::bit_cast<float>(0x00000001u), 0, 0, 0},
      {"both pairs: 3 + 1*2 + 1*4 = 9", 3.0f, word(0x3f80, 0x3f80), word(0x4080, 0x4000), bits(9.0f)},
      // (With a zero low pair the second step would add +0 * +0 to -0: +0.)
      {"negative subnormal results flushed to -0, twice", -0.0f, word(0x9c80, 0x9c80), word(0x1c80, 0x1c80), 0x80000000u},
  };
  Buffer acc(KILN_DTYPE_F32, kLanes), a(KILN_DTYPE_U32, kLanes), b(KILN_DTYPE_U32, kLanes), out(KILN_DTYPE_F32, kLanes);
  for (std::size_t i = 0; i < kLanes; ++i) {
    acc.set<float>(i, cases[i].acc);
    a.set<std::uint32_t>(i, cases[i].a);
    b.set<std::uint32_t>(i, cases[i].b);
  }
  run_ok(dot_kernel(), args_of({&acc, &a, &b, &out}));
  for (std::size_t i = 0; i < kLanes; ++i)
    EXPECT_EQ(out.get<std::uint32_t>(i), cases[i].want) << cases[i].what;
}

TEST(InterpreterDotBf16, PairPutsTheLowValueInTheLowHalf) {
  const auto ops = map_kernel(3, {KILN_DTYPE_BF16, KILN_DTYPE_BF16}, KILN_DTYPE_U32, [](WireBuilder& w, const std::vector<Id>& in) {
    return w.op(KILN_OP_BF16_PAIR, KILN_DTYPE_U32, 0, in[0], in[1], KILN_NO_OPERAND, 0);
  });
  Buffer lo(KILN_DTYPE_BF16, 3), hi(KILN_DTYPE_BF16, 3), out(KILN_DTYPE_U32, 3);
  const std::uint16_t los[3] = {0x3f80, 0x0001, 0x7fc1}, his[3] = {0xc000, 0x8000, 0xff80};  // 1, -2; a subnormal, -0; a NaN, -inf
  for (std::size_t i = 0; i < 3; ++i) {
    lo.set<std::uint16_t>(i, los[i]);
    hi.set<std::uint16_t>(i, his[i]);
  }
  run_ok(ops, args_of({&lo, &hi, &out}));
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(out.get<std::uint32_t>(i), word(los[i], his[i])) << i;
}

TEST(InterpreterDotBf16, RefusesOtherTypes) {
  const auto wrong = map_kernel(2, {KILN_DTYPE_F32, KILN_DTYPE_F32, KILN_DTYPE_U32}, KILN_DTYPE_F32,
                                [](WireBuilder& w, const std::vector<Id>& in) {
                                  return w.op(KILN_OP_DOT_BF16, KILN_DTYPE_F32, 0, in[0], in[1], in[2], 0);
                                });
  expect_invalid(wrong, "");
}
