// config.json -> Config: the built-in default overlaid with what the file
// names. Every value is type-checked with the key path and file:line:col in
// the message; unknown keys become warnings.
#include "config_internal.hpp"
#include "install_paths.hpp"
#include "json_document.hpp"
#include "tune/autotune_reader.hpp"

#include <boost/json/serialize.hpp>

#include <optional>
#include <set>

namespace kiln {

namespace fs = std::filesystem;
namespace json = boost::json;
using detail::JsonDocument;
using detail::json_kind_name;

namespace {

// What a config file says about one plugin; unset fields keep their value.
struct PluginOverride {
  std::string name;
  SourceLocation where;
  std::optional<bool> enabled;
  std::optional<std::int64_t> priority;
  std::optional<fs::path> library;
  std::optional<bool> required;
  std::optional<bool> isolate_compile;
  std::optional<std::vector<DeviceSelector>> devices;
  std::optional<std::string> options_json;

  void apply_to(PluginConfig& plugin, bool with_library) const {
    if (enabled) plugin.enabled = *enabled;
    if (priority) plugin.priority = *priority;
    if (library && with_library) plugin.library = *library;
    if (required) plugin.required = *required;
    if (isolate_compile) plugin.isolate_compile = *isolate_compile;
    if (devices) plugin.devices = *devices;
    if (options_json) plugin.options_json = *options_json;
    plugin.origin = where;
  }
};

class ConfigReader {
 public:
  ConfigReader(const JsonDocument& doc, Config& config)
      : doc_(doc), config_(config), base_dir_(doc.file().parent_path()) {}

  Result<void> read() {
    if (!doc_.root().is_object())
      return doc_.error("", std::string("the top level must be an object, got ") +
                                std::string(json_kind_name(doc_.root())));
    const json::object& top = doc_.root().as_object();
    // plugin_paths first: bare library names are looked up in them.
    if (const json::value* paths = top.if_contains("plugin_paths")) KILN_TRY(read_plugin_paths(*paths));
    for (const auto& [key, value] : top) {
      if (key == "plugin_paths") continue;
      if (key == "plugins") {
        KILN_TRY(read_plugins(value));
      } else if (key == "autotune") {
        KILN_TRY(read_autotune(value));
      } else if (key == "tuning_db") {
        KILN_TRY_ASSIGN(config_.tuning_db, read_path(value, "tuning_db"));
      } else if (key == "bounds") {
        const auto policy = value.is_string() ? passes::parse_bounds_policy(value.as_string()) : std::nullopt;
        if (!policy && value.is_string())
          return doc_.error("bounds", "expected \"guard\", \"prove\" or \"trust\", got \"" + std::string(value.as_string()) + "\"");
        if (!policy) return type_error("bounds", "\"guard\", \"prove\" or \"trust\"", value);
        config_.bounds = *policy;
      } else {
        warn_unknown(key);
      }
    }
    return {};
  }

  std::vector<PluginOverride>& overrides() { return overrides_; }

 private:
  Error type_error(std::string_view path, std::string_view want, const json::value& got) const {
    return doc_.error(path, "expected " + std::string(want) + ", got " + std::string(json_kind_name(got)));
  }

  void warn_unknown(std::string_view path) {
    config_.warnings.push_back(doc_.message(path, "unknown key (ignored)"));
  }

  Result<fs::path> read_path(const json::value& value, const std::string& path) const {
    if (!value.is_string()) return type_error(path, "a string (a path)", value);
    std::string problem;
    std::optional<fs::path> expanded = detail::expand_path(value.as_string(), base_dir_, problem);
    if (!expanded) return doc_.error(path, problem);
    return *expanded;
  }

  Result<void> read_plugin_paths(const json::value& value) {
    if (!value.is_array()) return type_error("plugin_paths", "an array of folder paths", value);
    std::vector<fs::path> paths;
    const json::array& items = value.as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      KILN_TRY_ASSIGN(fs::path path, read_path(items[i], "plugin_paths[" + std::to_string(i) + "]"));
      paths.push_back(std::move(path));
    }
    // The config's folders come first; the built-in plugin folder stays last.
    paths.insert(paths.end(), config_.plugin_paths.begin(), config_.plugin_paths.end());
    config_.plugin_paths.clear();
    std::set<fs::path> seen;
    for (fs::path& path : paths)
      if (seen.insert(path).second) config_.plugin_paths.push_back(std::move(path));
    return {};
  }

  Result<void> read_plugins(const json::value& value) {
    if (!value.is_object()) return type_error("plugins", "an object of plugin names", value);
    for (const auto& [key, entry] : value.as_object()) {
      const std::string path = "plugins." + std::string(key);
      if (key.empty() || key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != json::string_view::npos)
        return doc_.error(path, "a plugin name is made of a-z, 0-9, '_' and '-'");
      KILN_TRY_ASSIGN(PluginOverride plugin, read_plugin(entry, std::string(key), path));
      overrides_.push_back(std::move(plugin));
    }
    return {};
  }

