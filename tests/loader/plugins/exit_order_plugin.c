/*
 * Checks that the host calls shutdown before the plugin's own exit-time
 * teardown. Like a C++ plugin's static objects, its state is torn down by a
 * handler registered when the library is loaded (atexit from a constructor).
 * shutdown writes "ok" to the file named by the option "report" when that
 * state is still alive, "torn down" when it is not.
 */
#define _POSIX_C_SOURCE 200112L
#include <kiln/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int state_alive;
static char report_path[1024];

static void teardown(void) { state_alive = 0; }

__attribute__((constructor)) static void load(void) {
  state_alive = 1;
  atexit(teardown); /* as a C++ static object's destructor would be */
}

static kiln_error* init(kiln_init_args* args) {
  /* options: {"report":"<path>"} as the host serialises it */
  const char* key = "\"report\":\"";
  const char* start = strstr(args->options_json, key);
  if (start != NULL) {
    const char* end;
    start += strlen(key);
    end = strchr(start, '"');
    if (end != NULL && (size_t)(end - start) < sizeof report_path) memcpy(report_path, start, (size_t)(end - start));
  }
  return NULL;
}

static void plugin_shutdown(void) {
  FILE* out;
  if (report_path[0] == '\0') return;
  out = fopen(report_path, "w");
  if (out == NULL) return;
  fputs(state_alive ? "ok" : "torn down", out);
  fclose(out);
}

static kiln_error* device_count(kiln_device_count_args* args) {
  args->count = 0;
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
    .name = "exit_order",
    .version = "1.0.0",
    .description = "checks the order of shutdown and exit-time teardown",
    .init = init,
    .shutdown = plugin_shutdown,
    .device_count = device_count,
    .device_info = device_info,
};

KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(uint32_t host_major, uint32_t host_max_minor) {
  (void)host_max_minor;
  return host_major == KILN_ABI_MAJOR ? &table : NULL;
}
