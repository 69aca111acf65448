// Plugin manifests in plugin_paths (Vulkan-ICD style).
#include "loader/scratch.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using kiln::test::ScratchDir;
using ::testing::Contains;
using ::testing::HasSubstr;

class Manifests : public ::testing::Test {
 protected:
  kiln::Config parse(const std::string& text) {
    kiln::Result<kiln::Config> config = kiln::parse_config(text, dir / "config.json");
    EXPECT_TRUE(config.ok()) << config.error().to_string();
    return config.ok() ? std::move(config).value() : kiln::Config{};
  }
  static const kiln::PluginConfig* find(const kiln::Config& config, const std::string& name) {
    for (const kiln::PluginConfig& p : config.plugins)
      if (p.name == name && p.from_manifest) return &p;
    return nullptr;
  }
  ScratchDir dir;
};

TEST_F(Manifests, AManifestAddsAPlugin) {
  dir.write("plugins/acme.json", R"({"kiln_plugin": {"name": "acme", "library": "lib/libacme.so",
    "priority": 4, "description": "ACME accelerators", "options": {"turbo": true}}})");
  const kiln::Config config = parse(R"({"plugin_paths": ["plugins"]})");
  const kiln::PluginConfig* acme = find(config, "acme");
  ASSERT_NE(acme, nullptr);
  EXPECT_EQ(acme->library, dir / "plugins/lib/libacme.so");  // relative to the manifest
  EXPECT_EQ(acme->priority, 4);
  EXPECT_TRUE(acme->enabled);
  EXPECT_EQ(acme->options_json, R"({"turbo":true})");
  EXPECT_EQ(acme->origin.to_string(), (dir / "plugins/acme.json").string());
  EXPECT_TRUE(config.warnings.empty());
}

TEST_F(Manifests, TheConfigConfiguresAManifestPluginByName) {
  dir.write("plugins/acme.json", R"({"kiln_plugin": {"name": "acme", "library": "libacme.so", "options": {"a": 1}}})");
  const kiln::Config config =
      parse(R"({"plugin_paths": ["plugins"], "plugins": {"acme": {"enabled": false, "options": {"b": 2}, "devices": [1]}}})");
  const kiln::PluginConfig* acme = find(config, "acme");
  ASSERT_NE(acme, nullptr);
  EXPECT_FALSE(acme->enabled);
  EXPECT_EQ(acme->options_json, R"({"b":2})");
  EXPECT_EQ(acme->devices.size(), 1u);
  EXPECT_EQ(acme->library, dir / "plugins/libacme.so");
  EXPECT_EQ(config.plugins.size(), 7u);  // six built-in + acme, no second entry
}

TEST_F(Manifests, BrokenManifestsAreWarningsNotErrors) {
  dir.write("plugins/a-malformed.json", "{\"kiln_plugin\": {\"name\": \"x\",,}}");
  dir.write("plugins/b-other.json", R"({"something": "else"})");
  dir.write("plugins/c-noname.json", R"({"kiln_plugin": {"library": "libx.so"}})");
  dir.write("plugins/d-badtype.json", R"({"kiln_plugin": {"name": "x", "library": "libx.so", "priority": "1"}})");
  dir.write("plugins/e-unknown.json", R"({"kiln_plugin": {"name": "ok", "library": "libok.so", "colour": "red"}})");
  dir.write("plugins/notes.txt", "not json, not read");
  const kiln::Config config = parse(R"({"plugin_paths": ["plugins"]})");
  const std::string p = (dir / "plugins").string();
  ASSERT_EQ(config.warnings.size(), 5u);
  EXPECT_EQ(config.warnings[0], "manifest ignored: " + p + "/a-malformed.json:1:30: malformed JSON: syntax error");
  EXPECT_EQ(config.warnings[1],
            "manifest ignored: " + p + "/b-other.json: not a kiln plugin manifest (no \"kiln_plugin\" object)");
  EXPECT_EQ(config.warnings[2], "manifest ignored: " + p + "/c-noname.json:1:2: kiln_plugin: \"name\" is missing");
  EXPECT_EQ(config.warnings[3],
            "manifest ignored: " + p + "/d-badtype.json:1:53: kiln_plugin.priority: expected an integer, got a string");
  EXPECT_EQ(config.warnings[4], p + "/e-unknown.json:1:55: kiln_plugin.colour: unknown key (ignored)");
  EXPECT_NE(find(config, "ok"), nullptr);
  EXPECT_EQ(find(config, "x"), nullptr);
}

TEST_F(Manifests, AManifestPluginLoads) {
  dir.write("plugins/host.json",
            R"({"kiln_plugin": {"name": "viamanifest", "library": ")" + kiln::test::test_plugin("host") + R"("}})");
  const std::filesystem::path file = dir.write("config.json", kiln::test::plugins_only("", R"("plugin_paths": ["plugins"])"));
  kiln::Result<kiln::Runtime> runtime = kiln::Runtime::open(file);
  ASSERT_TRUE(runtime.ok()) << runtime.error().to_string();
  const kiln::PluginRecord* record = runtime->plugin("viamanifest");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->status, kiln::PluginStatus::Loaded) << record->reason;
  EXPECT_EQ(record->origin.to_string(), (dir / "plugins/host.json").string());
  ASSERT_EQ(record->devices.size(), 1u);
  EXPECT_EQ(record->devices[0].id, "viamanifest:0");
}

TEST_F(Manifests, MissingPluginFoldersAreFine) {
  const kiln::Config config = parse(R"({"plugin_paths": ["does/not/exist"]})");
  EXPECT_TRUE(config.warnings.empty());
  EXPECT_EQ(config.plugins.size(), 6u);
}

}  // namespace
