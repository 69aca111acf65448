// The MMA op in the core: text round trip (and its parse errors), the
// verifier's rules (shape, input dtype, fragment types, whole warps,
// warp-uniform control flow, with the warp number allowed as a condition),
// and the hash seeing shape and input dtype.
#include <gtest/gtest.h>

#include "ir_samples.hpp"
#include "verify_expect.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/hash.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

using namespace kiln;
using namespace kiln::ir;

namespace {

// A warp-per-tile kernel: `threads` on LOCAL axis 0, `body` text between the
// fragment loads (%12 A f16x8, %13 B f16x4, %18 C f32x4; %5 the thread) and
// the store of %R, the text's last value (substituted).
std::string kernel_text(int threads, const std::string& body, const std::string& result) {
  std::string text = std::string(samples::kMma);
  text = text.substr(0, text.find("%19 = "));
  const std::string from = "%4 = const i64 32";
  text.replace(text.find(from), from.size(), "%4 = const i64 " + std::to_string(threads));
  // Buffers sized for the threads (the verifier proves accesses in range).
  for (const auto& [size, per_thread] : {std::pair{"[256]", 8}, std::pair{"[128]", 4}})
    for (std::size_t at = text.find(size); at != std::string::npos; at = text.find(size, at + 1))
      text.replace(at, std::string(size).size(), "[" + std::to_string(threads * per_thread) + "]");
  return text + body + "store f32x4 %3[%9], " + result + "\n";
}

using kiln::test::expect_rule;

}  // namespace

TEST(Mma, SampleRoundTripsAndVerifies) {
  const auto k = parse(samples::kMma);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(print(*k), samples::kMma);
  EXPECT_TRUE(verify(*k).ok()) << verify(*k).error().to_string();
  const Op& tf32 = (*k)[21];
  EXPECT_EQ(tf32.kind, OpKind::Mma);
  EXPECT_EQ(tf32.mma_shape(), MmaShape::M16N8K8);
  EXPECT_EQ(tf32.attr, static_cast<std::uint32_t>(DType::F32));
  EXPECT_EQ(tf32.dtype, DType::F32);
  EXPECT_EQ(tf32.lanes, 4);
}

TEST(Mma, BuilderMakesTheSampleOp) {
  Builder b;
  const Value a = b.param(ParamKind::Global, DType::BF16, 512);
  const Value c = b.param(ParamKind::GlobalMut, DType::F32, 256);
  const Value tid = b.local_index(0, 64);
  const Value fa = b.load(a, b.mul(tid, b.constant_i64(8)), 8);
  const Value fb = b.load(a, b.mul(tid, b.constant_i64(4)), 4);
  const Value at = b.mul(tid, b.constant_i64(4));
  const Value d = b.mma(MmaShape::M16N8K16, fa, fb, b.load(c, at, 4));
  b.store(c, at, d);
  const Kernel k = b.finish();
  EXPECT_TRUE(verify(k).ok()) << verify(k).error().to_string();
  EXPECT_NE(print(k).find("mma m16n8k16 bf16"), std::string::npos) << print(k);
}

TEST(Mma, ParseErrorsNameTheShapeOrType) {
  const std::string base = kernel_text(32, "", "%18");
  for (const auto& [line, want] : std::vector<std::pair<std::string, std::string>>{
           {"%19 = mma m16n8k4 f16 %12, %13, %18\n", "an mma shape"},
           {"%19 = mma m16n8k16 tf32 %12, %13, %18\n", "f16 or bf16"},
           {"%19 = mma m16n8k8 f16 %12, %13, %18\n", "tf32"}}) {
    const auto parsed = parse(kernel_text(32, line, "%19"));
    ASSERT_FALSE(parsed.ok()) << line;
    EXPECT_NE(parsed.error().message.find(want), std::string::npos) << parsed.error().message;
  }
}

