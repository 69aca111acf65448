// Boost.JSON in header-only mode for the SDK, as the archive
// kiln_plugin_sdk_json: linked by each plugin (where it stays local,
// -Wl,--exclude-libs,ALL) and by out-of-tree plugins built against the
// installed SDK, never by executables linked with libkiln, which exports its
// own copy (core/runtime/boost_json.cpp). The GPU machine has Boost's headers
// but no compiled boost_json (PLATFORM.md).
#include <boost/json/src.hpp>
