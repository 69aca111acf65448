#include "install_paths.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <system_error>

namespace kiln::detail {

namespace fs = std::filesystem;

fs::path libkiln_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&libkiln_path), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  fs::path path = fs::canonical(info.dli_fname, ec);
  return ec ? fs::absolute(info.dli_fname) : path;
}

fs::path exe_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

fs::path install_prefix() { return libkiln_path().parent_path().parent_path(); }

std::optional<fs::path> expand_path(std::string_view raw, const fs::path& base_dir, std::string& problem) {
  std::string out;
  if (raw.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    out = home != nullptr ? home : "";
    raw.remove_prefix(1);
  }
  while (!raw.empty()) {
    const std::size_t open = raw.find("${");
    if (open == std::string_view::npos) {
      out.append(raw);
      break;
    }
    out.append(raw.substr(0, open));
    const std::size_t close = raw.find('}', open);
    if (close == std::string_view::npos) {
      problem = "unclosed '${' in \"" + std::string(raw) + "\"";
      return std::nullopt;
    }
    const std::string_view name = raw.substr(open + 2, close - open - 2);
    if (name == "exe_dir") {
      out += exe_dir().string();
    } else if (name == "prefix") {
      out += install_prefix().string();
    } else {
      problem = "unknown variable ${" + std::string(name) + "} (known: ${exe_dir}, ${prefix})";
      return std::nullopt;
    }
    raw.remove_prefix(close + 1);
  }
  if (out.empty()) {
    problem = "empty path";
    return std::nullopt;
  }
  fs::path path(out);
  if (path.is_relative()) path = base_dir / path;
  return path.lexically_normal();
}

}  // namespace kiln::detail
