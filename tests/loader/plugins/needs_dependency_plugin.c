/*
 * A sound plugin that links against libkiln_test_dependency.so (found next
 * to it through RPATH $ORIGIN). A copy of it moved elsewhere cannot load:
 * the test checks that the reason names the missing library.
 */
#include <kiln/plugin.h>

#include <string.h>

unsigned kiln_test_dependency_device_count(void);

static kiln_error* init(kiln_init_args* args) {
  (void)args;
  return NULL;
}

static kiln_error* device_count(kiln_device_count_args* args) {
  args->count = 0 * kiln_test_dependency_device_count();
  return NULL;
}

static kiln_error* device_info(kiln_device_info_args* args) {
  (void)args;
  return NULL;
}

static const kiln_plugin_api table = {
    .struct_size = KILN_PLUGIN_API_STRUCT_SIZE,
    .abi_major = KILN_ABI_MAJOR,
    .abi_minor = KILN_ABI_MINOR,
    .name = "needs_dependency",
    .version = "1.0.0",
    .description = "a plugin with a shared-library dependency",
    .init = init,
    .device_count = device_count,
    .device_info = device_info,
};

KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(uint32_t host_major, uint32_t host_max_minor) {
  (void)host_max_minor;
  return host_major == KILN_ABI_MAJOR ? &table : NULL;
}