TEST(Mma, RuleTypes) {
  expect_rule(kernel_text(32, "%19 = mma m16n8k16 f16 %13, %13, %18\n", "%19"), 19, "mma-type", "A must be f16x8, got f16x4");
  expect_rule(kernel_text(32, "%19 = mma m16n8k16 f16 %12, %12, %18\n", "%19"), 19, "mma-type", "B must be f16x4");
  expect_rule(kernel_text(32, "%19 = mma m16n8k16 bf16 %12, %13, %18\n", "%19"), 19, "mma-type", "A must be bf16x8");
  expect_rule(kernel_text(32, "%19 = mma m16n8k8 tf32 %16, %17, %17\n", "%19"), 19, "mma-type", "C must be f32x4");
  // Raw ops: a shape that does not exist, an input dtype the shape lacks, a result that is not f32x4.
  expect_rule(kernel_text(32, "%19 = raw kind=20 dtype=3 lanes=4 code=3 attr=2 src=%12,%13,%18 reserved=0 imm=0x0\n", "%19"),
              19, "mma-shape", "unknown mma shape 3");
  expect_rule(kernel_text(32, "%19 = raw kind=20 dtype=3 lanes=4 code=1 attr=3 src=%12,%13,%18 reserved=0 imm=0x0\n", "%19"),
              19, "mma-type", "takes f16 or bf16 inputs");
  expect_rule(kernel_text(32, "%19 = raw kind=20 dtype=3 lanes=2 code=1 attr=2 src=%12,%13,%18 reserved=0 imm=0x0\n", "%19"),
              19, "mma-type", "gives f32x4, not f32x2");
}

TEST(Mma, RuleWholeWarps) {
  expect_rule(kernel_text(48, "%19 = mma m16n8k16 f16 %12, %13, %18\n", "%19"), 19, "mma-warp", "(it has 48)");
  EXPECT_TRUE(verify(parse(kernel_text(96, "%19 = mma m16n8k16 f16 %12, %13, %18\n", "%19")).value()).ok());
}

TEST(Mma, RuleWarpUniformControlFlow) {
  // A condition on the thread id: half of a warp would skip the MMA.
  expect_rule(kernel_text(64, "%19 = const i64 16\n%20 = cmplt bool %5, %19\nif %20\n  %22 = mma m16n8k16 f16 %12, %13, %18\nendif\n",
                          "%18"),
              22, "mma-uniform", "inside the if at op 21, whose condition may differ between the threads of a warp");
  // A trip count loaded from a fragment (per-thread data).
  expect_rule(kernel_text(32, "%19 = extract f32 %18[0]\n%20 = cast i64 %19\n%21 = loop %20\n  %22 = mma m16n8k16 f16 %12, %13, %18\nendloop %21\n",
                          "%18"),
              22, "mma-uniform", "inside the loop at op 21, whose trip count may differ");
  // The warp number (thread / 32) is the same in a whole warp: allowed, as
  // is a condition on a LOCAL axis other than 0.
  const std::string by_warp =
      kernel_text(64, "%19 = const i64 32\n%20 = div i64 %5, %19\n%21 = const i64 1\n%22 = cmplt bool %20, %21\nif %22\n"
                      "  %24 = mma m16n8k16 f16 %12, %13, %18\n  store f32x4 %3[%9], %24\nendif\n", "%18");
  EXPECT_TRUE(verify(parse(by_warp).value()).ok()) << verify(parse(by_warp).value()).error().to_string();
  const std::string by_shift =
      kernel_text(64, "%19 = const i64 5\n%20 = shr i64 %5, %19\n%21 = const i64 1\n%22 = cmplt bool %20, %21\nif %22\n"
                      "  %24 = mma m16n8k16 f16 %12, %13, %18\n  store f32x4 %3[%9], %24\nendif\n", "%18");
  EXPECT_TRUE(verify(parse(by_shift).value()).ok()) << verify(parse(by_shift).value()).error().to_string();
  // ... but thread / 16 is not.
  expect_rule(kernel_text(64, "%19 = const i64 16\n%20 = div i64 %5, %19\n%21 = const i64 1\n%22 = cmplt bool %20, %21\nif %22\n"
                              "  %24 = mma m16n8k16 f16 %12, %13, %18\nendif\n", "%18"),
              24, "mma-uniform", "differ between the threads of a warp");
}

TEST(Mma, HashSeesShapeAndInputDtype) {
  const Kernel k = parse(samples::kMma).value();
  Kernel other = k;
  other[20].attr = static_cast<std::uint32_t>(DType::F16);
  EXPECT_NE(hash(k), hash(other));
}
