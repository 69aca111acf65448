// config.json parsing: partial overrides, errors with file:line:col and key
// paths, unknown keys as warnings, path expansion, the autotune section.
#include "loader/scratch.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <random>

namespace {

using kiln::test::ScratchDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ConfigParse : public ::testing::Test {
 protected:
  kiln::Result<kiln::Config> parse(const std::string& text) {
    return kiln::parse_config(text, dir / "config.json");
  }
  kiln::Config parse_ok(const std::string& text) {
    kiln::Result<kiln::Config> config = parse(text);
    EXPECT_TRUE(config.ok()) << config.error().to_string();
    return config.ok() ? std::move(config).value() : kiln::Config{};
  }
  // The error message, with the file's path replaced by "F".
  std::string error_of(const std::string& text) {
    kiln::Result<kiln::Config> config = parse(text);
    EXPECT_FALSE(config.ok());
    if (config.ok()) return "";
    EXPECT_EQ(config.error().code, kiln::ErrorCode::Config);
    std::string message = config.error().message;
    const std::string file = (dir / "config.json").string();
    if (message.starts_with(file)) message.replace(0, file.size(), "F");
    return message;
  }

  ScratchDir dir;
};

TEST_F(ConfigParse, AFileChangesOnlyWhatItNames) {
  const kiln::Config builtin = kiln::builtin_config();
  const kiln::Config config = parse_ok(R"({
    "plugins": {
      "cuda": {"enabled": false},
      "c": {"priority": 3, "required": true, "options": {"compiler": "clang", "flags": ["-O2"]}}
    }
  })");
  ASSERT_EQ(config.plugins.size(), 6u);
  EXPECT_FALSE(config.plugin("cuda")->enabled);
  EXPECT_EQ(config.plugin("cuda")->library, builtin.plugin("cuda")->library);
  EXPECT_EQ(config.plugin("c")->priority, 3);
  EXPECT_TRUE(config.plugin("c")->required);
  EXPECT_EQ(config.plugin("c")->options_json, R"({"compiler":"clang","flags":["-O2"]})");
  EXPECT_TRUE(config.plugin("c")->enabled);
  EXPECT_EQ(config.plugin("c")->origin.to_string(), (dir / "config.json").string() + ":4:7");
  for (const char* untouched : {"cblas", "opencl", "vulkan", "dummy"}) {
    const kiln::PluginConfig* p = config.plugin(untouched);
    EXPECT_EQ(p->enabled, builtin.plugin(untouched)->enabled) << untouched;
    EXPECT_EQ(p->library, builtin.plugin(untouched)->library) << untouched;
    EXPECT_EQ(p->options_json, "{}") << untouched;
    EXPECT_EQ(p->origin.to_string(), "built-in");
  }
  EXPECT_FALSE(config.plugin("dummy")->enabled);
  EXPECT_TRUE(config.warnings.empty());
}

TEST_F(ConfigParse, CommentsAndTrailingCommasAreAllowed) {
  const kiln::Config config = parse_ok(R"(// kiln
  {
    /* plugins */ "plugins": {"opencl": {"enabled": false,},},
  })");
  EXPECT_FALSE(config.plugin("opencl")->enabled);
}

// A UTF-8 byte-order mark, as some editors write, is not a syntax error;
// positions after it are the ones an editor shows.
TEST_F(ConfigParse, AByteOrderMarkIsSkipped) {
  const kiln::Config config = parse_ok("\xEF\xBB\xBF{\"plugins\": {\"opencl\": {\"enabled\": false}}}");
  EXPECT_FALSE(config.plugin("opencl")->enabled);
  EXPECT_EQ(error_of("\xEF\xBB\xBF{\n  \"plugins\": flase\n}\n"), "F:2:14: malformed JSON: syntax error");
}

TEST_F(ConfigParse, OnlyARegularFileIsReadAsAConfig) {
  kiln::Result<kiln::Config> device = kiln::load_config_file("/dev/zero");
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(device.error().message, HasSubstr("config file /dev/zero is not a regular file"));
}

TEST_F(ConfigParse, MalformedJsonNamesFileLineAndColumn) {
  EXPECT_EQ(error_of("{\n  \"plugins\": {\n    \"c\": {\"enabled\": flase}\n  }\n}\n"),
            "F:3:22: malformed JSON: syntax error");
  EXPECT_EQ(error_of("{\n  \"plugins\": {}\n  \"autotune\": {}\n}\n"), "F:3:3: malformed JSON: syntax error");
  EXPECT_THAT(error_of("{\n  \"plugins\": {\n"), HasSubstr("F:3:1: malformed JSON: unexpected end of file"));
  EXPECT_THAT(error_of(""), HasSubstr("F:1:1: malformed JSON"));
}

