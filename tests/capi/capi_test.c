/*
 * capi_test.c - every function of the kiln C API (kiln/kiln.h), from C99,
 * against real devices: c:0 and the dummy device always, every other device
 * that compiles kernels where present. Random inputs, results checked
 * against libm in double; the error paths checked for their code and what
 * their message names.
 *
 *   kiln_capi_test WORK_DIR     (the tuning databases go there)
 *
 * Built with -std=c99 -Wall -Wextra -pedantic -Werror, in the build tree and
 * against an installed kiln (tests/loader/install_test.cmake, step capi).
 * Exit status 0 when every check passed.
 */
#define _POSIX_C_SOURCE 200809L /* pthreads under -std=c99 */
#include <kiln/kiln.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond, ...)                                        \
  do {                                                           \
    if (!(cond)) {                                               \
      ++failures;                                                \
      fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                              \
      fprintf(stderr, "\n");                                     \
    }                                                            \
  } while (0)

/* A call that must succeed; on failure the test cannot go on. */
#define CHECK(call)                                                                    \
  do {                                                                                 \
    kiln_status_t* check_status_ = (call);                                             \
    if (check_status_ != NULL) {                                                       \
      fprintf(stderr, "FAILED %s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,        \
              kiln_status_message(check_status_), kiln_code_name(kiln_status_code(check_status_))); \
      kiln_status_free(check_status_);                                                 \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

/* A call that must fail with `code` and a message containing `needle`;
 * returns the status for further checks (the caller frees it). */
static kiln_status_t* expect_error(kiln_status_t* status, kiln_code_t code, const char* needle, const char* what,
                                   int line) {
  if (status == NULL) {
    ++failures;
    fprintf(stderr, "FAILED line %d: %s succeeded, expected %s\n", line, what, kiln_code_name(code));
    return NULL;
  }
  if (kiln_status_code(status) != code || strstr(kiln_status_message(status), needle) == NULL) {
    ++failures;
    fprintf(stderr, "FAILED line %d: %s: expected %s containing '%s', got %s: %s\n", line, what, kiln_code_name(code),
            needle, kiln_code_name(kiln_status_code(status)), kiln_status_message(status));
  }
  return status;
}
#define EXPECT_ERROR(call, code, needle) kiln_status_free(expect_error((call), (code), (needle), #call, __LINE__))

/* xorshift64*: the same inputs on every platform. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static float random_float(float low, float high) {
  uint64_t x = rng_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state = x;
  return low + (high - low) * (float)((double)((x * 0x2545f4914f6cdd1du) >> 40) / (double)(1u << 24));
}
static void fill_random(float* data, size_t n, float low, float high) {
  size_t i;
  for (i = 0; i < n; ++i) {
    data[i] = random_float(low, high);
    if (data[i] == 0.0f) data[i] = 0.5f; /* never zeros */
  }
}

/* max |a - b| / max(|b|, 1): relative for large values, absolute near 0. */
static double max_error(const float* actual, const double* expected, size_t n) {
  double worst = 0;
  size_t i;
  for (i = 0; i < n; ++i) {
    const double scale = fabs(expected[i]) > 1.0 ? fabs(expected[i]) : 1.0;
    const double e = fabs((double)actual[i] - expected[i]) / scale;
    if (!(e <= worst)) worst = e; /* NaN counts as the worst */
  }
  return worst;
}

#define N 1000
#define ROWS 37
#define COLS 53

static const char* kElementwise =
    "# y[i] = exp(a[i]) * b[i] + sqrt(|a[i]|)\n"
    "%a = param 0 global f32[1000]\n"
    "%b = param 1 global f32[1000]\n"
    "%y = param 2 global_mut f32[1000]\n"
    "%n = const i64 1000\n"
    "%i = index group 0 %n\n"
    "%x = load f32 %a[%i]\n"
    "%w = load f32 %b[%i]\n"
    "%e = exp f32 %x\n"
    "%p = mul f32 %e, %w\n"
    "%m = abs f32 %x\n"
    "%s = sqrt f32 %m\n"
    "%r = add f32 %p, %s\n"
    "store f32 %y[%i], %r\n";

/* ---------------------------------------------------------------- status -- */

static void test_version_and_status(void) {
  uint32_t major = 0, minor = 99;
  kiln_c_api_version(&major, &minor);
  EXPECT(major == KILN_C_API_MAJOR, "library major %u, header %u", major, KILN_C_API_MAJOR);
  EXPECT(minor != 99, "library minor not written");
  kiln_c_api_version(NULL, NULL);
  EXPECT(kiln_version() != NULL && strchr(kiln_version(), '.') != NULL, "version '%s'", kiln_version());
  /* NULL is success. */
  EXPECT(kiln_status_code(NULL) == KILN_CODE_OK, "code of NULL");
  EXPECT(strcmp(kiln_status_message(NULL), "") == 0, "message of NULL");
  EXPECT(kiln_status_line(NULL) == 0 && kiln_status_column(NULL) == 0 && kiln_status_op(NULL) == -1, "fields of NULL");
  EXPECT(strcmp(kiln_code_name(KILN_CODE_PARSE), "parse error") == 0, "%s", kiln_code_name(KILN_CODE_PARSE));
  EXPECT(strcmp(kiln_code_name(KILN_CODE_OK), "ok") == 0, "%s", kiln_code_name(KILN_CODE_OK));
  kiln_status_free(NULL);
  kiln_string_free(NULL);
}

/* --------------------------------------------------------------- runtime -- */

static kiln_runtime_t* open_runtime(const char* work_dir) {
  char json[1024];
  kiln_runtime_t* runtime = NULL;
  size_t count = 0, i;
  char db[1024];
  /* A fresh database: an entry of an earlier run (another search space, say)
     would be listed beside this run's. */
  snprintf(db, sizeof db, "%s/capi-tuning.sqlite", work_dir);
  remove(db);
  /* The dummy plugin is disabled by default; few candidates keep tuning short. */
  snprintf(json, sizeof json,
           "{\"plugins\": {\"dummy\": {\"enabled\": true}},\n"
           " \"tuning_db\": \"%s/capi-tuning.sqlite\",\n"
           " \"autotune\": {\"n_launches\": 3, \"budget_s\": 20, \"compile_threads\": 2}}\n",
           work_dir);
  CHECK(kiln_runtime_open_json(json, strlen(json), &runtime));
  EXPECT(strstr(kiln_runtime_config_source(runtime), "<config text>") != NULL, "source %s",
         kiln_runtime_config_source(runtime));
  CHECK(kiln_runtime_warning_count(runtime, &count));
  for (i = 0; i < count; ++i) {
    const char* text = NULL;
    CHECK(kiln_runtime_warning(runtime, i, &text));
    printf("warning: %s\n", text);
  }
  {
    const char* none = NULL;
    EXPECT_ERROR(kiln_runtime_warning(runtime, count, &none), KILN_CODE_INVALID_ARGUMENT, "index");
  }
  return runtime;
}

static void test_runtime_errors(void) {
  kiln_runtime_t* runtime = NULL;
  const char* bad = "{\"plugins\": {\"c\": {\"enabled\": tru}}}";
  kiln_status_t* s = expect_error(kiln_runtime_open_json(bad, strlen(bad), &runtime), KILN_CODE_CONFIG,
                                  "<config text>:1:", "malformed config", __LINE__);
  kiln_status_free(s);
  EXPECT(runtime == NULL, "out written on failure");
  EXPECT_ERROR(kiln_runtime_open("/nonexistent/kiln-config.json", &runtime), KILN_CODE_NOT_FOUND,
               "/nonexistent/kiln-config.json");
  EXPECT_ERROR(kiln_runtime_open(NULL, NULL), KILN_CODE_INVALID_ARGUMENT, "out is NULL");
  /* The search order: the test environment has no config, so the built-in default. */
  CHECK(kiln_runtime_open(NULL, &runtime));
  EXPECT(strcmp(kiln_runtime_config_source(runtime), "built-in") == 0, "source %s", kiln_runtime_config_source(runtime));
  kiln_runtime_free(runtime);
  kiln_runtime_free(NULL);
}

static void test_plugins(const kiln_runtime_t* runtime) {
  size_t count = 0, i;
  int saw_c = 0, saw_dummy = 0;
  const kiln_plugin_t* plugin = NULL;
  CHECK(kiln_runtime_plugin_count(runtime, &count));
  EXPECT(count >= 2, "%zu plugins", count);
  for (i = 0; i < count; ++i) {
    kiln_plugin_state_t state;
    CHECK(kiln_runtime_plugin(runtime, i, &plugin));
    state = kiln_plugin_state(plugin);
    printf("plugin %-8s %-8s %u devices  %s %s\n", kiln_plugin_name(plugin), kiln_plugin_state_name(state),
           kiln_plugin_device_count(plugin), kiln_plugin_version(plugin), kiln_plugin_reason(plugin));
    EXPECT(kiln_plugin_library(plugin) != NULL, "library of %s", kiln_plugin_name(plugin));
    if (state == KILN_PLUGIN_LOADED) EXPECT(strcmp(kiln_plugin_reason(plugin), "") == 0, "reason of a loaded plugin");
    else EXPECT(strlen(kiln_plugin_reason(plugin)) > 0, "a %s plugin says why", kiln_plugin_state_name(state));
    if (strcmp(kiln_plugin_name(plugin), "c") == 0) {
      saw_c = 1;
      EXPECT(state == KILN_PLUGIN_LOADED && kiln_plugin_device_count(plugin) == 1, "c: %s",
             kiln_plugin_reason(plugin));
    }
    if (strcmp(kiln_plugin_name(plugin), "dummy") == 0) {
      saw_dummy = 1;
      EXPECT(state == KILN_PLUGIN_LOADED, "dummy: %s", kiln_plugin_reason(plugin));
    }
  }
  EXPECT(saw_c && saw_dummy, "c %d, dummy %d", saw_c, saw_dummy);
  EXPECT_ERROR(kiln_runtime_plugin(runtime, count, &plugin), KILN_CODE_INVALID_ARGUMENT, "index");
  EXPECT(kiln_plugin_name(NULL) == NULL && kiln_plugin_device_count(NULL) == 0, "accessors of NULL");
}

/* --------------------------------------------------------------- devices -- */

static void test_device_list(const kiln_runtime_t* runtime) {
  size_t count = 0, i;
  int saw_c = 0, saw_dummy = 0;
  kiln_device_info_t info;
  kiln_device_t* device = NULL;
  CHECK(kiln_runtime_device_count(runtime, &count));
  for (i = 0; i < count; ++i) {
    memset(&info, 0, sizeof info);
    info.struct_size = KILN_DEVICE_INFO_T_SIZE;
    CHECK(kiln_runtime_device_info(runtime, i, &info));
    printf("device %-10s %s (%s), kind %u, %u units, flags 0x%x\n", info.id, info.name, info.vendor, info.kind,
           info.compute_units, info.flags);
    if (strcmp(info.id, "c:0") == 0) {
      saw_c = 1;
      EXPECT(strcmp(info.plugin, "c") == 0 && info.kind == 1, "c:0 is a cpu of plugin c");
      EXPECT((info.flags & KILN_DEVICE_INFO_HOST_MEMORY) && (info.flags & KILN_DEVICE_INFO_CAN_COMPILE), "c:0 flags");
    }
    if (strcmp(info.id, "dummy:0") == 0) saw_dummy = 1;
  }
  EXPECT(saw_c && saw_dummy, "c:0 %d, dummy:0 %d", saw_c, saw_dummy);
  EXPECT_ERROR(kiln_runtime_device_info(runtime, count, &info), KILN_CODE_INVALID_ARGUMENT, "index");
  info.struct_size = 4;
  EXPECT_ERROR(kiln_runtime_device_info(runtime, 0, &info), KILN_CODE_INVALID_ARGUMENT, "struct_size");
  /* An older caller's smaller struct gets only the fields that fit. */
  memset(&info, 0xff, sizeof info);
  info.struct_size = offsetof(kiln_device_info_t, kind);
  CHECK(kiln_runtime_device_info(runtime, 0, &info));
  EXPECT(info.kind == 0xffffffffu, "a field beyond struct_size was written");

  EXPECT_ERROR(kiln_device_open(runtime, "nope:0", &device), KILN_CODE_NOT_FOUND, "nope");
  EXPECT_ERROR(kiln_device_open(runtime, "c:99", &device), KILN_CODE_NOT_FOUND, "c:99");
  EXPECT(device == NULL, "out written on failure");
  /* The default device. */
  CHECK(kiln_device_open(runtime, NULL, &device));
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK(kiln_device_get_info(device, &info));
  EXPECT(info.flags & KILN_DEVICE_INFO_CAN_COMPILE, "the default device %s compiles", info.id);
  EXPECT(kiln_device_supports_unary(device, KILN_UNARY_EXP, KILN_DTYPE_F32), "%s runs exp f32", info.id);
  EXPECT(kiln_device_supports_binary(device, KILN_BINARY_ADD, KILN_DTYPE_F32), "%s runs add f32", info.id);
  EXPECT(!kiln_device_supports_unary(device, 63, KILN_DTYPE_F32), "no op 63");
  EXPECT(!kiln_device_supports_unary(NULL, KILN_UNARY_EXP, KILN_DTYPE_F32), "NULL device");
  kiln_device_free(device);
  kiln_device_free(NULL);
}

/* --------------------------------------------------------------- kernels -- */

static void test_text_errors(void) {
  kiln_kernel_t* kernel = NULL;
  kiln_status_t* s;
  const char* bad_op = "%0 = param 0 global f32[4]\n%1 = const i64 4\n%2 = frobnicate f32 %0\n";
  const char* read_only = "%0 = param 0 global f32[4]\n%1 = const i64 4\n%2 = index group 0 %1\n"
                          "%3 = load f32 %0[%2]\nstore f32 %0[%2], %3\n";
  s = expect_error(kiln_kernel_from_text(bad_op, strlen(bad_op), &kernel), KILN_CODE_PARSE, "3:", "bad op", __LINE__);
  EXPECT(kiln_status_line(s) == 3 && kiln_status_column(s) >= 1, "line %u col %u: %s", kiln_status_line(s),
         kiln_status_column(s), kiln_status_message(s));
  kiln_status_free(s);
  /* A store to a read-only param parses, then fails the verifier naming the op and its line. */
  s = expect_error(kiln_kernel_from_text(read_only, strlen(read_only), &kernel), KILN_CODE_VERIFY, "line 5",
                   "store to global", __LINE__);
  EXPECT(kiln_status_op(s) == 4 && kiln_status_line(s) == 5, "op %lld line %u", (long long)kiln_status_op(s),
         kiln_status_line(s));
  kiln_status_free(s);
  EXPECT(kernel == NULL, "out written on failure");
  EXPECT_ERROR(kiln_kernel_from_text(NULL, 3, &kernel), KILN_CODE_INVALID_ARGUMENT, "text is NULL");
}

/* Mangled IR text never crashes and always answers OK, PARSE or VERIFY
 * with a message. */
static void test_mangled_text(void) {
  const char alphabet[] = "%=[],#\n 0123456789abcdefgilmnoprstuxy-.?";
  char text[1024];
  size_t len = strlen(kElementwise), i;
  int round, parsed = 0;
  for (round = 0; round < 400; ++round) {
    kiln_kernel_t* kernel = NULL;
    kiln_status_t* s;
    int edits = 1 + round % 4, e;
    memcpy(text, kElementwise, len + 1);
    for (e = 0; e < edits; ++e) {
      const size_t at = (size_t)(random_float(0.0f, 1.0f) * (float)(len - 1));
      text[at] = alphabet[(size_t)(random_float(0.0f, 1.0f) * (float)(sizeof alphabet - 2))];
    }
    s = kiln_kernel_from_text(text, len, &kernel);
    if (s == NULL) {
      ++parsed;
      kiln_kernel_free(kernel);
      continue;
    }
    EXPECT((kiln_status_code(s) == KILN_CODE_PARSE || kiln_status_code(s) == KILN_CODE_VERIFY) &&
               strlen(kiln_status_message(s)) > 0,
           "mangled text: %s: %s", kiln_code_name(kiln_status_code(s)), kiln_status_message(s));
    kiln_status_free(s);
  }
  /* Truncated at every length. */
  for (i = 0; i < len; ++i) {
    kiln_kernel_t* kernel = NULL;
    kiln_status_t* s = kiln_kernel_from_text(kElementwise, i, &kernel);
    kiln_status_free(s);
    kiln_kernel_free(kernel);
  }
  printf("mangled IR text: 400 variants answered (%d still valid kernels)\n", parsed);
}

static kiln_kernel_t* elementwise_kernel(void) {
  kiln_kernel_t* kernel = NULL;
  kiln_kernel_t* again = NULL;
  char* text = NULL;
  char* text_again = NULL;
  size_t params = 0;
  kiln_param_info_t info;
  CHECK(kiln_kernel_from_text(kElementwise, strlen(kElementwise), &kernel));
  EXPECT(kiln_kernel_op_count(kernel) == 13, "%zu ops", kiln_kernel_op_count(kernel));
  /* Printing round-trips. */
  CHECK(kiln_kernel_print(kernel, &text));
  CHECK(kiln_kernel_from_text(text, strlen(text), &again));
  CHECK(kiln_kernel_print(again, &text_again));
  EXPECT(strcmp(text, text_again) == 0, "print/parse/print differs:\n%s\n%s", text, text_again);
  kiln_string_free(text);
  kiln_string_free(text_again);
  kiln_kernel_free(again);
  kiln_kernel_free(NULL);
  /* Its params. */
  CHECK(kiln_kernel_param_count(kernel, &params));
  EXPECT(params == 3, "%zu params", params);
  info.struct_size = KILN_PARAM_INFO_T_SIZE;
  CHECK(kiln_kernel_param(kernel, 2, &info));
  EXPECT(info.kind == KILN_PARAM_GLOBAL_MUT && info.dtype == KILN_DTYPE_F32 && info.elements == N,
         "slot 2: kind %u dtype %u elements %llu", info.kind, info.dtype, (unsigned long long)info.elements);
  EXPECT_ERROR(kiln_kernel_param(kernel, 3, &info), KILN_CODE_INVALID_ARGUMENT, "slot 3");
  return kernel;
}

/* out[r] = max over c of (x[r*COLS + c] * s) + sum over c of x[r*COLS + c]:
 * two reduce-style loops over REGISTER accumulators, from the C builder. */
static kiln_kernel_t* row_kernel(void) {
  kiln_builder_t* b = NULL;
  kiln_kernel_t* kernel = NULL;
  kiln_value_t x, s, out, sum, best, rows, cols, zero_i, zero, low, r, base, c, idx, v, acc, t, loop, loop2, total,
      top, result, scaled, dummy_value;
  CHECK(kiln_builder_new(&b));
  CHECK(kiln_builder_param(b, KILN_PARAM_GLOBAL, KILN_DTYPE_F32, ROWS * COLS, &x));
  CHECK(kiln_builder_param(b, KILN_PARAM_VARIABLE, KILN_DTYPE_F32, 0, &s));
  CHECK(kiln_builder_param(b, KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, ROWS, &out));
  CHECK(kiln_builder_storage(b, KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1, &sum));
  CHECK(kiln_builder_storage(b, KILN_SCOPE_REGISTER, KILN_DTYPE_F32, 1, &best));
  CHECK(kiln_builder_const_i64(b, KILN_DTYPE_I64, ROWS, &rows));
  CHECK(kiln_builder_const_i64(b, KILN_DTYPE_I64, COLS, &cols));
  CHECK(kiln_builder_const_i64(b, KILN_DTYPE_I64, 0, &zero_i));
  CHECK(kiln_builder_const_f64(b, KILN_DTYPE_F32, 0.0, &zero));
  CHECK(kiln_builder_const_f64(b, KILN_DTYPE_F32, -1e30, &low));
  CHECK(kiln_builder_index(b, 0, rows, &r));
  CHECK(kiln_builder_binary(b, KILN_BINARY_MUL, r, cols, &base));
  CHECK(kiln_builder_store(b, sum, zero_i, zero));
  CHECK(kiln_builder_store(b, best, zero_i, low));
  /* sum */
  CHECK(kiln_builder_loop(b, cols, &loop));
  c = loop;
  CHECK(kiln_builder_binary(b, KILN_BINARY_ADD, base, c, &idx));
  CHECK(kiln_builder_load(b, x, idx, &v));
  CHECK(kiln_builder_load(b, sum, zero_i, &acc));
  CHECK(kiln_builder_binary(b, KILN_BINARY_ADD, acc, v, &t));
  CHECK(kiln_builder_store(b, sum, zero_i, t));
  /* Error paths while a loop is open: params and indices come first; a wrong end. */
  EXPECT_ERROR(kiln_builder_param(b, KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 4, &dummy_value), KILN_CODE_INVALID_ARGUMENT,
               "before any loop");
  EXPECT_ERROR(kiln_builder_end_loop(b, c + 1), KILN_CODE_INVALID_ARGUMENT, "innermost open loop");
  CHECK(kiln_builder_end_loop(b, loop));
  /* max of x * s, with a select on a comparison */
  CHECK(kiln_builder_loop(b, cols, &loop2));
  CHECK(kiln_builder_binary(b, KILN_BINARY_ADD, base, loop2, &idx));
  CHECK(kiln_builder_load(b, x, idx, &v));
  CHECK(kiln_builder_binary(b, KILN_BINARY_MUL, v, s, &scaled));
  CHECK(kiln_builder_load(b, best, zero_i, &acc));
  CHECK(kiln_builder_binary(b, KILN_BINARY_CMPGT, scaled, acc, &t));
  CHECK(kiln_builder_select(b, t, scaled, acc, &t));
  CHECK(kiln_builder_store(b, best, zero_i, t));
  CHECK(kiln_builder_end_loop(b, loop2));
  CHECK(kiln_builder_load(b, sum, zero_i, &total));
  CHECK(kiln_builder_load(b, best, zero_i, &top));
  CHECK(kiln_builder_binary(b, KILN_BINARY_ADD, top, total, &result));
  CHECK(kiln_builder_store(b, out, r, result));
  CHECK(kiln_builder_finish(b, &kernel));
  kiln_builder_free(b);
  return kernel;
}

static void test_builder_errors(void) {
  kiln_builder_t* b = NULL;
  kiln_kernel_t* kernel = NULL;
  kiln_value_t x, n, i, v, wide, bad, cond;
  kiln_status_t* s;
  CHECK(kiln_builder_new(&b));
  CHECK(kiln_builder_param(b, KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 8, &x));
  CHECK(kiln_builder_const_i64(b, KILN_DTYPE_I64, 8, &n));
  CHECK(kiln_builder_index(b, 0, n, &i));
  EXPECT_ERROR(kiln_builder_index(b, 3, n, &v), KILN_CODE_INVALID_ARGUMENT, "axis 3");
  EXPECT_ERROR(kiln_builder_load(b, x, 99, &v), KILN_CODE_INVALID_ARGUMENT, "index %99 is not defined");
  EXPECT_ERROR(kiln_builder_unary(b, 0, i, &v), KILN_CODE_INVALID_ARGUMENT, "not a kiln_unary_op");
  EXPECT_ERROR(kiln_builder_binary(b, 200, i, i, &v), KILN_CODE_INVALID_ARGUMENT, "not a kiln_binary_op");
  EXPECT_ERROR(kiln_builder_const_f64(b, 99, 1.0, &v), KILN_CODE_INVALID_ARGUMENT, "dtype 99");
  EXPECT_ERROR(kiln_builder_storage(b, KILN_SCOPE_GROUP, KILN_DTYPE_F32, 1, &v), KILN_CODE_INVALID_ARGUMENT, "scope");
  EXPECT_ERROR(kiln_builder_param(b, 7, KILN_DTYPE_F32, 1, &v), KILN_CODE_INVALID_ARGUMENT, "kind 7");
  EXPECT_ERROR(kiln_builder_unary(NULL, KILN_UNARY_EXP, i, &v), KILN_CODE_INVALID_ARGUMENT, "builder is NULL");
  EXPECT_ERROR(kiln_builder_unary(b, KILN_UNARY_EXP, i, NULL), KILN_CODE_INVALID_ARGUMENT, "out is NULL");
  CHECK(kiln_builder_load(b, x, i, &v));
  /* A store has no value: it cannot be an operand. */
  CHECK(kiln_builder_store(b, x, i, v));
  EXPECT_ERROR(kiln_builder_unary(b, KILN_UNARY_EXP, v + 1, &bad), KILN_CODE_INVALID_ARGUMENT, "has no value");
  /* Mismatched types are the verifier's: finish names the op. */
  CHECK(kiln_builder_cast(b, KILN_DTYPE_F64, v, &wide));
  CHECK(kiln_builder_binary(b, KILN_BINARY_ADD, v, wide, &bad));
  CHECK(kiln_builder_binary(b, KILN_BINARY_CMPLT, v, v, &cond));
  CHECK(kiln_builder_if(b, cond, &v));
  EXPECT_ERROR(kiln_builder_end_if(b, cond), KILN_CODE_INVALID_ARGUMENT, "innermost open if");
  CHECK(kiln_builder_end_if(b, v));
  CHECK(kiln_builder_mad(b, wide, wide, wide, &v));
  s = expect_error(kiln_builder_finish(b, &kernel), KILN_CODE_VERIFY, "add", "mixed types", __LINE__);
  EXPECT(kiln_status_op(s) == (int64_t)bad, "op %lld, expected %u", (long long)kiln_status_op(s), bad);
  kiln_status_free(s);
  EXPECT(kernel == NULL, "out written on failure");
  kiln_builder_free(b);
  kiln_builder_free(NULL);
}

/* -------------------------------------------------------------- programs -- */

static void upload(kiln_device_t* device, const float* data, size_t n, kiln_buffer_t** out) {
  CHECK(kiln_buffer_alloc(device, n * sizeof(float), out));
  CHECK(kiln_buffer_write(*out, 0, data, n * sizeof(float)));
}

/* Launches an elementwise program on random inputs and checks it; returns
 * its buffers for the error paths (the caller frees them). */
static void launch_elementwise(kiln_device_t* device, const char* id, const kiln_program_t* program,
                               kiln_buffer_t** buffers) {
  static float a[N], b[N], y[N];
  static double expected[N];
  kiln_launch_arg_t args[3];
  size_t i;
  double err;
  fill_random(a, N, -2.0f, 2.0f);
  fill_random(b, N, -1.0f, 1.0f);
  for (i = 0; i < N; ++i) expected[i] = exp((double)a[i]) * b[i] + sqrt(fabs((double)a[i]));
  upload(device, a, N, &buffers[0]);
  upload(device, b, N, &buffers[1]);
  CHECK(kiln_buffer_alloc(device, sizeof y, &buffers[2]));
  EXPECT(kiln_buffer_size(buffers[2]) == sizeof y, "size %llu", (unsigned long long)kiln_buffer_size(buffers[2]));
  for (i = 0; i < 3; ++i) args[i] = kiln_arg_buffer(buffers[i]);
  CHECK(kiln_program_launch(program, args, 3));
  CHECK(kiln_buffer_read(buffers[2], 0, y, sizeof y));
  err = max_error(y, expected, N);
  EXPECT(err < 1e-5, "%s: elementwise max error %g", id, err);
  printf("%s: elementwise ok (max error %.3g)\n", id, err);
}

static void run_elementwise(kiln_device_t* device, const char* id, const kiln_kernel_t* kernel) {
  static float a[N], y[N];
  kiln_program_t* program = NULL;
  kiln_buffer_t* buffers[3] = {NULL, NULL, NULL};
  kiln_buffer_t* small = NULL;
  kiln_launch_arg_t args[3];
  kiln_timing_t timing;
  kiln_status_t* s;
  size_t i;

  s = kiln_program_compile(device, kernel, NULL, &program);
  if (kiln_status_code(s) == KILN_CODE_UNSUPPORTED) { /* a fixed-function device (cblas) */
    printf("%s: elementwise kernel unsupported, as a fixed-function device says: %s\n", id, kiln_status_message(s));
    kiln_status_free(s);
    return;
  }
  CHECK(s);
  launch_elementwise(device, id, program, buffers);
  for (i = 0; i < 3; ++i) args[i] = kiln_arg_buffer(buffers[i]);

  /* Timed. */
  memset(&timing, 0, sizeof timing);
  timing.struct_size = KILN_TIMING_T_SIZE;
  CHECK(kiln_program_launch_timed(program, args, 3, 1, 3, &timing));
  EXPECT(timing.runs == 3 && timing.min_ns <= timing.median_ns, "%s: runs %u min %llu median %llu", id, timing.runs,
         (unsigned long long)timing.min_ns, (unsigned long long)timing.median_ns);
  EXPECT(timing.median_ns > 0, "%s: a median of 0 ns", id);
  EXPECT_ERROR(kiln_program_launch_timed(program, args, 3, 1, 0, &timing), KILN_CODE_INVALID_ARGUMENT, "repeats");

  /* Wrong sizes and counts. */
  CHECK(kiln_buffer_alloc(device, 16, &small));
  EXPECT_ERROR(kiln_buffer_write(small, 8, a, 16), KILN_CODE_INVALID_ARGUMENT, "16");
  EXPECT_ERROR(kiln_buffer_read(small, 0, y, 17), KILN_CODE_INVALID_ARGUMENT, "17");
  args[2] = kiln_arg_buffer(small);
  EXPECT_ERROR(kiln_program_launch(program, args, 3), KILN_CODE_INVALID_ARGUMENT, "16");
  EXPECT_ERROR(kiln_program_launch(program, args, 2), KILN_CODE_INVALID_ARGUMENT, "");
  args[2] = kiln_arg_i64(5);
  EXPECT_ERROR(kiln_program_launch(program, args, 3), KILN_CODE_INVALID_ARGUMENT, "");
  EXPECT_ERROR(kiln_buffer_alloc(device, 0, &small), KILN_CODE_INVALID_ARGUMENT, "bytes is 0");

  kiln_buffer_free(small);
  for (i = 0; i < 3; ++i) kiln_buffer_free(buffers[i]);
  kiln_buffer_free(NULL);
  kiln_program_free(program);
  kiln_program_free(NULL);
}

static void run_rows(kiln_device_t* device, const char* id, const kiln_kernel_t* kernel) {
  static float x[ROWS * COLS], out[ROWS];
  static double expected[ROWS];
  const float scale = 1.5f;
  kiln_program_t* program = NULL;
  kiln_buffer_t *bx = NULL, *bo = NULL;
  kiln_launch_arg_t args[3];
  kiln_status_t* s;
  size_t r, c;
  double err;
  fill_random(x, ROWS * COLS, -1.0f, 1.0f);
  for (r = 0; r < ROWS; ++r) {
    double sum = 0, best = -1e30;
    for (c = 0; c < COLS; ++c) {
      const float scaled = x[r * COLS + c] * scale;
      sum += x[r * COLS + c];
      if (scaled > best) best = scaled;
    }
    expected[r] = best + sum;
  }
  s = kiln_program_compile(device, kernel, NULL, &program);
  if (kiln_status_code(s) == KILN_CODE_UNSUPPORTED) {
    printf("%s: row kernel unsupported: %s\n", id, kiln_status_message(s));
    kiln_status_free(s);
    return;
  }
  CHECK(s);
  upload(device, x, ROWS * COLS, &bx);
  CHECK(kiln_buffer_alloc(device, sizeof out, &bo));
  args[0] = kiln_arg_buffer(bx);
  args[1] = kiln_arg_f32(scale);
  args[2] = kiln_arg_buffer(bo);
  CHECK(kiln_program_launch(program, args, 3));
  CHECK(kiln_buffer_read(bo, 0, out, sizeof out));
  err = max_error(out, expected, ROWS);
  EXPECT(err < 1e-5, "%s: row kernel max error %g", id, err);
  printf("%s: builder row kernel ok (max error %.3g)\n", id, err);
  /* A scalar of the wrong dtype. */
  args[1] = kiln_arg_f64(1.5);
  EXPECT_ERROR(kiln_program_launch(program, args, 3), KILN_CODE_INVALID_ARGUMENT, "");
  kiln_buffer_free(bx);
  kiln_buffer_free(bo);
  kiln_program_free(program);
}

/* y = tanh(x) (op code 14, the ABI 1.1 math ops) on a device that claims
 * it, against libm, near 0 and at large magnitudes. */
static void run_tanh(kiln_device_t* device, const char* id) {
  enum { TANH = 14, M = 512 };
  static float x[M], y[M];
  static double expected[M];
  kiln_builder_t* b = NULL;
  kiln_kernel_t* kernel = NULL;
  kiln_program_t* program = NULL;
  kiln_buffer_t *bx = NULL, *by = NULL;
  kiln_value_t px, py, n, i, v, t;
  kiln_launch_arg_t args[2];
  size_t k;
  double err;
  if (!kiln_device_supports_unary(device, TANH, KILN_DTYPE_F32)) {
    printf("%s: tanh skipped: the device does not claim it (the ABI 1.1 math ops)\n", id);
    return;
  }
  CHECK(kiln_builder_new(&b));
  CHECK(kiln_builder_param(b, KILN_PARAM_GLOBAL, KILN_DTYPE_F32, M, &px));
  CHECK(kiln_builder_param(b, KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, M, &py));
  CHECK(kiln_builder_const_i64(b, KILN_DTYPE_I64, M, &n));
  CHECK(kiln_builder_index(b, 0, n, &i));
  CHECK(kiln_builder_load(b, px, i, &v));
  CHECK(kiln_builder_unary(b, TANH, v, &t));
  CHECK(kiln_builder_store(b, py, i, t));
  CHECK(kiln_builder_finish(b, &kernel));
  CHECK(kiln_program_compile(device, kernel, NULL, &program));
  fill_random(x, M, -8.0f, 8.0f);
  for (k = 0; k < 64; ++k) x[k] = random_float(-1e-3f, 1e-3f) + 1e-6f;
  for (k = 0; k < M; ++k) expected[k] = tanh((double)x[k]);
  upload(device, x, M, &bx);
  CHECK(kiln_buffer_alloc(device, sizeof y, &by));
  args[0] = kiln_arg_buffer(bx);
  args[1] = kiln_arg_buffer(by);
  CHECK(kiln_program_launch(program, args, 2));
  CHECK(kiln_buffer_read(by, 0, y, sizeof y));
  err = 0;
  for (k = 0; k < M; ++k) { /* relative everywhere, near 0 included */
    const double e = fabs((double)y[k] - expected[k]) / fabs(expected[k]);
    if (!(e <= err)) err = e;
  }
  EXPECT(err < 1e-5, "%s: tanh max relative error %g", id, err);
  printf("%s: tanh ok (max relative error %.3g)\n", id, err);
  kiln_buffer_free(bx);
  kiln_buffer_free(by);
  kiln_program_free(program);
  kiln_kernel_free(kernel);
  kiln_builder_free(b);
}

/* [any thread]: several threads compile and launch one kernel on one
 * device handle at once, each with its own buffers and inputs. */
enum { THREADS = 4 };
struct thread_job {
  kiln_device_t* device;
  const kiln_kernel_t* kernel;
  float scale;
  double error;
  int failed;
};

static void* thread_main(void* arg) {
  struct thread_job* job = (struct thread_job*)arg;
  float a[N], b[N], y[N];
  kiln_program_t* program = NULL;
  kiln_buffer_t *ba = NULL, *bb = NULL, *by = NULL;
  kiln_launch_arg_t args[3];
  kiln_status_t* s;
  size_t i;
  for (i = 0; i < N; ++i) {
    a[i] = job->scale * (float)((int)(i % 97) - 48) / 64.0f + 0.01f;
    b[i] = job->scale;
  }
  s = kiln_program_compile(job->device, job->kernel, NULL, &program);
  if (s == NULL) s = kiln_buffer_alloc(job->device, sizeof a, &ba);
  if (s == NULL) s = kiln_buffer_alloc(job->device, sizeof b, &bb);
  if (s == NULL) s = kiln_buffer_alloc(job->device, sizeof y, &by);
  if (s == NULL) s = kiln_buffer_write(ba, 0, a, sizeof a);
  if (s == NULL) s = kiln_buffer_write(bb, 0, b, sizeof b);
  args[0] = kiln_arg_buffer(ba);
  args[1] = kiln_arg_buffer(bb);
  args[2] = kiln_arg_buffer(by);
  if (s == NULL) s = kiln_program_launch(program, args, 3);
  if (s == NULL) s = kiln_buffer_read(by, 0, y, sizeof y);
  if (s != NULL) {
    fprintf(stderr, "thread: %s\n", kiln_status_message(s));
    kiln_status_free(s);
    job->failed = 1;
  } else {
    for (i = 0; i < N; ++i) {
      const double e = exp((double)a[i]) * b[i] + sqrt(fabs((double)a[i]));
      const double err = fabs(y[i] - e) / (fabs(e) > 1 ? fabs(e) : 1);
      if (!(err <= job->error)) job->error = err;
    }
  }
  kiln_buffer_free(ba);
  kiln_buffer_free(bb);
  kiln_buffer_free(by);
  kiln_program_free(program);
  return NULL;
}

static void test_threads(const kiln_runtime_t* runtime, const kiln_kernel_t* kernel, const char* id) {
  struct thread_job jobs[THREADS];
  pthread_t threads[THREADS];
  kiln_device_t* device = NULL;
  int t;
  CHECK(kiln_device_open(runtime, id, &device));
  for (t = 0; t < THREADS; ++t) {
    jobs[t].device = device;
    jobs[t].kernel = kernel;
    jobs[t].scale = 0.5f + 0.25f * (float)t;
    jobs[t].error = 0;
    jobs[t].failed = 0;
    EXPECT(pthread_create(&threads[t], NULL, thread_main, &jobs[t]) == 0, "pthread_create");
  }
  for (t = 0; t < THREADS; ++t) {
    pthread_join(threads[t], NULL);
    EXPECT(!jobs[t].failed && jobs[t].error < 1e-5, "%s: thread %d: failed %d, max error %g", id, t, jobs[t].failed,
           jobs[t].error);
  }
  printf("%s: %d threads compiled and launched at once: ok\n", id, THREADS);
  kiln_device_free(device);
}

/* Host memory: the buffer's bytes are the caller's to use directly. */
static void test_host_memory(const kiln_runtime_t* runtime, const kiln_kernel_t* kernel) {
  kiln_device_t* device = NULL;
  kiln_buffer_t* buffer = NULL;
  kiln_program_t* program = NULL;
  float back[4] = {0, 0, 0, 0};
  float* p;
  const char *language = NULL, *text = NULL;
  CHECK(kiln_device_open(runtime, "c:0", &device));
  CHECK(kiln_buffer_alloc(device, sizeof back, &buffer));
  p = (float*)kiln_buffer_host_pointer(buffer);
  EXPECT(p != NULL && ((uintptr_t)p % 64) == 0, "host pointer %p", (void*)p);
  if (p != NULL) {
    p[0] = 1.25f;
    p[3] = -3.5f;
    CHECK(kiln_buffer_read(buffer, 0, back, sizeof back));
    EXPECT(back[0] == 1.25f && back[3] == -3.5f, "read %g %g", back[0], back[3]);
  }
  EXPECT(kiln_buffer_host_pointer(NULL) == NULL && kiln_buffer_size(NULL) == 0, "accessors of NULL");
  /* The generated source. */
  CHECK(kiln_program_compile(device, kernel, NULL, &program));
  CHECK(kiln_program_source(program, &language, &text));
  EXPECT(strcmp(language, "c") == 0 && strlen(text) > 0, "language %s", language);
  EXPECT(strcmp(kiln_program_sequence(program), "") == 0 && !kiln_program_from_database(program) &&
             kiln_program_tuned_ns(program) == 0,
         "a heuristic program is untuned");
  kiln_program_free(program);
  kiln_buffer_free(buffer);
  kiln_device_free(device);
}

/* ---------------------------------------------------------------- tuning -- */

static void test_tuning(const kiln_runtime_t* runtime, const kiln_kernel_t* kernel, const char* work_dir) {
  kiln_device_t* device = NULL;
  kiln_program_t *tuned = NULL, *again = NULL, *from_db = NULL, *frozen = NULL;
  kiln_tuning_db_t *db = NULL, *copy = NULL;
  kiln_tune_options_t options;
  kiln_compile_options_t compile;
  kiln_tuning_entry_t entry;
  char path[1024];
  char* json = NULL;
  size_t count = 0, imported = 0, copied = 0, i;
  int found = 0;

  CHECK(kiln_device_open(runtime, "c:0", &device));
  memset(&options, 0, sizeof options);
  options.struct_size = KILN_TUNE_OPTIONS_T_SIZE;
  options.budget_s = 20;
  options.seed = 7;
  options.force = 1;
  options.kernel_name = "capi elementwise";
  CHECK(kiln_kernel_tune(device, kernel, &options, &tuned));
  EXPECT(!kiln_program_from_database(tuned) && kiln_program_tuned_ns(tuned) > 0, "a fresh tuning: from db %d, %llu ns",
         kiln_program_from_database(tuned), (unsigned long long)kiln_program_tuned_ns(tuned));
  printf("c:0: tuned: '%s' at %llu ns\n", kiln_program_sequence(tuned), (unsigned long long)kiln_program_tuned_ns(tuned));
  /* Again, not forced: the database answers, nothing is launched. */
  options.force = 0;
  CHECK(kiln_kernel_tune(device, kernel, &options, &again));
  EXPECT(kiln_program_from_database(again), "the second tuning came from the database");
  EXPECT(strcmp(kiln_program_sequence(again), kiln_program_sequence(tuned)) == 0, "sequences '%s' and '%s'",
         kiln_program_sequence(again), kiln_program_sequence(tuned));
  /* compile TUNED replays the entry. */
  memset(&compile, 0, sizeof compile);
  compile.struct_size = KILN_COMPILE_OPTIONS_T_SIZE;
  compile.mode = KILN_COMPILE_TUNED;
  CHECK(kiln_program_compile(device, kernel, &compile, &from_db));
  EXPECT(kiln_program_from_database(from_db) && strcmp(kiln_program_sequence(from_db), kiln_program_sequence(tuned)) == 0,
         "compile TUNED: from db %d, '%s'", kiln_program_from_database(from_db), kiln_program_sequence(from_db));
  {
    kiln_buffer_t* buffers[3] = {NULL, NULL, NULL};
    launch_elementwise(device, "c:0 (tuned)", from_db, buffers);
    for (i = 0; i < 3; ++i) kiln_buffer_free(buffers[i]);
  }
  /* FROZEN compiles the kernel as given: the same results, untuned. */
  compile.mode = KILN_COMPILE_FROZEN;
  CHECK(kiln_program_compile(device, kernel, &compile, &frozen));
  EXPECT(!kiln_program_from_database(frozen) && strcmp(kiln_program_sequence(frozen), "") == 0, "frozen is untuned");
  {
    kiln_buffer_t* buffers[3] = {NULL, NULL, NULL};
    launch_elementwise(device, "c:0 (frozen)", frozen, buffers);
    for (i = 0; i < 3; ++i) kiln_buffer_free(buffers[i]);
  }
  kiln_program_free(frozen);
  compile.mode = 9;
  EXPECT_ERROR(kiln_program_compile(device, kernel, &compile, &again), KILN_CODE_INVALID_ARGUMENT, "mode 9");
  options.budget_s = NAN;
  EXPECT_ERROR(kiln_kernel_tune(device, kernel, &options, &again), KILN_CODE_INVALID_ARGUMENT, "budget_s");

  /* The database: list, export, import into another file. */
  CHECK(kiln_tuning_db_open(runtime, NULL, &db));
  EXPECT(strstr(kiln_tuning_db_path(db), "capi-tuning.sqlite") != NULL, "db %s", kiln_tuning_db_path(db));
  CHECK(kiln_tuning_db_list(db, &count));
  EXPECT(count >= 1, "%zu entries", count);
  for (i = 0; i < count; ++i) {
    memset(&entry, 0, sizeof entry);
    entry.struct_size = KILN_TUNING_ENTRY_T_SIZE;
    CHECK(kiln_tuning_db_entry(db, i, &entry));
    if (strcmp(entry.kernel_name, "capi elementwise") == 0 && strcmp(entry.device_id, "c:0") == 0) {
      found = 1;
      EXPECT(strcmp(entry.sequence, kiln_program_sequence(tuned)) == 0 && entry.best_ns > 0 && entry.baseline_ns > 0 &&
                 entry.candidates_measured >= 1 && strlen(entry.kernel_hash) > 0 && entry.id > 0,
             "entry %lld: '%s' %llu ns", (long long)entry.id, entry.sequence, (unsigned long long)entry.best_ns);
    }
  }
  EXPECT(found, "the tuning is listed");
  EXPECT_ERROR(kiln_tuning_db_entry(db, count, &entry), KILN_CODE_INVALID_ARGUMENT, "index");
  CHECK(kiln_tuning_db_export(db, &json));
  EXPECT(strstr(json, "\"kiln_tuning_db\"") != NULL && strstr(json, "capi elementwise") != NULL, "export: %.200s", json);
  snprintf(path, sizeof path, "%s/capi-imported.sqlite", work_dir);
  remove(path);
  CHECK(kiln_tuning_db_open(NULL, path, &copy));
  CHECK(kiln_tuning_db_import(copy, json, strlen(json), &imported));
  EXPECT(imported == count, "imported %zu of %zu", imported, count);
  CHECK(kiln_tuning_db_list(copy, &copied));
  EXPECT(copied == count, "%zu entries after the import", copied);
  {
    const char* wrong_shape = "{\"kiln_tuning_db\": 1, \"entries\": [{\"id\": \"x\"}]}";
    EXPECT_ERROR(kiln_tuning_db_import(copy, wrong_shape, strlen(wrong_shape), NULL), KILN_CODE_INVALID_ARGUMENT,
                 "<import text>");
  }
  EXPECT_ERROR(kiln_tuning_db_import(copy, "{nope", 5, NULL), KILN_CODE_IO, "<import text>");
  EXPECT_ERROR(kiln_tuning_db_open(NULL, NULL, &copy), KILN_CODE_INVALID_ARGUMENT, "runtime");
  kiln_string_free(json);
  kiln_tuning_db_free(copy);
  kiln_tuning_db_free(db);
  kiln_tuning_db_free(NULL);
  kiln_program_free(tuned);
  kiln_program_free(again);
  kiln_program_free(from_db);
  kiln_device_free(device);
}

int main(int argc, char** argv) {
  const char* work_dir = argc > 1 ? argv[1] : ".";
  kiln_runtime_t* runtime;
  kiln_kernel_t *elementwise, *rows;
  size_t count = 0, i;
  int devices_run = 0;

  test_version_and_status();
  test_runtime_errors();
  runtime = open_runtime(work_dir);
  test_plugins(runtime);
  test_device_list(runtime);
  test_text_errors();
  test_mangled_text();
  test_builder_errors();
  elementwise = elementwise_kernel();
  rows = row_kernel();

  /* Every device that compiles: c:0 and dummy:0 always, the rest where present. */
  CHECK(kiln_runtime_device_count(runtime, &count));
  for (i = 0; i < count; ++i) {
    kiln_device_info_t info;
    kiln_device_t* device = NULL;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK(kiln_runtime_device_info(runtime, i, &info));
    if (!(info.flags & KILN_DEVICE_INFO_CAN_COMPILE)) {
      printf("%s: skipped: it does not compile kernels\n", info.id);
      continue;
    }
    CHECK(kiln_device_open(runtime, info.id, &device));
    run_elementwise(device, info.id, elementwise);
    run_rows(device, info.id, rows);
    run_tanh(device, info.id);
    kiln_device_free(device);
    ++devices_run;
  }
  EXPECT(devices_run >= 2, "%d devices run", devices_run);
  test_threads(runtime, elementwise, "c:0");
  test_threads(runtime, elementwise, "dummy:0");
  test_host_memory(runtime, elementwise);
  test_tuning(runtime, elementwise, work_dir);

  kiln_kernel_free(elementwise);
  kiln_kernel_free(rows);
  kiln_runtime_free(runtime);
  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all C API checks passed\n");
  return 0;
}
