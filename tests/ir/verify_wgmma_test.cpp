// WGMMA in the core: text round trip, builder, and the verifier's rules
// (16-bit LOCAL tiles, the i64x2 tile pair, the REGISTER f32 accumulator of
// N / 2 elements or more, N, warp groups of 128 threads, group-uniform
// control flow, at most 7 groups left pending).
#include <gtest/gtest.h>

#include "ir_samples.hpp"
#include "verify_expect.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

using namespace kiln;
using namespace kiln::ir;

namespace {

constexpr std::string_view kSample = samples::kWgmma;

std::string sample_with(std::string_view line, std::string_view replacement) {
  return kiln::test::with_line_replaced(kSample, line, replacement);
}

using kiln::test::expect_rule;

// The sample in f32 (the tf32 form's storage and loads), its WGMMA still f16.
std::string f32_sample() {
  std::string f32 = kiln::test::with_line_replaced(kSample, "%0 = param 0 global f16[8192]", "%0 = param 0 global f32[8192]");
  f32 = kiln::test::with_line_replaced(f32, "%2 = storage local f16[8192]", "%2 = storage local f32[8192]");
  f32 = kiln::test::with_line_replaced(f32, "%8 = load f16x8 %0[%7]", "%8 = load f32x8 %0[%7]");
  return kiln::test::with_line_replaced(f32, "store f16x8 %2[%7], %8", "store f32x8 %2[%7], %8");
}

}  // namespace

TEST(Wgmma, SampleRoundTripsAndVerifies) {
  const auto k = parse(kSample);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(print(*k), kSample);
  EXPECT_TRUE(verify(*k).ok()) << verify(*k).error().to_string();
  EXPECT_EQ((*k)[19].kind, OpKind::Wgmma);
  EXPECT_EQ((*k)[19].attr, 8u);
  EXPECT_EQ((*k)[19].dtype, DType::F16);
  EXPECT_FALSE((*k)[19].has_result());
  EXPECT_EQ((*k)[21].kind, OpKind::WgmmaWait);
  Builder b;
  b.param(ParamKind::Global, DType::BF16, 64);
  const Value local = b.storage(Scope::Local, DType::BF16, 8192);
  const Value acc = b.storage(Scope::Register, DType::F32, 64);
  b.local_index(0, 128);
  const Value tiles = b.insert(b.broadcast(b.constant_i64(0), 2), b.constant_i64(4096), 1);
  b.wgmma_fence();
  b.wgmma(local, tiles, acc, 128);
  b.wgmma_commit();
  b.wgmma_wait(1);
  const std::string text = print(b.finish());
  EXPECT_NE(text.find("wgmma n128 bf16 %1[%"), std::string::npos) << text;
  EXPECT_NE(text.find("wgmma_wait 1"), std::string::npos) << text;
}

TEST(Wgmma, VerifierRules) {
  const std::string op = "wgmma n8 f16 %2[%18], %3";
  expect_rule(sample_with(op, "wgmma n12 f16 %2[%18], %3"), 19, "wgmma-n", "multiple of 8");
  expect_rule(sample_with(op, "wgmma n264 f16 %2[%18], %3"), 19, "wgmma-n", "multiple of 8");
  expect_rule(sample_with(op, "wgmma n8 f16 %0[%18], %3"), 19, "wgmma-source", "LOCAL storage");
  expect_rule(sample_with(op, "wgmma n8 bf16 %2[%18], %3"), 19, "wgmma-type", "typed as its storage");
  expect_rule(sample_with(op, "wgmma n8 f16 %2[%16], %3"), 19, "wgmma-tiles", "i64x2");
  expect_rule(sample_with(op, "wgmma n16 f16 %2[%18], %3"), 19, "wgmma-accumulator", "at least 8 elements");
  expect_rule(sample_with(op, "wgmma n8 f16 %2[%18], %2"), 19, "wgmma-accumulator", "REGISTER f32");
  expect_rule(sample_with("wgmma_wait 0", "wgmma_wait 8"), 21, "wgmma-wait-groups", "at most 7");
  expect_rule(sample_with("%4 = const i64 128", "%4 = const i64 64"), 15, "wgmma-group", "multiple of 128");
  // Under a condition that differs between the threads of the group.
  expect_rule(sample_with(op, "%c = cmplt %5, %6\nif %c\n" + op + "\nendif"), 21, "wgmma-uniform",
              "may differ between the threads of a work-group");
}

TEST(Wgmma, Tf32FormIsF32StorageTypedAsIt) {
  // The tf32 form: f32 storage and op (kernel_ir.h); other 32-bit types are not.
  const std::string f32 = f32_sample();
  const std::string tf32 = kiln::test::with_line_replaced(f32, "wgmma n8 f16 %2[%18], %3", "wgmma n8 f32 %2[%18], %3");
  const auto k = parse(tf32);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_TRUE(verify(*k).ok()) << verify(*k).error().to_string();
  EXPECT_EQ((*k)[19].dtype, DType::F32);
  std::string i32 = kiln::test::with_line_replaced(tf32, "%0 = param 0 global f32[8192]", "%0 = param 0 global i32[8192]");
  i32 = kiln::test::with_line_replaced(i32, "%2 = storage local f32[8192]", "%2 = storage local i32[8192]");
  i32 = kiln::test::with_line_replaced(i32, "%8 = load f32x8 %0[%7]", "%8 = load i32x8 %0[%7]");
  i32 = kiln::test::with_line_replaced(i32, "store f32x8 %2[%7], %8", "store i32x8 %2[%7], %8");
  expect_rule(kiln::test::with_line_replaced(i32, "wgmma n8 f32 %2[%18], %3", "wgmma n8 i32 %2[%18], %3"), 19, "wgmma-type",
              "f16, bf16 or f32 (as tf32)");
}

TEST(Wgmma, Tf32AFromRegistersIsCodeOne) {
  // A from registers (code 1, text "a_regs"): the tf32 form only, its 4
  // fragment elements past the accumulator's N / 2 in the same storage.
  const std::string f32 = kiln::test::with_line_replaced(f32_sample(), "%3 = storage register f32[4]", "%3 = storage register f32[8]");
  const std::string rs = kiln::test::with_line_replaced(f32, "wgmma n8 f16 %2[%18], %3", "wgmma n8 a_regs f32 %2[%18], %3");
  const auto k = parse(rs);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_TRUE(verify(*k).ok()) << verify(*k).error().to_string();
  EXPECT_EQ((*k)[19].code, 1u);
  EXPECT_EQ(print(*k), rs);
  expect_rule(kiln::test::with_line_replaced(rs, "%3 = storage register f32[8]", "%3 = storage register f32[7]"), 19,
              "wgmma-accumulator", "at least 8 elements (A's fragments past the accumulator)");
  expect_rule(sample_with("wgmma n8 f16 %2[%18], %3", "wgmma n8 a_regs f16 %2[%18], %3"), 19, "wgmma-a-registers",
              "the tf32 form's (f32) only");
  Builder b;
  b.param(ParamKind::Global, DType::F32, 64);
  const Value local = b.storage(Scope::Local, DType::F32, 8192);
  const Value acc = b.storage(Scope::Register, DType::F32, 68);
  b.local_index(0, 128);
  const Value tiles = b.insert(b.broadcast(b.constant_i64(64), 2), b.constant_i64(4096), 1);
  b.wgmma_fence();
  b.wgmma(local, tiles, acc, 128, true);
  const std::string text = print(b.finish());
  EXPECT_NE(text.find("wgmma n128 a_regs f32 %1[%"), std::string::npos) << text;
}
