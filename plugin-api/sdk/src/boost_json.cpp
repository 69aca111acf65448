// Boost.JSON in header-only mode, for binaries that link the SDK without
// libkiln: each plugin (where it stays local, -Wl,--exclude-libs,ALL) and
// out-of-tree plugins built against the installed SDK. libkiln compiles its
// own, exported copy (core/runtime/boost_json.cpp), so executables linked
// with libkiln never take this one. The GPU machine has Boost's headers but
// no compiled boost_json (PLATFORM.md).
#include <boost/json/src.hpp>
