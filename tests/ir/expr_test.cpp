// Builder operators (kiln/ir/expr.hpp): formulas written with operators run
// on the reference interpreter against the same formula on the host, on
// random inputs; they append exactly the ops of the Builder's methods; literals
// take the other operand's type; misuse is a clear exception.
#include <gtest/gtest.h>

#include "kiln/ir/builder.hpp"
#include "kiln/ir/expr.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

#include <kiln/sdk/interpreter.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

using namespace kiln;
using namespace kiln::ir;

namespace {

constexpr std::int64_t kN = 257;

// y[i] = formula(x[i]) over f32, as a kernel built with operators.
Kernel elementwise(const std::function<Expr(Expr)>& formula) {
  Builder b;
  const Memory x{b, b.param(ParamKind::Global, DType::F32, kN)};
  const Memory y{b, b.param(ParamKind::GlobalMut, DType::F32, kN)};
  const Expr i{b, b.group_index(0, kN)};
  y.store(i, formula(x[i]));
  return b.finish();
}

// The kernel on the interpreter against `host` on the same random inputs
// (normal, never zero); returns the largest relative error.
double max_error(const Kernel& k, const std::function<double(double)>& host) {
  const auto verified = verify(k);
  EXPECT_TRUE(verified.ok()) << verified.error().to_string() << "\n" << print(k);
  std::mt19937 rng(20261202);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> x(kN), y(kN, 0.0f);
  for (float& v : x) {
    do v = normal(rng);
    while (v == 0.0f);
  }
  const std::vector<kiln_op> wire = k.to_wire();
  kiln_arg args[] = {sdk::host_buffer_arg(std::span(x)), sdk::host_buffer_arg(std::span(y))};
  sdk::InterpretedProgram(wire).run(args);
  double worst = 0;
  for (std::int64_t i = 0; i < kN; ++i) {
    const double want = host(x[i]);
    worst = std::max(worst, std::abs(y[i] - want) / std::max(1.0, std::abs(want)));
  }
  return worst;
}

Expr gelu(Expr x) { return 0.5 * x * (1 + tanh(0.79788456 * (x + 0.044715 * x * x * x))); }
double host_gelu(double x) { return 0.5 * x * (1 + std::tanh(0.79788456 * (x + 0.044715 * x * x * x))); }

}  // namespace

TEST(Expr, GeluMatchesTheHostFormula) {
  EXPECT_LT(max_error(elementwise(gelu), host_gelu), 1e-5);
}

TEST(Expr, ACheckThatCanFail) {
  // The comparison sees a wrong formula: GELU with one constant changed.
  const Kernel wrong = elementwise([](Expr x) { return 0.5 * x * (1 + tanh(0.7 * (x + 0.044715 * x * x * x))); });
  EXPECT_GT(max_error(wrong, host_gelu), 1e-3);
}

TEST(Expr, SelectComparisonsMinMaxAndFunctions) {
  // leaky ReLU, a clamp, a smooth step and a formula with every comparison.
  EXPECT_LT(max_error(elementwise([](Expr x) { return select(x > 0, x, 0.01 * x); }),
                      [](double x) { return x > 0 ? x : 0.01 * x; }),
            1e-6);
  EXPECT_LT(max_error(elementwise([](Expr x) { return min(max(x, -1.5), 1.5); }),
                      [](double x) { return std::min(std::max(x, -1.5), 1.5); }),
            1e-6);
  EXPECT_LT(max_error(elementwise([](Expr x) { return x * sigmoid(x) + erf(x) / 2 - exp(-abs(x)); }),
                      [](double x) { return x / (1 + std::exp(-x)) + std::erf(x) / 2 - std::exp(-std::abs(x)); }),
            1e-5);
  EXPECT_LT(max_error(elementwise([](Expr x) {
                        return where((x <= 1) & (x >= -1), x, 0.0) + where((x == x) | (x != 1), 2, x) +
                               where(x < 0.5, x, sqrt(x));
                      }),
                      [](double x) { return (x <= 1 && x >= -1 ? x : 0.0) + 2 + (x < 0.5 ? x : std::sqrt(x)); }),
            1e-6);
}

