// Plugin manifests (Vulkan-ICD style): a *.json file in a plugin folder that
// names a plugin library, so a third-party plugin is found by dropping two
// files into a folder, without editing config.json:
//   {"kiln_plugin": {"name": "acme", "library": "libacme.so",
//                    "priority": 0, "enabled": true, "options": {...}}}
#include "config_internal.hpp"
#include "install_paths.hpp"
#include "json_document.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kiln::detail {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// Reads one manifest; on a problem returns nullopt and sets `problem`.
std::optional<PluginConfig> read_manifest(const fs::path& file, std::vector<std::string>& warnings,
                                          std::string& problem) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    problem = file.string() + ": cannot read";
    return std::nullopt;
  }
  Result<JsonDocument> parsed = JsonDocument::parse(text.str(), file);
  if (!parsed) {
    problem = parsed.error().message;
    return std::nullopt;
  }
  const JsonDocument& doc = *parsed;
  const json::object* top = doc.root().if_object();
  const json::value* body = top != nullptr ? top->if_contains("kiln_plugin") : nullptr;
  if (body == nullptr || !body->is_object()) {
    problem = doc.message("", "not a kiln plugin manifest (no \"kiln_plugin\" object)");
    return std::nullopt;
  }
  for (const auto& [key, value] : *top)
    if (key != "kiln_plugin") warnings.push_back(doc.message(std::string(key), "unknown key (ignored)"));

  PluginConfig plugin;
  plugin.from_manifest = true;
  plugin.origin = doc.location("kiln_plugin");
  plugin.origin.line = 0;  // the manifest as a whole
  auto fail = [&](std::string_view path, std::string_view what) {
    problem = doc.message(path, what);
    return std::nullopt;
  };
  auto type_fail = [&](std::string_view path, std::string_view want, const json::value& got) {
    return fail(path, "expected " + std::string(want) + ", got " + std::string(json_kind_name(got)));
  };
  for (const auto& [key, value] : body->as_object()) {
    const std::string path = "kiln_plugin." + std::string(key);
    if (key == "name") {
      if (!value.is_string()) return type_fail(path, "a string", value);
      plugin.name = value.as_string();
      if (plugin.name.empty() || plugin.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
        return fail(path, "a plugin name is made of a-z, 0-9, '_' and '-'");
    } else if (key == "library") {
      if (!value.is_string()) return type_fail(path, "a string (a path)", value);
      std::optional<fs::path> library = expand_path(value.as_string(), file.parent_path(), problem);
      if (!library) return fail(path, problem);
      plugin.library = *library;
    } else if (key == "priority") {
      if (!value.is_int64()) return type_fail(path, "an integer", value);
      plugin.priority = value.as_int64();
    } else if (key == "enabled") {
      if (!value.is_bool()) return type_fail(path, "true or false", value);
      plugin.enabled = value.as_bool();
    } else if (key == "options") {
      if (!value.is_object()) return type_fail(path, "an object", value);
      plugin.options_json = json::serialize(value);
    } else if (key != "description") {
      warnings.push_back(doc.message(path, "unknown key (ignored)"));
    }
  }
  if (plugin.name.empty()) return fail("kiln_plugin", "\"name\" is missing");
  if (plugin.library.empty()) return fail("kiln_plugin", "\"library\" is missing");
  return plugin;
}

}  // namespace

std::vector<PluginConfig> read_manifests(const std::vector<fs::path>& dirs, std::vector<std::string>& warnings) {
  std::vector<PluginConfig> plugins;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;  // a folder that does not exist (yet) is fine
    std::vector<fs::path> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".json" && entry.is_regular_file(ec)) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      std::string problem;
      if (std::optional<PluginConfig> plugin = read_manifest(file, warnings, problem)) {
        plugins.push_back(std::move(*plugin));
      } else {
        warnings.push_back("manifest ignored: " + problem);
      }
    }
  }
  return plugins;
}

}  // namespace kiln::detail
