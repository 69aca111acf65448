// lower_math: the ABI 1.1 math ops a device does not claim become ops it
// has, and the forms keep the accuracy docs/passes.md states (checked on the
// interpreter against the op itself, on inputs near 0, in the tails, signed
// zeros, infinities and NaN). The end-to-end check on a device (the dummy
// without the ops) is math_devices_test.cpp.
#include <gtest/gtest.h>

#include "passes/always_on.hpp"
#include "passes/math_ops_support.hpp"

#include "kiln/ir/verify.hpp"
#include "kiln/passes/device_presets.hpp"
#include "kiln/passes/pipeline.hpp"

using namespace kiln;
using namespace kiln::passes::test;

namespace {

// A CPU-shaped device that claims none of the six ops on any dtype.
DeviceInfo without_math() {
  DeviceInfo d = passes::cpu_preset();
  for (ir::UnaryOp op : kMathOps) d.unary_dtypes[static_cast<unsigned>(op)] = 0;
  return d;
}

std::size_t count_math_ops(const ir::Kernel& k) {
  std::size_t n = 0;
  for (const ir::Op& op : k.ops)
    if (op.kind == ir::OpKind::Unary && op.unary() >= ir::UnaryOp::Tanh) ++n;
  return n;
}

// The contract of the lowered forms, in ulp of the dtype (docs/passes.md):
// f32/f64 as measured on the interpreter with a margin; f16/bf16 compute in
// f32 and round once, so at most one ulp of the half type.
double tolerance(ir::DType dt, ir::UnaryOp op) {
  if (dt == ir::DType::F16 || dt == ir::DType::BF16) return 1;
  switch (op) {
    case ir::UnaryOp::Rsqrt: return 1.5;
    case ir::UnaryOp::Erf: return 2;
    default: return 4;
  }
}

Columns inputs_for(std::size_t n, std::uint64_t seed) {
  Columns in;
  for (ir::UnaryOp op : kMathOps) in.push_back(math_inputs(op, n, seed));
  return in;
}

}  // namespace

TEST(LowerMath, RewritesEveryUnclaimedOpIntoClaimedOps) {
  const DeviceInfo device = without_math();
  for (ir::DType dt : {ir::DType::F32, ir::DType::F16, ir::DType::BF16, ir::DType::F64}) {
    const ir::Kernel kernel = math_kernel(dt, 64);
    const ir::Kernel lowered = passes::detail::lower_math(kernel, device);
    ASSERT_TRUE(ir::verify(lowered).ok()) << ir::verify(lowered).error().to_string();
    // f64 erf has no form of f64 accuracy: it stays (Device::compile refuses it).
    EXPECT_EQ(count_math_ops(lowered), dt == ir::DType::F64 ? 1u : 0u) << ir::dtype_name(dt);
  }
}

TEST(LowerMath, LeavesClaimedOpsAlone) {
  const DeviceInfo device = passes::cpu_preset();  // claims everything
  const ir::Kernel kernel = math_kernel(ir::DType::F32, 64);
  EXPECT_EQ(count_math_ops(passes::detail::lower_math(kernel, device)), kMathOpCount);
}

TEST(LowerMath, HalfTypesUseTheClaimedF32Op) {
  DeviceInfo device = without_math();
  device.unary_dtypes[KILN_UNARY_TANH] = KILN_DTYPE_BIT(KILN_DTYPE_F32);
  const ir::UnaryOp tanh[] = {ir::UnaryOp::Tanh};
  const ir::Kernel lowered = passes::detail::lower_math(math_kernel(ir::DType::F16, 64, tanh), device);
  std::size_t f32_tanh = 0;
  for (const ir::Op& op : lowered.ops) f32_tanh += op.kind == ir::OpKind::Unary && op.unary() == ir::UnaryOp::Tanh && op.dtype == ir::DType::F32;
  EXPECT_EQ(f32_tanh, 1u);
}

TEST(LowerMath, NeedsExpAndLnToLower) {
  DeviceInfo device = without_math();
  device.unary_dtypes[KILN_UNARY_EXP] = 0;
  const ir::Kernel lowered = passes::detail::lower_math(math_kernel(ir::DType::F32, 64), device);
  EXPECT_EQ(count_math_ops(lowered), kMathOpCount - 1);  // only rsqrt (recip of sqrt) lowers
}