TEST_F(ConfigParse, AWrongTypeNamesTheKeyPathAndWhereItIs) {
  EXPECT_EQ(error_of("{\n  \"plugins\": {\n    \"c\": {\"priority\": \"high\"}\n  }\n}"),
            "F:3:11: plugins.c.priority: expected an integer, got a string");
  EXPECT_EQ(error_of(R"({"plugins": {"c": {"enabled": "yes"}}})"),
            "F:1:20: plugins.c.enabled: expected true or false, got a string");
  EXPECT_EQ(error_of(R"({"plugins": {"c": {"options": [1]}}})"),
            "F:1:20: plugins.c.options: expected an object, got an array");
  EXPECT_EQ(error_of(R"({"plugins": {"c": {"devices": [0, true]}}})"),
            "F:1:35: plugins.c.devices[1]: expected a device index (>= 0) or a name substring, got a boolean");
  EXPECT_EQ(error_of(R"({"plugins": {"c": {"devices": [-1]}}})"),
            "F:1:32: plugins.c.devices[0]: expected a device index (>= 0) or a name substring, got -1");
  EXPECT_EQ(error_of(R"({"plugins": {"c": {"library": 7}}})"),
            "F:1:20: plugins.c.library: expected a string (a path), got an integer");
  EXPECT_EQ(error_of(R"({"plugins": {"c": true}})"), "F:1:14: plugins.c: expected an object, got a boolean");
  EXPECT_EQ(error_of(R"({"plugins": []})"), "F:1:2: plugins: expected an object of plugin names, got an array");
  EXPECT_EQ(error_of(R"({"plugin_paths": "dir"})"),
            "F:1:2: plugin_paths: expected an array of folder paths, got a string");
  EXPECT_EQ(error_of(R"({"plugin_paths": ["a", 2]})"),
            "F:1:24: plugin_paths[1]: expected a string (a path), got an integer");
  EXPECT_EQ(error_of(R"({"autotune": [1]})"), "F:1:2: autotune: expected an object, got an array");
  EXPECT_EQ(error_of(R"({"tuning_db": false})"), "F:1:2: tuning_db: expected a string (a path), got a boolean");
  EXPECT_EQ(error_of("[1, 2]"), "F: the top level must be an object, got an array");
  EXPECT_EQ(error_of(R"({"plugins": {"Bad Name": {}}})"),
            "F:1:14: plugins.Bad Name: a plugin name is made of a-z, 0-9, '_' and '-'");
}

TEST_F(ConfigParse, UnknownKeysAreWarningsWithTheirPlace) {
  const kiln::Config config = parse_ok("{\n  \"plugin_path\": [],\n  \"plugins\": {\"c\": {\"enabeld\": false}}\n}");
  const std::string file = (dir / "config.json").string();
  EXPECT_THAT(config.warnings, ElementsAre(file + ":2:3: plugin_path: unknown key (ignored)",
                                           file + ":3:21: plugins.c.enabeld: unknown key (ignored)"));
  EXPECT_TRUE(config.plugin("c")->enabled);  // the misspelt key changed nothing
}

TEST_F(ConfigParse, PluginPathsExpandAndResolveAgainstTheConfigFolder) {
  const kiln::Config config = parse_ok(R"({"plugin_paths": ["rel/dir", "${prefix}/x", "${exe_dir}/y", "~/z", "/abs/./w"]})");
  const std::filesystem::path prefix = kiln::builtin_plugin_dir().parent_path().parent_path().parent_path();
  char exe[4096] = {};
  ASSERT_GT(::readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
  ASSERT_EQ(config.plugin_paths.size(), 6u);
  EXPECT_EQ(config.plugin_paths[0], dir / "rel/dir");
  EXPECT_EQ(config.plugin_paths[1], prefix / "x");
  EXPECT_EQ(config.plugin_paths[2], std::filesystem::path(exe).parent_path() / "y");
  EXPECT_EQ(config.plugin_paths[3], std::filesystem::path(std::getenv("HOME")) / "z");
  EXPECT_EQ(config.plugin_paths[4], "/abs/w");
  EXPECT_EQ(config.plugin_paths[5], kiln::builtin_plugin_dir());  // always searched, last
  // The build tree mirrors the install tree: <prefix>/lib/kiln/plugins.
  EXPECT_EQ(kiln::builtin_plugin_dir(), prefix / "lib" / "kiln" / "plugins");
}

TEST_F(ConfigParse, UnknownPathVariableIsAnError) {
  EXPECT_EQ(error_of(R"({"plugin_paths": ["${home}/p"]})"),
            "F:1:19: plugin_paths[0]: unknown variable ${home} (known: ${exe_dir}, ${prefix})");
  EXPECT_EQ(error_of(R"({"tuning_db": "${prefix"})"), "F:1:2: tuning_db: unclosed '${' in \"${prefix\"");
}

TEST_F(ConfigParse, LibraryPaths) {
  dir.write("plugins/libacme.so", "");
  const kiln::Config config = parse_ok(R"({"plugin_paths": ["plugins"], "plugins": {
    "a": {"library": "lib/liba.so"},
    "b": {"library": "/opt/libb.so"},
    "acme": {"library": "libacme.so"},
    "gone": {"library": "libgone.so"},
    "c": {"library": "${prefix}/lib/other-c.so"}}})");
  EXPECT_EQ(config.plugin("a")->library, dir / "lib/liba.so");      // relative to the config's folder
  EXPECT_EQ(config.plugin("b")->library, "/opt/libb.so");
  EXPECT_EQ(config.plugin("acme")->library, dir / "plugins/libacme.so");  // bare name: found in plugin_paths
  EXPECT_EQ(config.plugin("gone")->library, dir / "libgone.so");     // bare name, nowhere: config folder
  EXPECT_EQ(config.plugin("c")->library,
            kiln::builtin_plugin_dir().parent_path().parent_path().parent_path() / "lib/other-c.so");
}

