// kiln::version(): KILN_VERSION comes from CMake's project version (core/CMakeLists.txt).
#include "kiln/version.hpp"

namespace kiln {

std::string_view version() { return KILN_VERSION; }

}  // namespace kiln
