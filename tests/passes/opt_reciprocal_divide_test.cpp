// reciprocal_divide(): an f32/f64 division in a loop by a value from outside
// the loop becomes a multiplication by its reciprocal, computed once before
// the loop (LICM); results within the kernels' tolerance of the division's.
#include "passes/opt_perf_support.hpp"

#include "kiln/ir/dtype.hpp"

#include <gmock/gmock.h>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

const Optimization& reciprocal_divide() { return *find_optimization("reciprocal_divide"); }

// y[j] = x[j] / s for a sum s of x: softmax's writing loop, shortened.
constexpr std::string_view kScaleRow = R"(
%x = param 0 global f32[6]
%y = param 1 global_mut f32[6]
%n = const i64 6
%one = const i64 1
%g = index group 0 %one
%zero = const f32 0
%acc = storage register f32[1]
%at = const i64 0
store %acc[%at], %zero
%j = loop %n
  %v = load f32 %x[%j]
  %s = load f32 %acc[%at]
  %t = add %s, %v
  store %acc[%at], %t
endloop
%sum = load f32 %acc[%at]
%k = loop %n
  %w = load f32 %x[%k]
  %q = div %w, %sum
  store %y[%k], %q
endloop
)";

std::size_t count_binary(const ir::Kernel& k, ir::BinaryOp code) {
  return static_cast<std::size_t>(std::count_if(k.ops.begin(), k.ops.end(), [&](const ir::Op& op) {
    return op.kind == ir::OpKind::Binary && op.binary() == code;
  }));
}

}  // namespace

TEST(ReciprocalDivide, DivisionByALoopInvariantBecomesAProductWithItsReciprocal) {
  const ir::Kernel before = parse_valid(kScaleRow);
  EXPECT_THAT(config_texts(reciprocal_divide(), before, gpu_preset()), ElementsAre("reciprocal_divide()"));
  const ir::Kernel after = applied(before, "reciprocal_divide()", gpu_preset());
  EXPECT_EQ(count_binary(after, ir::BinaryOp::Div), 0u) << ir::print(after);
  // Once normalized, the reciprocal is computed once, before the writing
  // loop (LICM), the product in it.
  const std::string text = ir::print(normalize(after, gpu_preset()));
  const std::size_t recip = text.find("recip f32");
  ASSERT_NE(recip, std::string::npos) << text;
  EXPECT_LT(recip, text.rfind("= loop ")) << text;  // before the last (the writing) loop
  EXPECT_EQ(compare_runs(before, after, {}, 4e-7), "");
  // Applied, nothing is left for a second step.
  EXPECT_TRUE(reciprocal_divide().configs(after, gpu_preset()).empty());
  EXPECT_THAT(step_error_message(after, "reciprocal_divide()", gpu_preset()), HasSubstr("no f32/f64 division"));
  EXPECT_THAT(step_error_message(before, "reciprocal_divide(loop=0)", gpu_preset()), HasSubstr("loop"));
}

TEST(ReciprocalDivide, LeavesDivisionsItCannotHoistAndHalves) {
  // The divisor changes in the loop: every element its own division.
  std::string varying(kScaleRow);
  varying.replace(varying.find("%q = div %w, %sum"), 17, "%q = div %sum, %w");
  EXPECT_TRUE(reciprocal_divide().configs(parse_valid(varying), gpu_preset()).empty());
  // Outside any loop there is nothing to save.
  const ir::Kernel flat = parse_valid(R"(
%x = param 0 global f32[2]
%y = param 1 global_mut f32[1]
%zero = const i64 0
%one = const i64 1
%g = index group 0 %one
%a = load f32 %x[%zero]
%b = load f32 %x[%one]
%q = div %a, %b
store %y[%zero], %q
)");
  EXPECT_TRUE(reciprocal_divide().configs(flat, gpu_preset()).empty());
  // f16 arithmetic: a 16-bit reciprocal overflows for small divisors.
  std::string half(kScaleRow);
  for (std::size_t at; (at = half.find("f32")) != std::string::npos;) half.replace(at, 3, "f16");
  EXPECT_TRUE(reciprocal_divide().configs(parse_valid(half), gpu_preset()).empty());
}

TEST(ReciprocalDivide, SoftmaxInEveryDtypeStaysWithinTolerance) {
  for (ir::DType dtype : {ir::DType::F32, ir::DType::F16, ir::DType::BF16, ir::DType::F64}) {
    const kernels::StandardKernel k = standard("softmax-rows", {.m = 5, .n = 333}, dtype);
    const ir::Kernel after = applied(k.kernel, "reciprocal_divide()", gpu_preset());
    EXPECT_EQ(count_binary(after, ir::BinaryOp::Div), 0u) << ir::dtype_name(dtype);
    EXPECT_EQ(compare_standard(k, after, 17), "") << ir::dtype_name(dtype);
  }
}
