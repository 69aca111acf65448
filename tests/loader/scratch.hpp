// tests/loader/scratch.hpp - scratch folders and config files for runtime
// and loader tests, and the test plugins' paths.
#pragma once

#include <kiln/runtime.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

namespace kiln::test {

// A fresh folder under the system temp dir, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "kiln-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    if (info != nullptr) name += std::string("-") + info->name();
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

  // Writes `text` to path()/name (creating folders) and returns the path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

 private:
  std::filesystem::path path_;
};

inline std::string test_plugin(const std::string& name) {
  return std::string(KILN_TEST_PLUGIN_DIR) + "/libkiln-test-" + name + ".so";
}

// A Runtime from config text written to a scratch file. Fails the test if
// the config does not parse.
inline kiln::Result<kiln::Runtime> runtime_from(const ScratchDir& dir, const std::string& config_text) {
  const std::filesystem::path file = dir.write("config.json", config_text);
  kiln::Result<kiln::Config> config = kiln::load_config_file(file);
  if (!config) return config.error();
  return kiln::Runtime::create(std::move(config).value());
}

inline const kiln::PluginRecord& record(const kiln::Runtime& runtime, const std::string& name) {
  const kiln::PluginRecord* r = runtime.plugin(name);
  if (r == nullptr) throw std::runtime_error("no plugin record named " + name);
  return *r;
}

}  // namespace kiln::test

namespace kiln::test {

// Config text: a "plugins" object with every built-in plugin disabled (so a
// test loads only its own plugins) plus `entries` ("\"x\": {...}, ...").
inline std::string plugins_only(const std::string& entries, const std::string& rest = "") {
  std::string text = R"({"plugins": {"c": {"enabled": false}, "cblas": {"enabled": false},
    "cuda": {"enabled": false}, "opencl": {"enabled": false}, "vulkan": {"enabled": false},
    "dummy": {"enabled": false})";
  if (!entries.empty()) text += ",\n    " + entries;
  text += "}";
  if (!rest.empty()) text += ",\n  " + rest;
  return text + "}\n";
}

// One plugin's entry in a "plugins" object: its library and, in `more`,
// further keys ("\"options\": {...}").
inline std::string plugin_entry(const std::string& name, const std::string& library, const std::string& more = "") {
  return "\"" + name + "\": {\"library\": \"" + library + "\"" + (more.empty() ? "" : ", " + more) + "}";
}

// A Runtime of only `entries` (plugins_only); throws when the config is
// refused, which fails the test that called it.
inline kiln::Runtime load_plugins(const ScratchDir& dir, const std::string& entries) {
  kiln::Result<kiln::Runtime> runtime = runtime_from(dir, plugins_only(entries));
  if (!runtime) throw std::runtime_error(runtime.error().to_string());
  return std::move(runtime).value();
}

// Why plugin `name` was skipped; fails the test when it was not skipped.
inline std::string skipped_reason(const kiln::Runtime& runtime, const std::string& name) {
  const kiln::PluginRecord& plugin = record(runtime, name);
  EXPECT_EQ(plugin.status, kiln::PluginStatus::Skipped) << name << " was not skipped";
  return plugin.reason;
}

}  // namespace kiln::test
