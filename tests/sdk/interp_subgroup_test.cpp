// SUBGROUP_REDUCE in the reference interpreter: every width, reduction and
// the dtypes f32, f16, bf16 and i32 against a plain host loop on random
// inputs. The butterfly of kernel_ir.h is written out here independently of
// the SDK (bitwise equal); integer sums and every max/min also equal a plain
// sequential loop over the subgroup (their order does not matter), float sums
// do to a tolerance. Subgroups follow the linear local id across a 2-D group;
// a partly active subgroup and a group that is no multiple of the width are
// errors naming the op.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "interp_util.hpp"
#include "kiln/sdk/half.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr std::int64_t kGroups = 2, kX = 16, kY = 8;  // 128 threads per group, linear id x + 16 y
constexpr std::int64_t kThreads = kX * kY;
constexpr std::size_t kElements = static_cast<std::size_t>(kGroups * kThreads);

// y[g, l] = subgroup_reduce(x[g, l]) for the linear local id l.
std::vector<kiln_op> reduce_kernel(unsigned dtype, unsigned reduction, unsigned width) {
  WireBuilder w;
  const auto dt = static_cast<std::uint8_t>(dtype);
  const Id x = w.param(KILN_PARAM_GLOBAL, dt, 0, kElements);
  const Id y = w.param(KILN_PARAM_GLOBAL_MUT, dt, 1, kElements);
  const Id g = w.group_index(0, w.const_i64(kGroups));
  const Id tx = w.local_index(0, w.const_i64(kX));
  const Id ty = w.local_index(1, w.const_i64(kY));
  const Id linear = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, tx, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, ty, w.const_i64(kX)));
  const Id at = w.binary(KILN_BINARY_ADD, KILN_DTYPE_I64, w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, w.const_i64(kThreads)), linear);
  const Id v = w.load(dt, x, at);
  const Id r = w.op(KILN_OP_SUBGROUP_REDUCE, dt, static_cast<std::uint8_t>(reduction), v, KILN_NO_OPERAND, KILN_NO_OPERAND, width);
  w.store(dt, y, at, r);
  return w.ops;
}

// Values as the dtype holds them, in float (i32: exact in double below).
struct Host {
  unsigned dtype;
  double round(double v) const {
    switch (dtype) {
      case KILN_DTYPE_F32: return static_cast<float>(v);
      case KILN_DTYPE_F16: return sdk::round_to_f16(static_cast<float>(v));
      case KILN_DTYPE_BF16: return sdk::round_to_bf16(static_cast<float>(v));
      default: return static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int64_t>(v))));
    }
  }
  double combine(unsigned reduction, double a, double b) const {
    if (dtype == KILN_DTYPE_I32) {  // wrapping arithmetic
      const auto ia = static_cast<std::uint32_t>(static_cast<std::int32_t>(a));
      const auto ib = static_cast<std::uint32_t>(static_cast<std::int32_t>(b));
      switch (reduction) {
        case KILN_BINARY_ADD: return static_cast<std::int32_t>(ia + ib);
        case KILN_BINARY_MUL: return static_cast<std::int32_t>(ia * ib);
        default: break;
      }
    }
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    switch (reduction) {
      case KILN_BINARY_ADD: return round(dtype == KILN_DTYPE_I32 ? a + b : static_cast<double>(fa + fb));
      case KILN_BINARY_MUL: return round(dtype == KILN_DTYPE_I32 ? a * b : static_cast<double>(fa * fb));
      case KILN_BINARY_MAX: return a > b ? a : b;
      default: return a < b ? a : b;
    }
  }
  void put(Buffer& b, std::size_t i, double v) const {
    switch (dtype) {
      case KILN_DTYPE_F32: b.set<float>(i, static_cast<float>(v)); break;
      case KILN_DTYPE_F16: b.set<std::uint16_t>(i, sdk::f32_to_f16_bits(static_cast<float>(v))); break;
      case KILN_DTYPE_BF16: b.set<std::uint16_t>(i, sdk::f32_to_bf16_bits(static_cast<float>(v))); break;
      default: b.set<std::int32_t>(i, static_cast<std::int32_t>(v)); break;
    }
  }
  double get(const Buffer& b, std::size_t i) const {
    switch (dtype) {
      case KILN_DTYPE_F32: return b.get<float>(i);
      case KILN_DTYPE_F16: return sdk::f16_bits_to_f32(b.get<std::uint16_t>(i));
      case KILN_DTYPE_BF16: return sdk::bf16_bits_to_f32(b.get<std::uint16_t>(i));
      default: return b.get<std::int32_t>(i);
    }
  }
};

