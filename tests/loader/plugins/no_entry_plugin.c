/* A shared library that is not a kiln plugin: it exports no kiln_plugin_query. */
#include <kiln/plugin.h>

KILN_PLUGIN_EXPORT int kiln_test_not_a_plugin(void) { return 42; }
