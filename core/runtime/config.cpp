// The built-in default, the config search order and file loading.
#include "config_internal.hpp"
#include "install_paths.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kiln {

namespace fs = std::filesystem;

std::string SourceLocation::to_string() const {
  if (file.empty()) return "built-in";
  if (line == 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Config::source() const { return file.empty() ? "built-in" : file.string(); }

const PluginConfig* Config::plugin(std::string_view name) const {
  for (const PluginConfig& p : plugins)
    if (p.name == name) return &p;
  return nullptr;
}

fs::path builtin_plugin_dir() { return detail::libkiln_path().parent_path() / KILN_PLUGIN_SUBDIR; }

namespace detail {

Config builtin_entries() {
  Config config;
  const fs::path dir = builtin_plugin_dir();
  config.plugin_paths.push_back(dir);
  for (const char* name : kBuiltinPlugins) {
    PluginConfig plugin;
    plugin.name = name;
    plugin.enabled = std::string_view(name) != "dummy";  // a test device: opt in
    plugin.library = dir / ("libkiln-" + std::string(name) + ".so");
    config.plugins.push_back(std::move(plugin));
  }
  return config;
}

fs::path find_in_dirs(const std::vector<fs::path>& dirs, const std::string& file_name) {
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    if (fs::is_regular_file(dir / file_name, ec)) return dir / file_name;
  }
  return {};
}

}  // namespace detail

Config builtin_config() {
  Config config = detail::builtin_entries();
  for (PluginConfig& manifest : detail::read_manifests(config.plugin_paths, config.warnings))
    config.plugins.push_back(std::move(manifest));
  return config;
}

Result<std::optional<fs::path>> find_config_file(const std::optional<fs::path>& explicit_path) {
  auto must_exist = [](const fs::path& path, const std::string& how) -> Result<std::optional<fs::path>> {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      return make_error(ErrorCode::NotFound, "config file " + path.string() + " (" + how + ") does not exist");
    return std::optional<fs::path>(fs::absolute(path));
  };
  if (explicit_path) return must_exist(*explicit_path, "given explicitly");
  if (const char* env = std::getenv("KILN_CONFIG"); env != nullptr && *env != '\0')
    return must_exist(env, "from $KILN_CONFIG");

  // XDG: $XDG_CONFIG_HOME replaces ~/.config when set, so a test (or a user)
  // that sets it never picks up the home folder's file by accident.
  fs::path candidate;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    candidate = fs::path(xdg) / "kiln" / "config.json";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    candidate = fs::path(home) / ".config" / "kiln" / "config.json";
  }
  std::error_code ec;
  if (!candidate.empty() && fs::is_regular_file(candidate, ec)) return std::optional<fs::path>(candidate);
  return std::optional<fs::path>();
}

Result<Config> load_config_file(const fs::path& file) {
  // A config is a small regular file: a device or a pipe named by mistake
  // would otherwise be read until memory runs out.
  constexpr std::uintmax_t kMaxConfigBytes = 16u << 20;
  std::error_code ec;
  if (fs::exists(file, ec) && !fs::is_regular_file(file, ec))
    return make_error(ErrorCode::Io, "config file " + file.string() + " is not a regular file");
  if (const std::uintmax_t size = fs::file_size(file, ec); !ec && size > kMaxConfigBytes)
    return make_error(ErrorCode::Io, "config file " + file.string() + " is " + std::to_string(size) +
                                         " bytes, more than the 16 MiB a config may be");
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(ErrorCode::Io, "cannot read config file " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return make_error(ErrorCode::Io, "cannot read config file " + file.string());
  return parse_config(text.str(), fs::absolute(file));
}

Result<Config> load_config(const std::optional<fs::path>& explicit_path) {
  KILN_TRY_ASSIGN(std::optional<fs::path> file, find_config_file(explicit_path));
  if (!file) return builtin_config();
  return load_config_file(*file);
}

}  // namespace kiln
