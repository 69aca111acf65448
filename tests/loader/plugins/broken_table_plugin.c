/*
 * Plugins whose kiln_plugin_query answer is wrong, one per build
 * (tests/loader/CMakeLists.txt picks the define):
 *   BROKEN_NULL_QUERY   returns NULL (cannot serve this host)
 *   BROKEN_ABI_MAJOR    returns a table built for ABI major 2
 *   BROKEN_SMALL_TABLE  returns a table whose struct_size is too small
 *   BROKEN_INIT_FAILS   a sound table whose init logs a line and fails
 *   BROKEN_HUGE_COUNT   inits, then claims 0xFFFFFFFF devices
 */
#include <kiln/plugin.h>

#include <string.h>

static kiln_error* init(kiln_init_args* args) {
  static const char line[] = "probing the test frobnicator";
#if defined(BROKEN_HUGE_COUNT)
  (void)args;
  (void)line;
  return NULL;
#endif
  static const char message[] = "the test frobnicator is not connected";
  args->host->log(args->host->context, KILN_LOG_WARNING, line, strlen(line));
  return args->host->error_create(KILN_STATUS_UNAVAILABLE, message, strlen(message));
}

static kiln_error* device_count(kiln_device_count_args* args) {
#if defined(BROKEN_HUGE_COUNT)
  args->count = 0xFFFFFFFFu;
#else
  args->count = 0;
#endif
  return NULL;
}

static kiln_error* device_info(kiln_device_info_args* args) {
  (void)args;
  return NULL;
}

static kiln_plugin_api table = {
    .struct_size = KILN_PLUGIN_API_STRUCT_SIZE,
    .abi_major = KILN_ABI_MAJOR,
    .abi_minor = KILN_ABI_MINOR,
    .name = "broken",
    .version = "0.0.1",
    .description = "a deliberately broken test plugin",
    .init = init,
    .device_count = device_count,
    .device_info = device_info,
};

KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(uint32_t host_major, uint32_t host_max_minor) {
  (void)host_major;
  (void)host_max_minor;
#if defined(BROKEN_NULL_QUERY)
  (void)table;
  return NULL;
#elif defined(BROKEN_ABI_MAJOR)
  table.abi_major = 2;
  table.abi_minor = 3;
  return &table;
#elif defined(BROKEN_SMALL_TABLE)
  table.struct_size = KILN_STRUCT_SIZE(kiln_plugin_api, device_info);
  return &table;
#elif defined(BROKEN_INIT_FAILS) || defined(BROKEN_HUGE_COUNT)
  return &table;
#else
#error "pick one BROKEN_* define"
#endif
}
