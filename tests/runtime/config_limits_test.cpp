// config.json inputs that once cost quadratic time or memory, duplicate keys,
// and the nesting limit (docs/config.md, "Syntax and errors"). The guard on
// time is ctest's TIMEOUT for this binary (tests/runtime/CMakeLists.txt):
// the inputs here are sized so that the old quadratic location recorder
// needed hours, the linear one well under a second.
#include <kiln/runtime.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

class ConfigLimits : public ::testing::Test {
 protected:
  kiln::Result<kiln::Config> parse(const std::string& text) { return kiln::parse_config(text, file()); }
  // Nothing is read from disk: the texts name no plugin_paths.
  std::string file() const { return "/nonexistent/kiln/config.json"; }
  std::string error_of(const std::string& text) {
    kiln::Result<kiln::Config> config = parse(text);
    EXPECT_FALSE(config.ok());
    return config.ok() ? "" : config.error().message;
  }
};

std::string nested_arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST_F(ConfigLimits, AOneMegabyteKeyIsReadInLinearTime) {
  const std::string key(1 << 20, 'k');
  kiln::Result<kiln::Config> config = parse("{\n  \"" + key + "\": 1}");
  ASSERT_TRUE(config.ok()) << config.error().message;
  ASSERT_THAT(config->warnings, SizeIs(1));
  EXPECT_TRUE(config->warnings[0].starts_with(file() + ":2:3: kkkk")) << config->warnings[0].substr(0, 200);
  EXPECT_TRUE(config->warnings[0].ends_with("k: unknown key (ignored)"));
}

TEST_F(ConfigLimits, ManyElementsUnderALongKeyCostLinearMemory) {
  // 200000 elements under a 256 KiB key: a recorder that keeps each
  // element's full path would hold 50 GB.
  std::string text = "{\"" + std::string(256 << 10, 'k') + "\": [";
  for (int i = 0; i < 200000; ++i) text += "0,";
  text += "0]}";
  kiln::Result<kiln::Config> config = parse(text);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_THAT(config->warnings, SizeIs(1));
}

TEST_F(ConfigLimits, ManyUnknownKeysEachGetTheirOwnPlace) {
  // 50000 warnings, each locating its key: one line table, not a scan of
  // the text per key.
  std::string text = "{\"plugins\": {\"c\": {\n";
  for (int i = 0; i < 50000; ++i) text += "  \"unknown" + std::to_string(i) + "\": " + std::to_string(i) + ",\n";
  text += "  \"enabled\": false}}}";
  kiln::Result<kiln::Config> config = parse(text);
  ASSERT_TRUE(config.ok()) << config.error().message;
  ASSERT_THAT(config->warnings, SizeIs(50000));
  EXPECT_EQ(config->warnings.back(), file() + ":50001:3: plugins.c.unknown49999: unknown key (ignored)");
  EXPECT_FALSE(config->plugin("c")->enabled);
}

TEST_F(ConfigLimits, ADuplicateKeyIsRefusedNamingBothPlaces) {
  const std::string f = file();
  EXPECT_EQ(error_of("{\"plugins\": {\"c\": {\"enabled\": true,\n  \"enabled\": false}}}"),
            f + ":2:3: plugins.c.enabled: duplicate key (first given at " + f + ":1:20)");
  EXPECT_EQ(error_of("{\"plugins\": {},\n\"tuning_db\": \"a\",\n\"plugins\": {}}"),
            f + ":3:1: plugins: duplicate key (first given at " + f + ":1:2)");
  // Inside a plugin's options too: the plugin would see only one of them.
  EXPECT_EQ(error_of(R"({"plugins": {"c": {"options": {"list": [{"a": 1, "a": 2}]}}}})"),
            f + ":1:50: plugins.c.options.list[0].a: duplicate key (first given at " + f + ":1:42)");
  // The same key in two objects is no duplicate.
  kiln::Result<kiln::Config> config = parse(R"({"plugins": {"c": {"options": {"l": [{"a": 1}, {"a": 2}]}},
                                                            "cuda": {"options": {"l": 1}}}})");
  EXPECT_TRUE(config.ok()) << config.error().message;
}

TEST_F(ConfigLimits, NestingDeeperThanTheLimitIsRefusedNamingIt) {
  // The top-level object is level 1.
  kiln::Result<kiln::Config> deepest = parse("{\"x\": " + nested_arrays(63) + "}");
  EXPECT_TRUE(deepest.ok()) << deepest.error().message;
  EXPECT_THAT(error_of("{\"x\": " + nested_arrays(64) + "}"),
              HasSubstr("malformed JSON: objects and arrays nested deeper than 64 levels (the limit)"));
  // A million levels: refused at the limit, not after filling memory.
  EXPECT_THAT(error_of(std::string(1 << 20, '[')), HasSubstr(":1:65: malformed JSON: objects and arrays nested deeper"));
}

}  // namespace
