/* A tiny shared library the needs_dependency plugin links against. */
#include <kiln/plugin.h>

KILN_PLUGIN_EXPORT unsigned kiln_test_dependency_device_count(void) { return 2; }
