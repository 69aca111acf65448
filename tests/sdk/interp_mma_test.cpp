// The MMA op in the reference interpreter: every shape and input dtype
// against a plain scalar loop (exactly: the contract fixes the order and
// rounding), with the lane layout written out here independently of the SDK's
// (from the PTX ISA's fragment tables), several warps per group and several
// groups; divergent warps and a LOCAL axis that is not whole warps are errors.
#include <gtest/gtest.h>

#include <bit>

#include "interp_util.hpp"
#include "kiln/sdk/half.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

struct Case {
  unsigned shape, input;
  unsigned a_lanes, b_lanes, k;
};
constexpr Case kCases[] = {
    {KILN_MMA_M16N8K16, KILN_DTYPE_F16, 8, 4, 16},
    {KILN_MMA_M16N8K16, KILN_DTYPE_BF16, 8, 4, 16},
    {KILN_MMA_M16N8K8, KILN_DTYPE_F32, 4, 2, 8},
};

// PTX ISA, "Matrix Fragments for mma.m16n8k16" / "mma.m16n8k8 (.tf32)":
// groupID = lane >> 2, threadID_in_group = lane % 4.
std::pair<unsigned, unsigned> a_at(const Case& c, unsigned lane, unsigned i) {
  const unsigned g = lane >> 2, t = lane % 4;
  if (c.k == 16) {
    const unsigned row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
    const unsigned col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
    return {row, col};
  }
  return {(i == 0 || i == 2) ? g : g + 8, i < 2 ? t : t + 4};
}
std::pair<unsigned, unsigned> b_at(const Case& c, unsigned lane, unsigned i) {
  const unsigned g = lane >> 2, t = lane % 4;
  if (c.k == 16) return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
  return {i == 0 ? t : t + 4, g};
}
std::pair<unsigned, unsigned> c_at(unsigned lane, unsigned i) {
  const unsigned g = lane >> 2, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}

float tf32(float x) {  // nearest, ties away from zero (cvt.rna.tf32.f32)
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(x) + 0x1000u) & ~0x1fffu);
}

// One warp's tile per warp: thread (warp w, lane l) reads its fragments from
// the fragment-ordered buffers at (w * 32 + l) * lanes and writes D there.
std::vector<kiln_op> mma_kernel(const Case& c, std::int64_t groups, std::int64_t threads) {
  WireBuilder w;
  const auto in = static_cast<std::uint8_t>(c.input);
  const std::uint64_t warps = static_cast<std::uint64_t>(groups * threads / 32);
  const Id a = w.param(KILN_PARAM_GLOBAL, in, 0, warps * 32 * c.a_lanes);
  const Id b = w.param(KILN_PARAM_GLOBAL, in, 1, warps * 32 * c.b_lanes);
  const Id cc = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 2, warps * 32 * 4);
  const Id d = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 3, warps * 32 * 4);
  const Id gid = w.group_index(0, w.const_i64(groups));
  const Id tid = w.local_index(0, w.const_i64(threads));
  const Id thread = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, gid, w.const_i64(threads)), tid);
  auto at = [&](unsigned lanes) { return w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, thread, w.const_i64(lanes)); };
  const Id fa = w.load(in, a, at(c.a_lanes), static_cast<std::uint8_t>(c.a_lanes));
  const Id fb = w.load(in, b, at(c.b_lanes), static_cast<std::uint8_t>(c.b_lanes));
  const Id fc = w.load(KILN_DTYPE_F32, cc, at(4), 4);
  const Id r = w.op(KILN_OP_MMA, KILN_DTYPE_F32, static_cast<std::uint8_t>(c.shape), fa, fb, fc, c.input, 0, 4);
  w.store(KILN_DTYPE_F32, d, at(4), r, 4);
  return w.ops;
}

void check_case(const Case& c, std::int64_t groups, std::int64_t threads, std::uint32_t seed) {
  const std::size_t warps = static_cast<std::size_t>(groups * threads / 32);
  Buffer a(c.input, warps * 32 * c.a_lanes), b(c.input, warps * 32 * c.b_lanes);
  std::vector<float> cv = random_floats(warps * 32 * 4, seed + 2), d(warps * 32 * 4);
  const std::vector<float> av = random_floats(a.size(), seed), bv = random_floats(b.size(), seed + 1);
  // Inputs as the dtype holds them (rounded; never zero, so every product counts).
  auto store = [&](Buffer& buf, std::size_t i, float v) -> float {
    if (v == 0.0f) v = 0.5f;
    if (c.input == KILN_DTYPE_F16) {
      buf.set<std::uint16_t>(i, sdk::f32_to_f16_bits(v));
      return sdk::round_to_f16(v);
    }
    if (c.input == KILN_DTYPE_BF16) {
      buf.set<std::uint16_t>(i, sdk::f32_to_bf16_bits(v));
      return sdk::round_to_bf16(v);
    }
    buf.set<float>(i, v);  // tf32: the full f32 goes in; the op rounds it
    return tf32(v);
  };
  std::vector<float> as(a.size()), bs(b.size());
  for (std::size_t i = 0; i < as.size(); ++i) as[i] = store(a, i, av[i]);
  for (std::size_t i = 0; i < bs.size(); ++i) bs[i] = store(b, i, bv[i]);
  std::vector<kiln_arg> args = {a.arg(), b.arg(), arg_of(cv), arg_of(d)};
  run_ok(mma_kernel(c, groups, threads), args);
  for (std::size_t warp = 0; warp < warps; ++warp) {
    float A[16][16] = {}, B[16][8] = {}, C[16][8] = {}, D[16][8] = {};
    for (unsigned lane = 0; lane < 32; ++lane) {
      const std::size_t thread = warp * 32 + lane;
      for (unsigned i = 0; i < c.a_lanes; ++i) {
        const auto [m, k] = a_at(c, lane, i);
        A[m][k] = as[thread * c.a_lanes + i];
      }
      for (unsigned i = 0; i < c.b_lanes; ++i) {
        const auto [k, n] = b_at(c, lane, i);
        B[k][n] = bs[thread * c.b_lanes + i];
      }
      for (unsigned i = 0; i < 4; ++i) {
        const auto [m, n] = c_at(lane, i);
        C[m][n] = cv[thread * 4 + i];
        D[m][n] = d[thread * 4 + i];
      }
    }
    for (unsigned m = 0; m < 16; ++m)
      for (unsigned n = 0; n < 8; ++n) {
        float want = C[m][n];
        for (unsigned k = 0; k < c.k; ++k) {
          const float p = A[m][k] * B[k][n];
          want = want + p;
        }
        ASSERT_EQ(D[m][n], want) << sdk::mma_shape_name(c.shape) << " " << sdk::dtype_name(c.input) << " warp " << warp
                                 << " D[" << m << "][" << n << "]";
      }
  }
}

}  // namespace