// The forms against the op on the interpreter: each dtype, 4096 inputs per
// op, then the finalized kernel (lower_math, exp_base, fuse_mad, normalize),
// which must not undo the compensations (e.g. fold (1 + x) - 1 into x).
TEST(LowerMath, FormsMatchTheInterpreterWithinTheirContract) {
  const DeviceInfo device = without_math();
  constexpr std::int64_t kN = 4096;
  for (ir::DType dt : {ir::DType::F32, ir::DType::F16, ir::DType::BF16, ir::DType::F64}) {
    const ir::Kernel kernel = math_kernel(dt, kN);
    const Columns in = inputs_for(kN, 3);
    const Columns want = run_interpreter(kernel, dt, in);
    Result<ir::Kernel> finalized = passes::detail::finalize_checked(kernel, device);
    ASSERT_TRUE(finalized.ok()) << finalized.error().to_string();
    const ir::Kernel lowered = passes::detail::lower_math(kernel, device);
    const ir::Kernel& finalized_kernel = *finalized;
    for (const ir::Kernel* k : {&lowered, &finalized_kernel}) {
      const Columns got = run_interpreter(*k, dt, in);
      for (std::size_t op = 0; op < kMathOpCount; ++op) {
        const Worst w = worst_error(dt, in[op], got[op], want[op]);
        EXPECT_LE(w.ulps, tolerance(dt, kMathOps[op])) << ir::dtype_name(dt) << " " << describe(kMathOps[op], w);
      }
    }
  }
}

TEST(LowerMath, SpecialValuesSurviveTheForms) {
  const DeviceInfo device = without_math();
  const double inf = INFINITY, nan = NAN;
  const std::vector<double> xs = {-0.0, 0.0, inf, -inf, nan, 1e-30, -1e-30, 1e-45, 88.0, -88.0, 100.0, -100.0, 30.0, -30.0,
                                  1e30, -1e30, -1.0, 4.0, -4.0, 1.0};
  for (ir::DType dt : {ir::DType::F32, ir::DType::F64}) {
    const ir::Kernel kernel = math_kernel(dt, static_cast<std::int64_t>(xs.size()));
    const Columns in(kMathOpCount, xs);
    const Columns want = run_interpreter(kernel, dt, in);
    const Columns got = run_interpreter(passes::detail::lower_math(kernel, device), dt, in);
    for (std::size_t op = 0; op < kMathOpCount; ++op) {
      if (dt == ir::DType::F64 && kMathOps[op] == ir::UnaryOp::Erf) continue;  // not lowered
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const double g = got[op][i], w = want[op][i];
        const std::string what = std::string(ir::dtype_name(dt)) + " " + op_name(kMathOps[op]) + "(" + std::to_string(xs[i]) + ")";
        if (std::isnan(w)) {
          EXPECT_TRUE(std::isnan(g)) << what << " = " << g;
        } else if (w == 0 || std::isinf(w)) {
          EXPECT_EQ(g, w) << what;
          EXPECT_EQ(std::signbit(g), std::signbit(w)) << what << ": the sign of zero";
        } else {
          EXPECT_LE(ulp_error(dt, g, w), tolerance(dt, kMathOps[op])) << what << " = " << g << ", want " << w;
        }
      }
    }
  }
}

// Vectors: the forms' constants are broadcast to the op's lanes.
TEST(LowerMath, VectorOpsLowerLaneByLaneAlike) {
  const DeviceInfo device = without_math();
  constexpr std::int64_t kN = 256;
  for (ir::DType dt : {ir::DType::F32, ir::DType::F16}) {
    ir::Builder b;
    std::vector<ir::Value> in, out;
    for (std::size_t k = 0; k < kMathOpCount; ++k) in.push_back(b.param(ir::ParamKind::Global, dt, kN));
    for (std::size_t k = 0; k < kMathOpCount; ++k) out.push_back(b.param(ir::ParamKind::GlobalMut, dt, kN));
    const ir::Value g = b.group_index(0, kN / 4);
    const ir::Value four = b.constant_i64(4);
    const ir::Value i = b.mul(g, four);
    for (std::size_t k = 0; k < kMathOpCount; ++k) {
      const ir::Value x = b.load(in[k], i, 4);
      b.store(out[k], i, b.unary(kMathOps[k], x));
    }
    const ir::Kernel kernel = b.finish();
    const ir::Kernel lowered = passes::detail::lower_math(kernel, device);
    ASSERT_TRUE(ir::verify(lowered).ok()) << ir::verify(lowered).error().to_string();
    EXPECT_EQ(count_math_ops(lowered), 0u);
    const Columns in_values = inputs_for(kN, 9);
    const Columns want = run_interpreter(kernel, dt, in_values), got = run_interpreter(lowered, dt, in_values);
    for (std::size_t op = 0; op < kMathOpCount; ++op) {
      const Worst w = worst_error(dt, in_values[op], got[op], want[op]);
      EXPECT_LE(w.ulps, tolerance(dt, kMathOps[op])) << ir::dtype_name(dt) << "x4 " << describe(kMathOps[op], w);
    }
  }
}