void check(unsigned dtype, unsigned reduction, unsigned width, std::uint32_t seed) {
  const Host host{dtype};
  // Products stay near 1 (no overflow to inf over 64 factors); sums of
  // values of both signs; integers small enough for i32 sums to be exact
  // and products to wrap (the op wraps as BINARY does).
  const bool product = reduction == KILN_BINARY_MUL;
  const std::vector<float> r = random_floats(kElements, seed, product ? 0.6f : -2.0f, product ? 1.6f : 2.0f);
  std::vector<double> in(kElements);
  Buffer x(dtype, kElements), y(dtype, kElements);
  for (std::size_t i = 0; i < kElements; ++i) {
    double v = dtype == KILN_DTYPE_I32 ? std::round(r[i] * (product ? 9.0f : 1000.0f)) : r[i];
    if (v == 0) v = 3;  // never zero
    in[i] = host.round(v);
    host.put(x, i, in[i]);
  }
  run_ok(reduce_kernel(dtype, reduction, width), {x.arg(), y.arg()});
  const std::string what = std::string(sdk::dtype_name(dtype)) + " " + std::string(sdk::binary_name(reduction)) + " width " + std::to_string(width);
  for (std::size_t first = 0; first < kElements; first += width) {
    // kernel_ir.h's butterfly: m = w/2 .. 1, v[l] = op(v[l & ~m], v[l | m]).
    std::vector<double> v(in.begin() + static_cast<std::ptrdiff_t>(first), in.begin() + static_cast<std::ptrdiff_t>(first + width));
    for (unsigned m = width / 2; m >= 1; m /= 2) {
      std::vector<double> next(width);
      for (unsigned l = 0; l < width; ++l) next[l] = host.combine(reduction, v[l & ~m], v[l | m]);
      v = next;
    }
    double sequential = in[first];
    for (unsigned l = 1; l < width; ++l) sequential = host.combine(reduction, sequential, in[first + l]);
    // Reassociated float sums: each of the width roundings within half an
    // ulp of partials up to 2 width in size (products stay near 1).
    const double eps = dtype == KILN_DTYPE_F32 ? 0x1p-23 : dtype == KILN_DTYPE_F16 ? 0x1p-10 : 0x1p-7;
    const bool order_free = dtype == KILN_DTYPE_I32 || reduction == KILN_BINARY_MAX || reduction == KILN_BINARY_MIN;
    for (unsigned l = 0; l < width; ++l) {
      const double got = host.get(y, first + l);
      ASSERT_EQ(got, v[0]) << what << ", subgroup at " << first << ", lane " << l;  // every lane the same bits
      if (order_free) {
        ASSERT_EQ(got, sequential) << what << ", subgroup at " << first;
      } else {
        ASSERT_NEAR(got, sequential, width * eps * 4.0 * width) << what << ", subgroup at " << first;
      }
    }
  }
}

}  // namespace

TEST(InterpreterSubgroup, EveryWidthReductionAndDtypeMatchesAHostLoop) {
  std::uint32_t seed = 1;
  for (unsigned dtype : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16, KILN_DTYPE_I32})
    for (unsigned reduction : {KILN_BINARY_ADD, KILN_BINARY_MUL, KILN_BINARY_MAX, KILN_BINARY_MIN})
      for (unsigned width = 2; width <= 64; width *= 2) check(dtype, reduction, width, seed++);
}

TEST(InterpreterSubgroup, SignedZerosGiveEveryLaneTheSameBits) {
  // max(-0, +0) is +0 one way round and -0 the other (x > y ? x : y): the
  // lower lane is always the left operand, so both lanes agree.
  auto ops = reduce_kernel(KILN_DTYPE_F32, KILN_BINARY_MAX, 2);
  std::vector<float> x(kElements), y(kElements);
  for (std::size_t i = 0; i < kElements; ++i) x[i] = i % 2 == 0 ? 0.0f : -0.0f;
  run_ok(ops, {arg_of(x), arg_of(y)});
  for (std::size_t i = 0; i < kElements; ++i) ASSERT_TRUE(std::signbit(y[i])) << i;  // max(+0, -0) = -0
}

TEST(InterpreterSubgroup, PartlyActiveSubgroupIsAFault) {
  WireBuilder w;
  const Id x = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 0, 32);
  const Id tid = w.local_index(0, w.const_i64(32));
  const Id v = w.load(KILN_DTYPE_F32, x, tid);
  const Id branch = w.if_(w.binary(KILN_BINARY_CMPLT, KILN_DTYPE_BOOL, tid, w.const_i64(4)));
  const Id r = w.op(KILN_OP_SUBGROUP_REDUCE, KILN_DTYPE_F32, KILN_BINARY_ADD, v, KILN_NO_OPERAND, KILN_NO_OPERAND, 8);
  w.store(KILN_DTYPE_F32, x, tid, r);
  w.end_if(branch);
  std::vector<float> data(32, 1.0f);
  expect_fault(w.ops, {arg_of(data)}, "divergent subgroup_reduce", r);
}

TEST(InterpreterSubgroup, MisuseIsInvalid) {
  auto with = [](auto edit) {
    auto ops = reduce_kernel(KILN_DTYPE_F32, KILN_BINARY_ADD, 32);
    for (kiln_op& op : ops)
      if (op.kind == KILN_OP_SUBGROUP_REDUCE) edit(op);
    return ops;
  };
  expect_invalid(with([](kiln_op& op) { op.attr = 128; }), "width 128");   // wider than the group, and than 64
  expect_invalid(with([](kiln_op& op) { op.attr = 12; }), "width 12");     // no power of two
  expect_invalid(with([](kiln_op& op) { op.code = KILN_BINARY_SUB; }), "not sub");
  auto odd = reduce_kernel(KILN_DTYPE_F32, KILN_BINARY_ADD, 32);
  for (kiln_op& op : odd)
    if (op.kind == KILN_OP_CONST && op.imm == 8) op.imm = 3;  // 16 x 3 threads: no multiple of 32
  expect_invalid(odd, "do not divide the 48 threads");
}
