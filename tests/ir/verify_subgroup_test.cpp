// SUBGROUP_REDUCE in the core: the text form round trips (and refuses a
// reduction it lacks), the builder infers the operand's type, and the
// verifier refuses misuse with an error naming the op and the rule: a bad
// reduction or width, a group of threads that is no multiple of the width,
// use under thread-dependent control flow, and a bool or vector operand. An
// IF the same in every thread of the group is fine.
#include <gtest/gtest.h>

#include "kiln/ir/builder.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

using namespace kiln;
using namespace kiln::ir;

namespace {

// `threads` on LOCAL axis 0 in 2 groups, each reducing its element of x
// with `lines` (which define %r from %v), inside `open` ... `close`.
std::string kernel_text(int threads, const std::string& lines, const std::string& open = "",
                        const std::string& close = "") {
  const std::string n = std::to_string(threads);
  return "%x = param 0 global_mut f32[" + n + "]\n%two = const i64 2\n%g = index group 0 %two\n%n = const i64 " + n +
         "\n%t = index local 0 %n\n%v = load f32 %x[%t]\n%sixteen = const i64 16\n%low = cmplt %t, %sixteen\n"
         "%zero = const i64 0\n%first = eq %g, %zero\n" +
         open + lines + "\nstore %x[%t], %r\n" + close;
}

void expect_rule(const std::string& text, std::string_view rule, std::string_view fragment) {
  SCOPED_TRACE(text);
  auto kernel = parse(text);
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  const auto result = verify(*kernel);
  ASSERT_FALSE(result.ok());
  const ValueId op = result.error().op;
  ASSERT_LT(op, kernel->size());
  EXPECT_EQ((*kernel)[op].kind, OpKind::SubgroupReduce) << result.error().to_string();
  EXPECT_NE(result.error().message.find("rule " + std::string(rule) + ":"), std::string::npos) << result.error().to_string();
  EXPECT_NE(result.error().message.find(fragment), std::string::npos) << result.error().to_string();
}

}  // namespace

TEST(SubgroupReduce, TextRoundTripsAndVerifies) {
  const std::string text = kernel_text(64, "%r = subgroup_reduce max 32 f32 %v");
  const auto k = parse(text);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_TRUE(verify(*k).ok()) << verify(*k).error().to_string();
  const std::string printed = print(*k);
  EXPECT_NE(printed.find("subgroup_reduce max 32 f32 %"), std::string::npos) << printed;
  const auto again = parse(printed);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, *k);
  // The type may be left out (it is the operand's); a reduction it lacks is a parse error.
  EXPECT_TRUE(parse(kernel_text(64, "%r = subgroup_reduce add 8 %v")).ok());
  const auto sub = parse(kernel_text(64, "%r = subgroup_reduce sub 8 %v"));
  ASSERT_FALSE(sub.ok());
  EXPECT_NE(sub.error().message.find("a reduction (add, mul, max or min)"), std::string::npos) << sub.error().message;
}

TEST(SubgroupReduce, BuilderGivesTheOperandsType) {
  Builder b;
  const Value x = b.param(ParamKind::GlobalMut, DType::I32, 32);
  const Value t = b.local_index(0, 32);
  const Value v = b.load(x, t);
  const Value r = b.subgroup_reduce(BinaryOp::Add, v, 16);
  b.store(x, t, r);
  const Kernel k = b.finish();
  EXPECT_EQ(k[r.id].dtype, DType::I32);
  EXPECT_EQ(k[r.id].attr, 16u);
  EXPECT_EQ(k[r.id].code, static_cast<std::uint8_t>(BinaryOp::Add));
  EXPECT_TRUE(verify(k).ok()) << verify(k).error().to_string();
}

TEST(SubgroupReduce, VerifierRefusesMisuseNamingTheOp) {
  expect_rule(kernel_text(64, "%r = subgroup_reduce add 48 f32 %v"), "subgroup-width", "power of two from 2 to 64, not 48");
  expect_rule(kernel_text(128, "%r = subgroup_reduce add 128 f32 %v"), "subgroup-width", "not 128");
  expect_rule(kernel_text(48, "%r = subgroup_reduce add 32 f32 %v"), "subgroup-group",
              "the work-group's 48 threads are not a multiple");
  expect_rule(kernel_text(64, "%r = subgroup_reduce add 32 f32 %v", "if %low\n", "endif\n"), "subgroup-uniform",
              "may differ between the threads of a work-group");
  expect_rule(kernel_text(64, "%b = cmplt %v, %v\n%c = subgroup_reduce max 32 bool %b\n%r = select %c, %v, %v"),
              "subgroup-type", "reduces a scalar number, not bool");
  expect_rule(kernel_text(64, "%w = broadcast f32x4 %v\n%s = subgroup_reduce add 32 f32x4 %w\n%r = extract %s[0]"),
              "subgroup-type", "not f32x4");
  // A reduction it lacks, in the wire form the text cannot write.
  auto k = parse(kernel_text(64, "%r = subgroup_reduce add 32 f32 %v"));
  ASSERT_TRUE(k.ok());
  for (Op& op : k->ops)
    if (op.kind == OpKind::SubgroupReduce) op.code = static_cast<std::uint8_t>(BinaryOp::Sub);
  const auto result = verify(*k);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("rule subgroup-reduction: subgroup_reduce takes add, mul, max or min, not sub"),
            std::string::npos)
      << result.error().to_string();
  // Under an IF the same in every thread of the group: allowed.
  const auto uniform = parse(kernel_text(64, "%r = subgroup_reduce add 32 f32 %v", "if %first\n", "endif\n"));
  ASSERT_TRUE(uniform.ok());
  EXPECT_TRUE(verify(*uniform).ok()) << verify(*uniform).error().to_string();
}
