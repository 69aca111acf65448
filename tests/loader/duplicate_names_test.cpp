// Two plugins with one name: the higher priority loads, the other is
// skipped, and a warning names both libraries.
#include "loader/scratch.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using kiln::test::plugins_only;
using kiln::test::ScratchDir;
using kiln::test::test_plugin;
using ::testing::HasSubstr;

std::string manifest(const std::string& name, const std::string& library, int priority) {
  return R"({"kiln_plugin": {"name": ")" + name + R"(", "library": ")" + library +
         R"(", "priority": )" + std::to_string(priority) + "}}";
}

const kiln::PluginRecord& loaded(const kiln::Runtime& runtime, const std::string& name) {
  const kiln::PluginRecord* r = runtime.plugin(name);
  if (r == nullptr || r->status != kiln::PluginStatus::Loaded) throw std::runtime_error("not loaded: " + name);
  return *r;
}

kiln::Runtime with_manifests(const ScratchDir& dir, int host_priority, int twin_priority) {
  dir.write("plugins/a-host.json", manifest("dup", test_plugin("host"), host_priority));
  dir.write("plugins/b-twin.json", manifest("dup", test_plugin("twin"), twin_priority));
  return kiln::test::runtime_from(dir, plugins_only("", R"("plugin_paths": ["plugins"])")).value();
}

TEST(DuplicateNames, HigherPriorityWinsWhicheverComesFirst) {
  for (const auto& [host_priority, twin_priority] : {std::pair{1, 5}, std::pair{5, 1}}) {
    ScratchDir dir;
    const kiln::Runtime runtime = with_manifests(dir, host_priority, twin_priority);
    const std::string winner = host_priority > twin_priority ? "host" : "twin";
    const std::string loser = host_priority > twin_priority ? "twin" : "host";

    const kiln::PluginRecord& dup = loaded(runtime, "dup");
    EXPECT_EQ(dup.library, test_plugin(winner));
    ASSERT_EQ(dup.devices.size(), 1u);
    EXPECT_EQ(dup.devices[0].name, "kiln test device (" + winner + ")");

    // Both records are listed; the loser says who shadowed it.
    int skipped = 0;
    for (const kiln::PluginRecord& r : runtime.plugins()) {
      if (r.name != "dup" || r.status == kiln::PluginStatus::Loaded) continue;
      ++skipped;
      EXPECT_EQ(r.library, test_plugin(loser));
      EXPECT_THAT(r.reason, HasSubstr("shadowed by " + test_plugin(winner)));
    }
    EXPECT_EQ(skipped, 1);

    const std::vector<std::string> warnings = runtime.warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_THAT(warnings[0], HasSubstr("named 'dup'"));
    EXPECT_THAT(warnings[0], HasSubstr(test_plugin("host") + " (priority " + std::to_string(host_priority)));
    EXPECT_THAT(warnings[0], HasSubstr(test_plugin("twin") + " (priority " + std::to_string(twin_priority)));
    EXPECT_THAT(warnings[0], HasSubstr("using " + test_plugin(winner)));
  }
}

TEST(DuplicateNames, ConfigEntryAgainstAManifest) {
  ScratchDir dir;
  dir.write("plugins/twin.json", manifest("dup", test_plugin("twin"), 3));
  const std::string entries = R"("dup": {"library": ")" + test_plugin("host") + R"(", "priority": 7})";
  const kiln::Runtime runtime =
      kiln::test::runtime_from(dir, plugins_only(entries, R"("plugin_paths": ["plugins"])")).value();
  EXPECT_EQ(loaded(runtime, "dup").library, test_plugin("host"));
  EXPECT_EQ(runtime.warnings().size(), 1u);
}

TEST(DuplicateNames, DisabledDuplicatesDoNotCompete) {
  ScratchDir dir;
  dir.write("plugins/twin.json", manifest("dup", test_plugin("twin"), 9));
  const std::string entries = R"("dup": {"enabled": false})";
  const kiln::Runtime runtime =
      kiln::test::runtime_from(dir, plugins_only(entries, R"("plugin_paths": ["plugins"])")).value();
  // The config entry has no library, so it configures the manifest: disabled.
  const kiln::PluginRecord* dup = runtime.plugin("dup");
  ASSERT_NE(dup, nullptr);
  EXPECT_EQ(dup->status, kiln::PluginStatus::Disabled);
  EXPECT_TRUE(runtime.warnings().empty());
}

}  // namespace
