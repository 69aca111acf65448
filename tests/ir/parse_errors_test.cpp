// Malformed text: each input gets its own error at the right line:col with
// what was expected, and nothing crashes.
#include <gtest/gtest.h>

#include "kiln/ir/text.hpp"

#include <string>

using namespace kiln;

namespace {

struct BadText {
  const char* text;
  const char* position;  // "line:col"
  const char* fragment;  // part of the message after the position
};

const BadText kBadTexts[] = {
    {"%0 = frob f32 %1\n", "1:6", "expected an op name (const, param, load, add, ...), got 'frob'"},
    {"%0 = const f33 1\n", "1:12", "expected a type (f32, i64, f32x4, bool, ...), got 'f33'"},
    {"%0 = const i8 300\n", "1:15", "'300' is out of range for i8"},
    {"%0 = const u8 -1\n", "1:15", "'-1' is out of range for u8"},
    {"%0 = const f32 1.5.2\n", "1:16", "'1.5.2' is not a number"},
    {"%0 = const f32 1e39\n", "1:16", "'1e39' is out of range for f32"},
    {"%0 = const f16 70000\n", "1:16", "out of range for f16"},
    {"%0 = const bool maybe\n", "1:17", "expected true or false for bool"},
    {"%0 = const i64 $\n", "1:16", "expected a constant value, got '$'"},
    {"%0 = const f32 nan(0x3f800000)\n", "1:20", "expected the bits of a f32 NaN, got '0x3f800000'"},
    {"%0 = const f16x2 1\n", "1:12", "expected a scalar type, got 'f16x2' (const is a scalar; use broadcast"},
    {"%0 = const i64 1 2\n", "1:18", "expected end of line, got '2'"},
    {"%0 = const i64 1\n%1 = add %0, %2\n", "2:14", "expected a value defined above, got '%2'"},
    {"%0 = const i64 1\n%0 = const i64 2\n", "2:1", "expected a new name, got '%0' (%0 is already defined on line 1)"},
    {"= const i64 1\n", "1:1", "expected an op name or %name =, got '='"},
    {"%0 const i64 1\n", "1:4", "expected '=', got 'const'"},
    {"%0 = param 0 global f32[12\n", "1:27", "expected ']', got end of line"},
    {"%0 = param 0 vector f32[1]\n", "1:14", "expected a param kind (global, global_mut or var), got 'vector'"},
    {"%0 = param 0 global f32x4[1]\n", "1:21", "expected a scalar type, got 'f32x4'"},
    {"%0 = storage group f32[4]\n", "1:14", "expected a storage scope (local or register), got 'group'"},
    {"%0 = const i64 4\n%1 = index warp 0 %0\n", "2:12", "expected an index scope (group or local), got 'warp'"},
    {"%0 = const i64 4\n%1 = index group %0\n", "2:18", "expected an axis (0, 1 or 2), got '%0'"},
    {"endif\n", "1:1", "got 'endif' (endif closes nothing: no loop or if is open)"},
    {"%n = const i64 2\n%l = loop %n\nendif\n", "3:1", "expected endloop, got 'endif' (the innermost open block is the loop on line 2)"},
    {"%c = const bool true\nif %c\nendloop\n", "3:1", "expected endif, got 'endloop' (the innermost open block is the if on line 2)"},
    {"%0 = param 0 global_mut f32[1]\n%1 = const i64 0\nstore f32 %0[%1] %1\n", "3:18", "expected ',', got '%1'"},
    {"%0 = const i64 0\n%s = store f32 %0[%0], %0\n", "2:1", "store has no value to name; remove '%s ='"},
    {"%0 = const f32 1\n%1 = broadcast %0\n", "2:16", "expected a type (f32, i64, f32x4, bool, ...), got '%0'"},
    {"%0 = const f32 1\n%1 = broadcast f32x4 %0\n%2 = insert f32x4 %1[x], %0\n", "3:22", "expected a lane number, got 'x'"},
    {"%0 = const f32 1\n%1 = add f32x99999 %0, %0\n", "2:10", "expected a type"},
    {"%0 = load f32\n", "1:14", "expected a value (%name), got end of line"},
    {"%0 = const i64 1 # a comment does not hide this:\n%1 = neg i64 %0 %0\n", "2:17", "expected end of line, got '%0'"},
    {"raw kind=1 kind=2\n", "1:12", "expected a raw field not given before, got 'kind'"},
    {"raw dtype=3\n", "1:12", "expected kind=, got end of line"},
    {"raw kind=300\n", "1:10", "'300' is out of range (at most 255)"},
    {"raw kind=1 src=@1,@2\n", "1:21", "expected ',', got end of line"},
    {"raw kind=1 src=@1,#,_\n", "1:19", "expected an operand (%name, @N or _), got end of line"},
    {"raw kind=1 colour=3\n", "1:12", "expected a raw field (kind, dtype, lanes, code, attr, src, reserved, imm), got 'colour'"},
    {"%0 = const i64 1\n\xc3\xa9 = 2\n", "2:1", "got '\xc3\xa9'"},
};

}  // namespace

