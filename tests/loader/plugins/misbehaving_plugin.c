/*
 * Plugins that take their process down, or hand the host hostile text, one
 * per build (tests/loader/CMakeLists.txt picks the define). The loader must
 * survive each (the plugin probe runs them in a process of its own) and
 * report what happened:
 *   MISBEHAVE_QUERY_SEGV  kiln_plugin_query dereferences NULL
 *   MISBEHAVE_INIT_SEGV   init dereferences NULL
 *   MISBEHAVE_INIT_HANG   init never returns
 *   MISBEHAVE_INIT_EXIT   init calls exit(3)
 *   MISBEHAVE_STRINGS     loads, but its device name, vendor, log line and
 *                         errors carry terminal escapes and invalid UTF-8
 */
#include <kiln/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What a hostile or broken plugin may send: an ANSI colour escape, a C1 CSI
 * (0x9b), a bidi override, a bare continuation byte, an overlong '/', and a
 * truncated sequence at the end. */
#define HOSTILE "\x1b[31mred\x1b[0m \x9b" "2J \xe2\x80\xae" "rev \x80 \xc0\xaf end\xe2\x82"

static volatile int* volatile nowhere = NULL;
static const kiln_host_api* g_host = NULL;

static kiln_error* init(kiln_init_args* args) {
  (void)args;
#if defined(MISBEHAVE_INIT_SEGV)
  fputs("misbehaving plugin: about to dereference NULL\n", stderr);
  fflush(stderr);
  return (kiln_error*)(size_t)*nowhere;
#elif defined(MISBEHAVE_INIT_HANG)
  for (;;) pause();
  return NULL;
#elif defined(MISBEHAVE_INIT_EXIT)
  exit(3);
#elif defined(MISBEHAVE_STRINGS)
  static const char line[] = "log: " HOSTILE "\nsecond line\tkept";
  g_host = args->host;
  args->host->log(args->host->context, KILN_LOG_WARNING, line, strlen(line));
  return NULL;
#else
  return NULL;
#endif
}

static kiln_error* device_count(kiln_device_count_args* args) {
  args->count = 1;
  return NULL;
}

static kiln_error* device_info(kiln_device_info_args* args) {
  kiln_device_info* info = args->info;
  snprintf(info->name, sizeof info->name, "%s", "name: " HOSTILE);
  snprintf(info->vendor, sizeof info->vendor, "%s", "vendor \x1b]0;title\x07");
  snprintf(info->driver_version, sizeof info->driver_version, "%s", "1.0\n\xff");
  info->kind = KILN_DEVICE_KIND_VIRTUAL;
  info->max_local_threads = 1;
  return NULL;
}

/* Opening fails with a hostile message. */
static kiln_error* device_open(kiln_device_open_args* args) {
  static const char message[] = "open: " HOSTILE;
  (void)args;
  return g_host->error_create(KILN_STATUS_UNAVAILABLE, message, strlen(message));
}

static kiln_plugin_api table = {
    .struct_size = KILN_PLUGIN_API_STRUCT_SIZE,
    .abi_major = KILN_ABI_MAJOR,
    .abi_minor = KILN_ABI_MINOR,
    .name = "misbehaving \x1b[1m",
    .version = "6.6.6\xff",
    .description = "a deliberately misbehaving test plugin",
    .init = init,
    .device_count = device_count,
    .device_info = device_info,
    .device_open = device_open,
};

KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(uint32_t host_major, uint32_t host_max_minor) {
  (void)host_major;
  (void)host_max_minor;
#if defined(MISBEHAVE_QUERY_SEGV)
  return (const kiln_plugin_api*)(size_t)*nowhere;
#endif
  return &table;
}
