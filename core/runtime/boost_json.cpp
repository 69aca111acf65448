// Boost.JSON (header-only mode: the machines have Boost's headers but no
// compiled boost_json, PLATFORM.md), compiled once for every host process:
// libkiln exports it, and executables linked with libkiln use this copy.
// The SDK's own copy (plugin-api/sdk/src/boost_json.cpp) is then left out of
// them: the linker takes a member of the SDK archive only for symbols still
// undefined, and libkiln, linked first, defines these. Plugins carry the
// SDK's copy, local to each plugin (-Wl,--exclude-libs,ALL). Two copies in
// one module group (libkiln's and an executable's) were an ODR violation
// that stopped every AddressSanitizer binary at start.
#include <boost/json/src.hpp>