  Result<PluginOverride> read_plugin(const json::value& value, std::string name, const std::string& path) {
    if (!value.is_object()) return type_error(path, "an object", value);
    PluginOverride plugin;
    plugin.name = std::move(name);
    plugin.where = doc_.location(path);
    for (const auto& [key, item] : value.as_object()) {
      const std::string item_path = path + "." + std::string(key);
      if (key == "enabled" || key == "required" || key == "isolate_compile") {
        if (!item.is_bool()) return type_error(item_path, "true or false", item);
        (key == "enabled" ? plugin.enabled : key == "required" ? plugin.required : plugin.isolate_compile) =
            item.as_bool();
      } else if (key == "priority") {
        if (!item.is_int64()) return type_error(item_path, "an integer", item);
        plugin.priority = item.as_int64();
      } else if (key == "library") {
        KILN_TRY_ASSIGN(plugin.library, read_library(item, item_path));
      } else if (key == "devices") {
        KILN_TRY_ASSIGN(plugin.devices, read_devices(item, item_path));
      } else if (key == "options") {
        if (!item.is_object()) return type_error(item_path, "an object", item);
        plugin.options_json = json::serialize(item);
      } else {
        warn_unknown(item_path);
      }
    }
    return plugin;
  }

  // A bare file name is looked up in plugin_paths; anything with a folder
  // is a path (relative to the config file's folder).
  Result<fs::path> read_library(const json::value& value, const std::string& path) const {
    if (value.is_string() && value.as_string().find('/') == json::string_view::npos) {
      const std::string file_name(value.as_string());
      if (fs::path found = detail::find_in_dirs(config_.plugin_paths, file_name); !found.empty()) return found;
    }
    return read_path(value, path);
  }

  Result<std::vector<DeviceSelector>> read_devices(const json::value& value, const std::string& path) const {
    const char* want = "a device index (>= 0) or a name substring";
    if (!value.is_array()) return type_error(path, "an array of device indices or name substrings", value);
    std::vector<DeviceSelector> selectors;
    const json::array& items = value.as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      const json::value& item = items[i];
      const std::string item_path = path + "[" + std::to_string(i) + "]";
      if (item.is_int64() && item.as_int64() >= 0 && item.as_int64() <= UINT32_MAX) {
        selectors.emplace_back(static_cast<std::uint32_t>(item.as_int64()));
      } else if (item.is_string() && !item.as_string().empty()) {
        selectors.emplace_back(std::string(item.as_string()));
      } else if (item.is_int64() || item.is_uint64()) {
        return doc_.error(item_path, std::string("expected ") + want + ", got " + json::serialize(item));
      } else {
        return type_error(item_path, want, item);
      }
    }
    return selectors;
  }

  Result<void> read_autotune(const json::value& value) {
    if (!value.is_object()) return type_error("autotune", "an object", value);
    KILN_TRY_ASSIGN(config_.autotune.settings,
                    tune::detail::read_autotune_settings(doc_, value, "autotune", config_.warnings));
    config_.autotune.raw_json = json::serialize(value);
    config_.autotune.location = doc_.location("autotune");
    return {};
  }

  const JsonDocument& doc_;
  Config& config_;
  fs::path base_dir_;
  std::vector<PluginOverride> overrides_;
};

bool is_builtin(std::string_view name) {
  for (const char* builtin : detail::kBuiltinPlugins)
    if (name == builtin) return true;
  return false;
}

}  // namespace

Result<Config> parse_config(std::string_view text, const fs::path& file) {
  KILN_TRY_ASSIGN(JsonDocument doc, JsonDocument::parse(text, file));
  Config config = detail::builtin_entries();
  config.file = file;
  ConfigReader reader(doc, config);
  KILN_TRY(reader.read());

  std::vector<PluginConfig> manifests = detail::read_manifests(config.plugin_paths, config.warnings);

  for (const PluginOverride& entry : reader.overrides()) {
    if (is_builtin(entry.name)) {
      // Changes only what it names; the rest keeps the built-in default.
      for (PluginConfig& plugin : config.plugins)
        if (plugin.name == entry.name) entry.apply_to(plugin, true);
      continue;
    }
    bool configures_manifest = false;
    if (!entry.library) {
      // No library of its own: it configures the manifests of that name.
      for (PluginConfig& manifest : manifests) {
        if (manifest.name != entry.name) continue;
        SourceLocation manifest_origin = manifest.origin;
        entry.apply_to(manifest, false);
        manifest.origin = manifest_origin;
        configures_manifest = true;
      }
    }
    if (configures_manifest) continue;
    PluginConfig plugin;
    plugin.name = entry.name;
    if (!entry.library) {
      // Neither a library nor a manifest: look for the conventional file name.
      plugin.library = detail::find_in_dirs(config.plugin_paths, "libkiln-" + entry.name + ".so");
    }
    entry.apply_to(plugin, true);
    config.plugins.push_back(std::move(plugin));
  }
  for (PluginConfig& manifest : manifests) config.plugins.push_back(std::move(manifest));
  return config;
}

}  // namespace kiln
