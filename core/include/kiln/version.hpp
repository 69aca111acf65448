// kiln/version.hpp - the version of libkiln a host runs against: CMake's
// project version ("0.1.0"), as `kiln --version` and `kiln devices --json`
// ("kiln_version") print it.
#pragma once

#include <string_view>

namespace kiln {

std::string_view version();

}  // namespace kiln
