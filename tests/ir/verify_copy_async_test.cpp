// The asynchronous copy ops in the core: text round trip, builder, and the
// verifier's rules (LOCAL target, 16 bytes, a read of the copied elements
// before a copy_wait where it is certain, copy_wait's count).
#include <gtest/gtest.h>

#include "ir_samples.hpp"
#include "verify_expect.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

using namespace kiln;
using namespace kiln::ir;

namespace {

// The sample with one line replaced.
std::string sample_with(std::string_view line, std::string_view replacement) {
  return kiln::test::with_line_replaced(samples::kCopyAsync, line, replacement);
}

using kiln::test::expect_rule;

}  // namespace

TEST(CopyAsync, SampleRoundTripsAndVerifies) {
  const auto k = parse(samples::kCopyAsync);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(print(*k), samples::kCopyAsync);
  EXPECT_TRUE(verify(*k).ok()) << verify(*k).error().to_string();
  EXPECT_EQ((*k)[8].kind, OpKind::CopyAsync);
  EXPECT_EQ((*k)[8].dtype, DType::F32);
  EXPECT_EQ((*k)[8].lanes, 4);
  EXPECT_EQ((*k)[9].kind, OpKind::CopyCommit);
  EXPECT_EQ((*k)[10].kind, OpKind::CopyWait);
  EXPECT_EQ((*k)[10].attr, 0u);
}

TEST(CopyAsync, BuilderMakesTheSampleOps) {
  Builder b;
  const Value x = b.param(ParamKind::Global, DType::F32, 256);
  b.param(ParamKind::GlobalMut, DType::F32, 256);
  const Value local = b.storage(Scope::Local, DType::F32, 256);
  const Value t = b.local_index(0, 64);
  const Value at = b.mul(t, b.constant_i64(4));
  b.copy_async(local, at, b.load(x, at, 4));
  b.copy_commit();
  b.copy_wait(2);
  const Kernel k = b.finish();
  const auto text = print(k);
  EXPECT_NE(text.find("copy_async f32x4 %2[%6], %7\ncopy_commit\ncopy_wait 2\n"), std::string::npos) << text;
}

TEST(CopyAsync, VerifierRules) {
  // Into a global buffer instead of LOCAL storage.
  expect_rule(sample_with("copy_async f32x4 %2[%6], %7", "copy_async f32x4 %1[%6], %7"), 8, "copy-async-target",
              "not LOCAL storage");
  // 8 bytes instead of 16.
  expect_rule(sample_with("%7 = load f32x4 %0[%6]\ncopy_async f32x4 %2[%6], %7",
                          "%7 = load f32x2 %0[%6]\ncopy_async f32x2 %2[%6], %7"),
              8, "copy-async-size", "exactly 16 bytes");
  // The copied elements read before any copy_wait, in the same block.
  expect_rule(sample_with("copy_wait 0\n", "%10 = load f32x4 %2[%6]\ncopy_wait 0\n"), 8, "copy-async-wait",
              "op 10 reads the copied elements before a copy_wait");
  // copy_wait leaves at most 7 groups pending.
  expect_rule(sample_with("copy_wait 0", "copy_wait 8"), 10, "copy-wait-groups", "at most 7");
}

TEST(CopyAsync, TextErrors) {
  const auto k = parse(sample_with("copy_wait 0", "copy_wait"));
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message.find("copy groups"), std::string::npos) << k.error().message;
}
