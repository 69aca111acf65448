// Boost.JSON (header-only mode: the machines have Boost's headers but no
// compiled boost_json, PLATFORM.md), compiled once for every host process:
// libkiln exports it, and executables linked with libkiln use this copy.
// The SDK's own copy is a separate archive (kiln_plugin_sdk_json,
// plugin-api/sdk/CMakeLists.txt) that only plugins link, where it stays
// local (-Wl,--exclude-libs,ALL). Two copies in one process's global scope
// (libkiln's and an executable's) were an ODR violation that stopped every
// AddressSanitizer binary at start.
#include <boost/json/src.hpp>