TEST(ParseErrors, EachBadInputNamesItsPositionAndWhatWasExpected) {
  for (const BadText& bad : kBadTexts) {
    SCOPED_TRACE(bad.text);
    const auto result = ir::parse(bad.text);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::Parse);
    const std::string& message = result.error().message;
    EXPECT_EQ(message.substr(0, message.find(": ")), bad.position) << message;
    EXPECT_NE(message.find(bad.fragment), std::string::npos) << message;
  }
}

TEST(ParseErrors, EmptyAndCommentOnlyTextsAreEmptyKernels) {
  for (const char* text : {"", "\n\n", "# nothing here\n   \n\t# still nothing"}) {
    const auto result = ir::parse(text);
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_EQ(result->size(), 0u);
  }
}

TEST(ParseErrors, TruncatedKernelsFailOrParseButNeverCrash) {
  const std::string text = "%0 = param 0 global f32[8]\n%1 = param 1 global_mut f32[8]\n%2 = const i64 8\n"
                           "%3 = index group 0 %2\n%4 = load f32 %0[%3]\n%5 = const f32 nan(0x7fc00001)\n"
                           "%6 = add f32 %4, %5\nstore f32 %1[%3], %6\n";
  for (std::size_t length = 0; length <= text.size(); ++length) {
    const auto result = ir::parse(std::string_view(text).substr(0, length));
    if (result.ok()) {
      EXPECT_EQ(ir::parse(ir::print(*result)).value(), *result);
    }
  }
}

// Blocks nested past the parser's limit are refused at the line that opens
// one too many, naming the limit, whatever the nesting that follows (a
// hundred thousand levels once took the tools minutes and gigabytes).
std::string nested_loops(std::size_t depth) {
  std::string text = "%n = const i64 2\n";
  for (std::size_t i = 0; i < depth; ++i) text += "%l" + std::to_string(i) + " = loop %n\n";
  for (std::size_t i = 0; i < depth; ++i) text += "endloop\n";
  return text;
}

TEST(ParseErrors, NestingPastTheLimitIsRefusedNamingIt) {
  const auto deepest = ir::parse(nested_loops(ir::kMaxTextNesting));
  ASSERT_TRUE(deepest.ok()) << deepest.error().message;
  EXPECT_EQ(ir::parse(ir::print(*deepest)).value(), *deepest);

  const auto too_deep = ir::parse(nested_loops(ir::kMaxTextNesting + 1));
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.error().message,
            std::to_string(ir::kMaxTextNesting + 2) + ":1: expected at most 256 nested loop and if blocks, got '%l256' "
            "(the text form's nesting limit)");

  std::string ifs = "%c = const bool true\n";
  for (int i = 0; i < 100000; ++i) ifs += "if %c\n";
  const auto hundred_thousand = ir::parse(ifs);
  ASSERT_FALSE(hundred_thousand.ok());
  EXPECT_EQ(hundred_thousand.error().message.substr(0, 4), "258:");
}
