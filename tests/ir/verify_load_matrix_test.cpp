// LOAD_MATRIX in the core: text round trip, builder, and the verifier's
// rules (LOCAL 16-bit storage, 1/2/4 matrices, rows of 16 bytes, whole warps
// and warp-uniform control flow as MMA).
#include <gtest/gtest.h>

#include "ir_samples.hpp"
#include "verify_expect.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

using namespace kiln;
using namespace kiln::ir;

namespace {

constexpr std::string_view kSample = samples::kLoadMatrix;

std::string sample_with(std::string_view line, std::string_view replacement) {
  return kiln::test::with_line_replaced(kSample, line, replacement);
}

using kiln::test::expect_rule;

}  // namespace

TEST(LoadMatrix, SampleRoundTripsAndVerifies) {
  const auto k = parse(kSample);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(print(*k), kSample);
  EXPECT_TRUE(verify(*k).ok()) << verify(*k).error().to_string();
  EXPECT_EQ((*k)[10].kind, OpKind::LoadMatrix);
  EXPECT_EQ((*k)[10].lanes, 8);
  EXPECT_EQ((*k)[10].attr, 4u);
  EXPECT_EQ((*k)[10].code, 0);
  EXPECT_EQ((*k)[11].lanes, 4);
  EXPECT_EQ((*k)[11].code, 1);
  EXPECT_EQ((*k)[12].dtype, DType::F16);
  Builder b;
  b.param(ParamKind::Global, DType::BF16, 64);
  const Value local = b.storage(Scope::Local, DType::BF16, 64);
  b.load_matrix(local, b.mul(b.local_index(0, 32), b.constant_i64(8)), 4, true);
  EXPECT_NE(print(b.finish()).find("load_matrix x4 trans bf16 %1[%5]"), std::string::npos);
}

TEST(LoadMatrix, VerifierRules) {
  expect_rule(sample_with("load_matrix x4 f16 %2[%6]", "load_matrix x4 f16 %0[%6]"), 10, "load-matrix-source",
              "reads LOCAL storage");
  expect_rule(sample_with("%12 = load_matrix x1 f16 %2[%6]", "%c1 = const i64 1\n%r = add i64 %6, %c1\n%12 = load_matrix x1 f16 %2[%r]"),
              14, "alignment", "multiples of 8");
  // Half a warp: inside an IF on the thread.
  expect_rule(sample_with("%10 = load_matrix x4 f16 %2[%6]\n",
                          "%c = cmplt %4, %5\nif %c\n%m = load_matrix x4 f16 %2[%6]\nendif\n%10 = load_matrix x4 f16 %2[%6]\n"),
              12, "mma-uniform", "load_matrix x4");
  // Not 32 threads.
  expect_rule(sample_with("%3 = const i64 32", "%3 = const i64 16"), 10, "mma-warp", "warps of 32 threads");
  const auto bad = parse(sample_with("load_matrix x4 f16", "load_matrix x3 f16"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("x1, x2 or x4"), std::string::npos) << bad.error().message;
}
