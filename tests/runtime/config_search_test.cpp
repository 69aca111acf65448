// The config search order: --config / API argument, $KILN_CONFIG,
// $XDG_CONFIG_HOME/kiln/config.json, ~/.config/kiln/config.json, built-in.
#include "loader/scratch.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

namespace {

using kiln::test::ScratchDir;
using ::testing::HasSubstr;

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  void set(const char* name, const std::string& value) {
    remember(name);
    ::setenv(name, value.c_str(), 1);
  }
  void unset(const char* name) {
    remember(name);
    ::unsetenv(name);
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }

 private:
  void remember(const char* name) {
    for (const auto& [saved, value] : saved_)
      if (saved == name) return;
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

class ConfigSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    // Every level present; each test removes the ones above the one it checks.
    explicit_file = dir.write("explicit/config.json", "{}");
    env_file = dir.write("env/config.json", "{}");
    xdg_file = dir.write("xdg/kiln/config.json", "{}");
    home_file = dir.write("home/.config/kiln/config.json", "{}");
    env.set("KILN_CONFIG", env_file.string());
    env.set("XDG_CONFIG_HOME", (dir / "xdg").string());
    env.set("HOME", (dir / "home").string());
  }

  std::optional<std::filesystem::path> found(const std::optional<std::filesystem::path>& given = std::nullopt) {
    kiln::Result<std::optional<std::filesystem::path>> result = kiln::find_config_file(given);
    EXPECT_TRUE(result.ok()) << result.error().to_string();
    return result.ok() ? *result : std::nullopt;
  }

  ScratchDir dir;
  ScopedEnv env;
  std::filesystem::path explicit_file, env_file, xdg_file, home_file;
};

TEST_F(ConfigSearch, ExplicitPathComesFirst) { EXPECT_EQ(found(explicit_file), explicit_file); }

TEST_F(ConfigSearch, ThenKilnConfig) { EXPECT_EQ(found(), env_file); }

TEST_F(ConfigSearch, ThenXdgConfigHome) {
  env.unset("KILN_CONFIG");
  EXPECT_EQ(found(), xdg_file);
}

TEST_F(ConfigSearch, ThenHomeConfigWhenXdgIsUnsetOrEmpty) {
  env.unset("KILN_CONFIG");
  env.unset("XDG_CONFIG_HOME");
  EXPECT_EQ(found(), home_file);
  env.set("XDG_CONFIG_HOME", "");
  EXPECT_EQ(found(), home_file);
}

TEST_F(ConfigSearch, XdgConfigHomeReplacesHomeConfig) {
  // As the XDG spec says: a set XDG_CONFIG_HOME without a kiln file does not
  // fall back to ~/.config (so tests never read the user's real config).
  env.unset("KILN_CONFIG");
  std::filesystem::remove(xdg_file);
  EXPECT_EQ(found(), std::nullopt);
}

TEST_F(ConfigSearch, ThenTheBuiltInDefault) {
  env.unset("KILN_CONFIG");
  env.unset("XDG_CONFIG_HOME");
  std::filesystem::remove(home_file);
  EXPECT_EQ(found(), std::nullopt);
  kiln::Result<kiln::Config> config = kiln::load_config();
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->source(), "built-in");
  EXPECT_EQ(config->plugins.size(), 6u);
}

TEST_F(ConfigSearch, AMissingExplicitFileIsAnErrorNotAFallback) {
  kiln::Result<std::optional<std::filesystem::path>> result = kiln::find_config_file(dir / "absent.json");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, kiln::ErrorCode::NotFound);
  EXPECT_THAT(result.error().message, HasSubstr("absent.json (given explicitly) does not exist"));
}

TEST_F(ConfigSearch, AMissingKilnConfigFileIsAnErrorNotAFallback) {
  env.set("KILN_CONFIG", (dir / "absent.json").string());
  kiln::Result<std::optional<std::filesystem::path>> result = kiln::find_config_file();
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.error().message, HasSubstr("absent.json (from $KILN_CONFIG) does not exist"));
}

TEST_F(ConfigSearch, LoadConfigReadsTheFileTheSearchPicks) {
  dir.write("env/config.json", R"({"plugins": {"cuda": {"enabled": false}}})");
  kiln::Result<kiln::Config> config = kiln::load_config();
  ASSERT_TRUE(config.ok()) << config.error().to_string();
  EXPECT_EQ(config->file, env_file);
  EXPECT_FALSE(config->plugin("cuda")->enabled);
  EXPECT_TRUE(config->plugin("c")->enabled);
}

}  // namespace
