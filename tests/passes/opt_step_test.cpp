// The text form of optimization steps and sequences: round trips, blanks,
// and errors that name the column.
#include "kiln/passes/optimization.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using kiln::passes::OptSequence;
using kiln::passes::OptStep;
using ::testing::HasSubstr;

TEST(OptStep, PrintsNameAndParametersInOrder) {
  OptStep step{"split_local", {{"axis", 0}, {"factor", 256}}};
  EXPECT_EQ(step.to_string(), "split_local(axis=0,factor=256)");
  EXPECT_EQ((OptStep{"vectorize", {}}.to_string()), "vectorize()");
  EXPECT_EQ(step.param("factor"), 256);
  EXPECT_EQ(step.param("missing", -3), -3);
}

TEST(OptStep, ParsesWhatItPrintsAndToleratesBlanks) {
  const OptStep step{"pad", {{"axis", 1}, {"multiple", -64}, {"big", INT64_MAX}}};
  EXPECT_EQ(OptStep::parse(step.to_string()).value(), step);
  EXPECT_EQ(OptStep::parse("  pad ( axis = 1 , multiple=-64,big=9223372036854775807 ) ").value(), step);
  EXPECT_EQ(OptStep::parse("vectorize").value(), (OptStep{"vectorize", {}}));
  EXPECT_EQ(OptStep::parse("vectorize()").value(), (OptStep{"vectorize", {}}));
}

TEST(OptStep, ErrorsNameTheColumn) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"", "column 1: expected an optimization name, got end of text"},
      {"Split(axis=0)", "column 1: expected an optimization name, got 'Split'"},
      {"split(axis 0)", "column 12: expected '=' after 'axis', got '0'"},
      {"split(axis=x)", "column 12: expected an integer, got 'x'"},
      {"split(axis=1", "column 13: expected ',' or ')', got end of text"},
      {"split(axis=1,axis=2)", "column 14: parameter 'axis' given twice"},
      {"split(n=99999999999999999999)", "column 9: integer '99999999999999999999' does not fit int64"},
      {"split(n=12ab)", "column 9: expected an integer, got '12ab'"},
      {"split() x", "column 9: expected end of step, got 'x'"},
  };
  for (const Case& c : cases) {
    auto parsed = OptStep::parse(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.error().code, kiln::ErrorCode::Parse);
    EXPECT_THAT(parsed.error().message, HasSubstr(c.message)) << c.text;
  }
}

TEST(OptSequence, RoundTripsThroughText) {
  const OptSequence sequence = {{"split_local", {{"axis", 0}, {"factor", 64}}}, {"unroll", {{"loop", 1}}},
                                {"vectorize", {}}};
  const std::string text = kiln::passes::to_string(sequence);
  EXPECT_EQ(text, "split_local(axis=0,factor=64); unroll(loop=1); vectorize()");
  EXPECT_EQ(kiln::passes::parse_sequence(text).value(), sequence);
  EXPECT_EQ(kiln::passes::parse_sequence("split_local(axis=0,factor=64);unroll(loop=1) ;vectorize").value(), sequence);
}

TEST(OptSequence, EmptyTextIsTheEmptySequence) {
  EXPECT_TRUE(kiln::passes::parse_sequence("").value().empty());
  EXPECT_TRUE(kiln::passes::parse_sequence("  \t").value().empty());
  EXPECT_EQ(kiln::passes::to_string(OptSequence{}), "");
}

TEST(OptSequence, ErrorsNameTheColumn) {
  auto trailing = kiln::passes::parse_sequence("unroll(loop=0); ");
  ASSERT_FALSE(trailing.ok());
  EXPECT_THAT(trailing.error().message, HasSubstr("column 17: expected an optimization name, got end of text"));
  auto joined = kiln::passes::parse_sequence("unroll(loop=0) vectorize");
  ASSERT_FALSE(joined.ok());
  EXPECT_THAT(joined.error().message, HasSubstr("column 16: expected ';' or end of text, got 'vectorize'"));
}
