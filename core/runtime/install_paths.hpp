// Internal: where kiln is (libkiln, the executable, the install prefix) and
// the path expansion config values use.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::detail {

// The absolute path of libkiln.so itself (dladdr on one of its functions).
std::filesystem::path libkiln_path();
// The folder of the running executable (/proc/self/exe).
std::filesystem::path exe_dir();
// The install prefix: the parent of libkiln's folder (build/ in a build tree).
std::filesystem::path install_prefix();

// Expands ${exe_dir}, ${prefix} and a leading "~/", then makes the path
// absolute against `base_dir`. Returns nullopt and sets `problem` for an
// unknown ${variable}.
std::optional<std::filesystem::path> expand_path(std::string_view raw, const std::filesystem::path& base_dir,
                                                 std::string& problem);

}  // namespace kiln::detail