TEST_F(ConfigParse, ANewPluginWithoutLibraryFindsTheConventionalName) {
  dir.write("plugins/libkiln-acme.so", "");
  const kiln::Config config = parse_ok(R"({"plugin_paths": ["plugins"], "plugins": {"acme": {}, "zeta": {}}})");
  EXPECT_EQ(config.plugin("acme")->library, dir / "plugins/libkiln-acme.so");
  EXPECT_TRUE(config.plugin("zeta")->library.empty());
  EXPECT_EQ(config.plugins.size(), 8u);
}

TEST_F(ConfigParse, DeviceSelectors) {
  const kiln::Config config = parse_ok(R"({"plugins": {"cuda": {"devices": [1, "H200", 0]}}})");
  const std::vector<kiln::DeviceSelector>& devices = config.plugin("cuda")->devices;
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(std::get<std::uint32_t>(devices[0]), 1u);
  EXPECT_EQ(std::get<std::string>(devices[1]), "H200");
  EXPECT_EQ(std::get<std::uint32_t>(devices[2]), 0u);
}

TEST_F(ConfigParse, AutotuneIsKeptAsJsonWithItsLocation) {
  const kiln::Config config = parse_ok("{\n  \"autotune\": {\"beam\": 8, \"budget_s\": 1.5, \"x\": [true]},\n"
                                       "  \"tuning_db\": \"db/tune.sqlite\"\n}");
  EXPECT_EQ(config.autotune.raw_json, R"({"beam":8,"budget_s":1.5E0,"x":[true]})");
  EXPECT_EQ(config.autotune.location.to_string(), (dir / "config.json").string() + ":2:3");
  EXPECT_EQ(config.tuning_db, dir / "db/tune.sqlite");
  const kiln::Config none = parse_ok("{}");
  EXPECT_EQ(none.autotune.raw_json, "{}");
  EXPECT_TRUE(none.tuning_db.empty());
}

TEST_F(ConfigParse, MutatedConfigsGiveErrorsNeverCrashes) {
  // Byte edits of a valid config: each parses, or fails with a message that
  // starts with the file name (and never throws or crashes).
  const std::string valid = R"({
    // comment
    "plugin_paths": ["${prefix}/p", "rel"],
    "plugins": {"c": {"enabled": true, "priority": -3, "devices": [0, "Xeon"], "options": {"a": [1, {"b": null}]}},
                "acme": {"library": "libacme.so", "required": false}},
    "autotune": {"beam": 4},
    "tuning_db": "~/db.sqlite",
  })";
  const std::string alphabet = "{}[]\",:/*0123456789-+.eE tfnul${}\n\\";
  std::mt19937 rng(7);
  const std::string file = (dir / "config.json").string();
  int errors = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text = valid;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.erase(at, 1 + rng() % 4); break;
        default: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    kiln::Result<kiln::Config> config = parse(text);
    if (!config.ok()) {
      ++errors;
      ASSERT_TRUE(config.error().message.starts_with(file)) << config.error().message << "\n" << text;
    }
  }
  EXPECT_GT(errors, 1000);  // most edits break it; the rest must still parse
}

TEST_F(ConfigParse, ReadingAFile) {
  const std::filesystem::path file = dir.write("sub/kiln.json", R"({"plugins": {"vulkan": {"enabled": false}}})");
  kiln::Result<kiln::Config> config = kiln::load_config_file(file);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->source(), file.string());
  EXPECT_FALSE(config->plugin("vulkan")->enabled);
  EXPECT_FALSE(kiln::load_config_file(dir / "absent.json").ok());
}

}  // namespace