TEST(InterpreterMma, EveryShapeAndDtypeMatchesAScalarLoop) {
  for (const Case& c : kCases) {
    check_case(c, 1, 32, 11);
    check_case(c, 3, 64, 12);   // two warps per group, three groups
    check_case(c, 2, 128, 13);
  }
}

TEST(InterpreterMma, Tf32RoundsInputsToNearest) {
  // 1 + 2^-11 is half an ulp of tf32 above 1: it rounds away to 1 + 2^-10;
  // 1 + 2^-12 rounds down to 1. With B = 1 and C = 0, D = the rounded A.
  const Case& c = kCases[2];
  std::vector<float> a(32 * 4, 0.0f), b(32 * 2, 0.0f), cv(32 * 4, 0.0f), d(32 * 4);
  // A[0][0] is lane 0's element 0; B[0][0] is lane 0's element 0.
  a[0] = 1.0f + std::ldexp(1.0f, -11);
  b[0] = 1.0f;
  a[4 * 1 + 0] = 1.0f + std::ldexp(1.0f, -12);  // lane 1 element 0: A[0][1]
  b[2 * 1 + 0] = 1.0f;                          // lane 1 element 0: B[1][0]
  run_ok(mma_kernel(c, 1, 32), {arg_of(a), arg_of(b), arg_of(cv), arg_of(d)});
  // D[0][0] (lane 0, element 0) = tf32(A[0][0]) * 1 + tf32(A[0][1]) * 1.
  EXPECT_EQ(d[0], (1.0f + std::ldexp(1.0f, -10)) + 1.0f);
}

TEST(InterpreterMma, DivergentWarpIsAFault) {
  // The MMA under `if (tid < 16)`: half of the warp does not reach it.
  const Case& c = kCases[0];
  WireBuilder w;
  const Id a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F16, 0, 32 * 8);
  const Id b = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F16, 1, 32 * 4);
  const Id cc = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, 32 * 4);
  const Id tid = w.local_index(0, w.const_i64(32));
  const Id fa = w.load(KILN_DTYPE_F16, a, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, tid, w.const_i64(8)), 8);
  const Id fb = w.load(KILN_DTYPE_F16, b, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, tid, w.const_i64(4)), 4);
  const Id at = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, tid, w.const_i64(4));
  const Id fc = w.load(KILN_DTYPE_F32, cc, at, 4);
  const Id cond = w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, tid, w.const_i64(16));
  const Id branch = w.if_(cond);
  const Id r = w.op(KILN_OP_MMA, KILN_DTYPE_F32, static_cast<std::uint8_t>(c.shape), fa, fb, fc, c.input, 0, 4);
  w.store(KILN_DTYPE_F32, cc, at, r, 4);
  w.end_if(branch);
  Buffer ab(KILN_DTYPE_F16, 32 * 8), bb(KILN_DTYPE_F16, 32 * 4);
  std::vector<float> cv(32 * 4, 1.0f);
  expect_fault(w.ops, {ab.arg(), bb.arg(), arg_of(cv)}, "divergent mma", r);
}

TEST(InterpreterMma, LocalAxisNotWholeWarpsIsInvalid) {
  auto ops = mma_kernel(kCases[0], 1, 32);
  // The LOCAL length CONST is the second const_i64 (after the group count).
  for (kiln_op& op : ops)
    if (op.kind == KILN_OP_CONST && op.imm == 32) op.imm = 48;
  expect_invalid(ops, "multiple of 32");
}

TEST(InterpreterMma, WrongFragmentTypesAreInvalid) {
  auto ops = mma_kernel(kCases[0], 1, 32);
  for (kiln_op& op : ops)
    if (op.kind == KILN_OP_MMA) op.attr = KILN_DTYPE_BF16;  // A and B are f16
  expect_invalid(ops, "expected bf16x8");
}
