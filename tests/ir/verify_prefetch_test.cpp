// The PREFETCH op in the core: text round trip, builder, and the verifier's
// rules (a buffer param, one element of its dtype, an i64 index anywhere).
#include <gtest/gtest.h>

#include "ir_samples.hpp"
#include "verify_expect.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

using namespace kiln;
using namespace kiln::ir;

namespace {

std::string sample_with(std::string_view line, std::string_view replacement) {
  return kiln::test::with_line_replaced(samples::kPrefetch, line, replacement);
}

using kiln::test::expect_rule;

}  // namespace

TEST(Prefetch, SampleRoundTripsAndVerifies) {
  const auto k = parse(samples::kPrefetch);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(print(*k), samples::kPrefetch);
  EXPECT_TRUE(verify(*k).ok()) << verify(*k).error().to_string();
  EXPECT_EQ((*k)[10].kind, OpKind::Prefetch);
  EXPECT_EQ((*k)[10].dtype, DType::F32);
  EXPECT_EQ((*k)[10].lanes, 1);
  EXPECT_FALSE((*k)[10].has_result());
  // Its index reaches past the buffer (group 3 prefetches element 64..76):
  // that is allowed (the sample verifies, above), unlike a load's.
  expect_rule(sample_with("  %11 = load f32x4 %0[%8]", "  %11 = load f32x4 %0[%9]"), 11, "index-range", "");
}

TEST(Prefetch, BuilderMakesTheOp) {
  Builder b;
  const Value x = b.param(ParamKind::Global, DType::BF16, 64);
  b.prefetch(x, b.constant_i64(100));
  const Kernel k = b.finish();
  EXPECT_TRUE(verify(k).ok()) << verify(k).error().to_string();
  EXPECT_NE(print(k).find("prefetch bf16 %0[%1]"), std::string::npos) << print(k);
}

TEST(Prefetch, VerifierRules) {
  // Storage is not prefetched.
  {
    Builder b;
    const Value local = b.storage(Scope::Register, DType::F32, 4);
    b.prefetch(local, b.constant_i64(0));
    const auto result = verify(b.finish());
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find("rule prefetch-target:"), std::string::npos) << result.error().to_string();
    EXPECT_NE(result.error().message.find("not a buffer param"), std::string::npos) << result.error().to_string();
  }
  // One element of the param's dtype.
  expect_rule(sample_with("prefetch f32 %0[%9]", "prefetch f32x4 %0[%9]"), 10, "prefetch-type", "one element");
  // An i64 index.
  expect_rule(sample_with("  %9 = add i64 %8, %4", "  %9 = cast i32 %8"), 10, "index-type", "must be i64");
  // A value is not memory.
  expect_rule(sample_with("prefetch f32 %0[%9]", "prefetch f32 %9[%9]"), 10, "operand-memory", "not a buffer param or storage");
}