TEST(Expr, AppendsTheOpsOfTheHandBuiltKernel) {
  // One statement per step where both operands would append ops: C++ leaves
  // the order of an operator's operands open (expr.hpp).
  Builder e;
  {
    const Memory x{e, e.param(ParamKind::Global, DType::F32, kN)};
    const Memory y{e, e.param(ParamKind::GlobalMut, DType::F32, kN)};
    const Expr i{e, e.group_index(0, kN)};
    const Expr v = x[i];
    const Expr inner = 0.79788456 * (v + 0.044715 * (v * v * v));
    const Expr t = 1 + tanh(inner);
    y.store(i, 0.5 * v * t);
  }
  Builder h;
  {
    const Value x = h.param(ParamKind::Global, DType::F32, kN);
    const Value y = h.param(ParamKind::GlobalMut, DType::F32, kN);
    const Value i = h.group_index(0, kN);
    const Value v = h.load(x, i);
    const Value cube = h.mul(h.mul(v, v), v);
    const Value c1 = h.constant(DType::F32, 0.044715);
    const Value sum = h.add(v, h.mul(c1, cube));
    const Value c2 = h.constant(DType::F32, 0.79788456);
    const Value inner = h.mul(c2, sum);
    const Value th = h.tanh(inner);
    const Value one = h.constant(DType::F32, 1);
    const Value t = h.add(one, th);
    const Value half = h.constant(DType::F32, 0.5);
    h.store(y, i, h.mul(h.mul(half, v), t));
  }
  EXPECT_EQ(print(e.finish()), print(h.finish()));
}

TEST(Expr, LiteralsTakeTheOtherOperandsDtypeAndLanes) {
  Builder b;
  const Memory h{b, b.param(ParamKind::Global, DType::F16, 64)};
  const Memory n{b, b.param(ParamKind::Global, DType::I32, 64)};
  const Expr scalar = h[3] * 0.5;
  const Expr vector = h.load(Expr(b, b.constant_i64(8)), 4) + 1;
  const Expr integer = 2 * n[0];
  EXPECT_EQ(scalar.type(), (ValueType{DType::F16, 1}));
  EXPECT_EQ(vector.type(), (ValueType{DType::F16, 4}));
  EXPECT_EQ(integer.type(), (ValueType{DType::I32, 1}));
  const Kernel& k = b.kernel();
  const Op& half = k[k[scalar.value().id].src[1]];
  EXPECT_EQ(half.kind, OpKind::Const);
  EXPECT_EQ(half.dtype, DType::F16);
  EXPECT_EQ(half.imm, encode_float(DType::F16, 0.5));
  EXPECT_EQ(k[k[vector.value().id].src[1]].kind, OpKind::Broadcast);
  EXPECT_EQ(k[k[integer.value().id].src[0]].dtype, DType::I32);
}

TEST(Expr, MisuseThrowsBeforeAppending) {
  Builder a, b;
  const Expr x{a, a.constant(DType::F32, 1.5)};
  const Expr y{b, b.constant(DType::F32, 2.5)};
  const Expr i{a, a.constant_i64(4)};
  EXPECT_THROW(x + y, std::invalid_argument);
  EXPECT_THROW(Expr() * 2, std::invalid_argument);
  const std::size_t before = a.kernel().size();
  try {
    (void)(i * 0.5);
    ADD_FAILURE() << "i64 * 0.5 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("i64"), std::string::npos) << e.what();
  }
  EXPECT_EQ(a.kernel().size(), before);
  EXPECT_EQ((i * 2.0).type(), (ValueType{DType::I64, 1}));  // a whole number is exact
}
