// Shared by the verifier's op tests: a sample kernel with one line edited,
// and the check that its first violation is `rule` at op `op`.
#pragma once

#include <gtest/gtest.h>

#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

#include <string>
#include <string_view>

namespace kiln::test {

// `sample` with the first occurrence of `line` replaced by `replacement`.
inline std::string with_line_replaced(std::string_view sample, std::string_view line, std::string_view replacement) {
  std::string text(sample);
  const std::size_t at = text.find(line);
  EXPECT_NE(at, std::string::npos) << line;
  if (at != std::string::npos) text.replace(at, line.size(), replacement);
  return text;
}

// `text` parses, and its first violation is at op `op`, under `rule`, with
// `fragment` in the message.
inline void expect_rule(const std::string& text, ir::ValueId op, std::string_view rule, std::string_view fragment) {
  SCOPED_TRACE(text);
  auto kernel = ir::parse(text);
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  const auto result = ir::verify(*kernel);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().op, op) << result.error().to_string();
  EXPECT_NE(result.error().message.find("rule " + std::string(rule) + ":"), std::string::npos) << result.error().to_string();
  EXPECT_NE(result.error().message.find(fragment), std::string::npos) << result.error().to_string();
}

}  // namespace kiln::test
