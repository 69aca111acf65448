// Temporary files of compiles whose process died (killed mid-compile): found
// by name, <40 hex digits>.<pid>.<n>.c or .so.tmp (compile.cpp's
// unique_stem), and removed when that pid no longer exists. A live
// process's temporaries are never touched, so several processes may share
// the cache. (A cache folder shared between pid namespaces, e.g. two
// containers, could see another namespace's live compile as dead; its
// rename would then fail as a compile error, not a wrong object.)
#include "c.hpp"

#include <csignal>
#include <cerrno>
#include <charconv>
#include <string_view>

#include <sys/types.h>

namespace kiln::cplugin {

namespace {

// The pid in a temporary's name, or 0 when the name is not a temporary's.
pid_t temporary_owner(std::string_view name) {
  for (std::string_view suffix : {std::string_view(".so.tmp"), std::string_view(".c")}) {
    if (!name.ends_with(suffix)) continue;
    name.remove_suffix(suffix.size());
    if (name.size() < 44 || name[40] != '.') return 0;
    for (char c : name.substr(0, 40))
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return 0;
    name.remove_prefix(41);
    const std::size_t dot = name.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return 0;
    for (char c : name.substr(dot + 1))
      if (c < '0' || c > '9') return 0;
    pid_t pid = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + dot, pid);
    return ec == std::errc() && end == name.data() + dot && pid > 0 ? pid : 0;
  }
  return 0;
}

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

std::size_t remove_stale_temporaries(const std::filesystem::path& cache_dir) {
  std::size_t removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(cache_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const pid_t owner = temporary_owner(it->path().filename().string());
    if (owner == 0 || process_exists(owner)) continue;
    std::error_code remove_ec;
    if (std::filesystem::remove(it->path(), remove_ec)) ++removed;
  }
  return removed;
}

}  // namespace kiln::cplugin
