// Boost.JSON in header-only mode: its implementation is compiled exactly once,
// here, for every binary that links the SDK (libkiln, plugins, tools). The GPU
// machine has Boost's headers but no compiled boost_json (PLATFORM.md).
#include <boost/json/src.hpp>
