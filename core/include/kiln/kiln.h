/*
 * kiln/kiln.h - the kiln C API: embed kiln from C and from any language with
 * a C foreign-function interface (Python's ctypes, Rust, Go, ...).
 *
 * C99, no C++. Link libkiln (find_package(kiln): kiln::kiln, or -lkiln).
 * Everything the C++ API's host side does for a kernel is here: open a
 * runtime, list plugins and devices, move memory, build or parse a kernel,
 * compile it (heuristic or tuned), launch and time it, tune it, and manage
 * the tuning database. docs/embedding.md shows one kernel from C, C++ and
 * Python side by side.
 *
 * ----------------------------------------------------------------- model --
 *
 *   kiln_runtime_open(NULL, &rt)            config search order (docs/config.md)
 *   kiln_device_open(rt, "c:0", &dev)
 *   kiln_kernel_from_text(text, len, &k)    or kiln_builder_* ... kiln_builder_finish
 *   kiln_program_compile(dev, k, NULL, &p)  NULL options: heuristic
 *   kiln_buffer_alloc(dev, bytes, &buf); kiln_buffer_write(buf, 0, data, bytes)
 *   kiln_program_launch(p, args, n_args)    synchronous
 *   kiln_buffer_read(buf, 0, out, bytes)
 *   kiln_*_free(...)                         any order (see "lifetime")
 *
 * ---------------------------------------------------------------- errors --
 *
 * Every function that can fail returns kiln_status_t*: NULL on success,
 * otherwise a status object that the caller owns and releases with
 * kiln_status_free. It carries a code (kiln_code_t: the plugin ABI's
 * kiln_status values, then the core's own) and a message written for a
 * user ("c:0: compile: op 12: ..."; for IR text "3:14: expected ..."); IR
 * text errors also carry the line and column, errors about one op its
 * index. Out-fields are written only on success. Nothing throws across this
 * API and nothing aborts: every function catches everything at the boundary
 * (an allocation failure becomes KILN_CODE_OUT_OF_MEMORY, anything
 * unexpected KILN_CODE_INTERNAL). The functions that cannot fail (accessors
 * of a handle the caller holds, the status accessors, the version, the
 * *_free functions) return their value directly and say so.
 * KILN_CODE_INVALID_ARGUMENT always means the caller broke a rule written
 * here (a NULL handle or out-pointer, a size that does not match, an index
 * out of range); every function may also return OUT_OF_MEMORY and INTERNAL.
 *
 * ------------------------------------------------------------- ownership --
 *
 * Every handle a function creates (an out-parameter `kiln_X_t** out`) is
 * the caller's and is released with kiln_X_free, which accepts NULL.
 * Handles returned as `const kiln_X_t*` (plugin entries) are borrowed from
 * their parent and live as long as it does. Strings returned as
 * `const char*` are borrowed, NUL-terminated UTF-8, and live as long as the
 * handle they came from; strings returned as `char**` are the caller's and
 * are released with kiln_string_free.
 *
 * Lifetime: a device stays open while anything made from it (buffers,
 * programs) lives, even after its runtime is freed; handles may be freed
 * in any order. A kernel is independent of every device.
 *
 * ------------------------------------------------------------- threading --
 *
 * Written on each function as one of:
 *   [any thread]   may be called concurrently, also on one handle;
 *   [per handle]   calls on one handle are made by one thread at a time
 *                  (different handles may be used concurrently).
 * Devices serialise their queue (copies, launches) themselves; compiles run
 * concurrently.
 *
 * ------------------------------------------------------------ versioning --
 *
 * KILN_C_API_MAJOR changes only with an incompatible change; minors only
 * append functions, enum values and fields at the end of structs that start
 * with struct_size (the caller sets it to the size it knows, as in
 * kiln/plugin.h). Op codes are those of kiln/kernel_ir.h.
 */
#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kernel_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef KILN_STATIC_ASSERT /* as kiln/plugin.h defines it */
#if defined(__cplusplus)
#define KILN_STATIC_ASSERT(cond, name) static_assert(cond, #name)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define KILN_STATIC_ASSERT(cond, name) _Static_assert(cond, #name)
#else
#define KILN_STATIC_ASSERT(cond, name) typedef char kiln_static_assert_##name[(cond) ? 1 : -1]
#endif
#endif

#define KILN_C_API_MAJOR 1u
#define KILN_C_API_MINOR 0u

#if defined(_WIN32)
#define KILN_API __declspec(dllimport)
#else
#define KILN_API __attribute__((visibility("default")))
#endif

/* ================================================================ status == */

/* What kind of failure a status is. 1..9 are kiln/plugin.h's kiln_status
 * values (as a plugin reported them, or the same kind found by the core);
 * 100.. are the core's own (kiln::ErrorCode in kiln/result.hpp). */
typedef enum kiln_code_t {
  KILN_CODE_OK = 0,
  KILN_CODE_INVALID_ARGUMENT = 1,
  KILN_CODE_UNSUPPORTED = 2,     /* a valid request the device cannot serve (an op, a dtype) */
  KILN_CODE_NOT_IMPLEMENTED = 3,
  KILN_CODE_OUT_OF_MEMORY = 4,
  KILN_CODE_COMPILE_FAILED = 5,
  KILN_CODE_LAUNCH_FAILED = 6,
  KILN_CODE_UNAVAILABLE = 7,     /* no driver, no device */
  KILN_CODE_DEVICE_LOST = 8,
  KILN_CODE_INTERNAL = 9,        /* a bug in kiln or a plugin */
  KILN_CODE_CONFIG = 100,        /* config unreadable, malformed or of the wrong shape */
  KILN_CODE_PARSE = 101,         /* IR text does not parse: see kiln_status_line/column */
  KILN_CODE_VERIFY = 102,        /* a kernel breaks an IR rule: see kiln_status_op */
  KILN_CODE_PLUGIN_LOAD = 103,
  KILN_CODE_NOT_FOUND = 104,     /* no such device, plugin, file, database entry */
  KILN_CODE_IO = 105,            /* file system or database failure */
  KILN_CODE_MISMATCH = 106       /* results differ from the reference */
} kiln_code_t;

typedef struct kiln_status_t kiln_status_t;

/* The status accessors accept NULL (success): code OK, message "", line,
 * column 0, op -1. They cannot fail.                          [any thread] */
KILN_API kiln_code_t kiln_status_code(const kiln_status_t* status);
/* The whole message, context first ("c:0: compile: op 12: ..."). Valid
 * until kiln_status_free. */
KILN_API const char* kiln_status_message(const kiln_status_t* status);
/* "invalid argument", "parse error", ...: the code's name. Static. */
KILN_API const char* kiln_code_name(kiln_code_t code);
/* For IR text errors: the 1-based line and column (0 when unknown). */
KILN_API uint32_t kiln_status_line(const kiln_status_t* status);
KILN_API uint32_t kiln_status_column(const kiln_status_t* status);
/* For errors about one op of a kernel: its index, else -1. */
KILN_API int64_t kiln_status_op(const kiln_status_t* status);
/* Releases a status; NULL is a no-op.                         [any thread] */
KILN_API void kiln_status_free(kiln_status_t* status);

/* Releases a string this API returned through a char** out-parameter;
 * NULL is a no-op.                                             [any thread] */
KILN_API void kiln_string_free(char* text);

/* =============================================================== version == */

/* libkiln's version, "0.1.0". Static; cannot fail.            [any thread] */
KILN_API const char* kiln_version(void);
/* The C API version the library implements (KILN_C_API_MAJOR/MINOR of its
 * build). Either pointer may be NULL. Cannot fail.             [any thread] */
KILN_API void kiln_c_api_version(uint32_t* major, uint32_t* minor);

/* =============================================================== runtime == */

typedef struct kiln_runtime_t kiln_runtime_t;

/* Loads the config and every plugin it enables. `config_path` NULL: the
 * search order ($KILN_CONFIG, $XDG_CONFIG_HOME/kiln/config.json,
 * ~/.config/kiln/config.json, else the built-in default). A plugin that
 * fails to load is skipped (kiln_plugin_reason says why), not an error.
 * Ownership: *out is the caller's (kiln_runtime_free).
 * Errors: CONFIG (the file is malformed: the message names file:line:col
 * and the key), NOT_FOUND (config_path or $KILN_CONFIG names no file),
 * PLUGIN_LOAD (a plugin the config marks required did not load).
 *                                                              [any thread] */
KILN_API kiln_status_t* kiln_runtime_open(const char* config_path, kiln_runtime_t** out);

/* As kiln_runtime_open, from config JSON text (`len` bytes; need not be
 * NUL-terminated): the built-in default overlaid with it, as a file would
 * be. Relative paths in it resolve against the current directory; messages
 * name it "<config text>". Errors: CONFIG, PLUGIN_LOAD.         [any thread] */
KILN_API kiln_status_t* kiln_runtime_open_json(const char* json, size_t len, kiln_runtime_t** out);

/* Releases the runtime. Devices, buffers and programs made from it stay
 * usable. NULL is a no-op. Cannot fail.                        [per handle] */
KILN_API void kiln_runtime_free(kiln_runtime_t* runtime);

/* The config file the runtime read, or "built-in". Borrowed. Cannot fail
 * for a valid runtime (NULL for NULL).                          [any thread] */
KILN_API const char* kiln_runtime_config_source(const kiln_runtime_t* runtime);

/* Config and loader warnings (unknown keys, duplicate plugin names...).
 * *count on success; kiln_runtime_warning's *text is borrowed.
 * Errors: INVALID_ARGUMENT (NULL, index >= count).             [any thread] */
KILN_API kiln_status_t* kiln_runtime_warning_count(const kiln_runtime_t* runtime, size_t* count);
KILN_API kiln_status_t* kiln_runtime_warning(const kiln_runtime_t* runtime, size_t index, const char** text);

/* =============================================================== plugins == */

typedef struct kiln_plugin_t kiln_plugin_t; /* borrowed from its runtime */

typedef enum kiln_plugin_state_t {
  KILN_PLUGIN_LOADED = 0,
  KILN_PLUGIN_SKIPPED = 1,  /* failed to load: kiln_plugin_reason */
  KILN_PLUGIN_DISABLED = 2  /* the config disables it */
} kiln_plugin_state_t;

/* One entry per plugin the config names, in the config's order. *plugin is
 * borrowed from the runtime. Errors: INVALID_ARGUMENT (NULL, index >=
 * count).                                                      [any thread] */
KILN_API kiln_status_t* kiln_runtime_plugin_count(const kiln_runtime_t* runtime, size_t* count);
KILN_API kiln_status_t* kiln_runtime_plugin(const kiln_runtime_t* runtime, size_t index, const kiln_plugin_t** plugin);

/* Accessors of an entry; they cannot fail (NULL / 0 for a NULL entry).
 * Strings are borrowed from the runtime.                        [any thread] */
KILN_API const char* kiln_plugin_name(const kiln_plugin_t* plugin);     /* "c", "cuda", ... */
KILN_API kiln_plugin_state_t kiln_plugin_state(const kiln_plugin_t* plugin);
KILN_API const char* kiln_plugin_state_name(kiln_plugin_state_t state); /* "loaded", "skipped", "disabled" */
KILN_API const char* kiln_plugin_reason(const kiln_plugin_t* plugin);   /* why skipped or disabled; "" when loaded */
KILN_API const char* kiln_plugin_version(const kiln_plugin_t* plugin);  /* "" when never queried */
KILN_API const char* kiln_plugin_library(const kiln_plugin_t* plugin);  /* the shared object's path */
KILN_API uint32_t kiln_plugin_device_count(const kiln_plugin_t* plugin); /* exposed devices (0 unless loaded) */

/* =============================================================== devices == */

typedef struct kiln_device_t kiln_device_t;

/* What kiln knows of a device (a subset of kiln/plugin.h's
 * kiln_device_info, with the device's id). Out-struct: the caller sets
 * struct_size (KILN_DEVICE_INFO_T_SIZE, or an older minor's size); kiln
 * writes only the fields that fit. Strings are borrowed from the runtime
 * or device the info came from. */
typedef struct kiln_device_info_t {
  size_t struct_size;
  const char* id;             /* "c:0": "<plugin>:<index>" */
  const char* plugin;         /* "c" */
  const char* name;
  const char* vendor;
  const char* driver_version;
  uint32_t kind;              /* kiln_device_kind (plugin.h): 1 cpu, 2 gpu, 3 accelerator, 4 virtual */
  uint32_t flags;             /* KILN_DEVICE_* (plugin.h): CAN_COMPILE, HOST_MEMORY, ... */
  uint64_t memory_bytes;
  uint64_t local_memory_bytes;
  uint32_t compute_units;
  uint32_t warp_size;
  uint32_t max_local_threads;
  uint32_t reserved;          /* zero */
  double peak_gflops;
  double memory_bandwidth_gbps;
} kiln_device_info_t;
#define KILN_DEVICE_INFO_T_SIZE (offsetof(kiln_device_info_t, memory_bandwidth_gbps) + sizeof(double))

/* kiln_device_info_t.flags bits, as plugin.h's KILN_DEVICE_* (repeated so
 * that this header stands alone). */
#define KILN_DEVICE_INFO_CAN_COMPILE (1u << 0)
#define KILN_DEVICE_INFO_HOST_MEMORY (1u << 1) /* buffers are host memory: kiln_buffer_host_pointer */

/* Every exposed device of every loaded plugin, without opening any.
 * Errors: INVALID_ARGUMENT (NULL, index >= count, info->struct_size too
 * small for `id`).                                             [any thread] */
KILN_API kiln_status_t* kiln_runtime_device_count(const kiln_runtime_t* runtime, size_t* count);
KILN_API kiln_status_t* kiln_runtime_device_info(const kiln_runtime_t* runtime, size_t index,
                                                 kiln_device_info_t* info);

/* Opens a device by id ("c:0", or "c" for the plugin's first device; NULL
 * or "": the default device, the first of the highest-priority loaded
 * plugin that can compile). Opening one id twice gives two handles on one
 * device. Ownership: *out is the caller's (kiln_device_free); it keeps the
 * runtime's config (tuning database, autotune settings).
 * Errors: NOT_FOUND (no such plugin or device), UNAVAILABLE (its plugin was
 * skipped or disabled: the message gives the reason).          [any thread] */
KILN_API kiln_status_t* kiln_device_open(const kiln_runtime_t* runtime, const char* id, kiln_device_t** out);
/* NULL is a no-op. Cannot fail.                                [per handle] */
KILN_API void kiln_device_free(kiln_device_t* device);
/* Errors: INVALID_ARGUMENT (NULL, struct_size too small).      [any thread] */
KILN_API kiln_status_t* kiln_device_get_info(const kiln_device_t* device, kiln_device_info_t* info);
/* Whether the device runs UNARY op `op` (kiln_unary_op) / BINARY op `op`
 * (kiln_binary_op) on `dtype` (kiln_dtype), as it claims. Cannot fail
 * (0 for NULL or an unknown code).                             [any thread] */
KILN_API int kiln_device_supports_unary(const kiln_device_t* device, uint32_t op, uint32_t dtype);
KILN_API int kiln_device_supports_binary(const kiln_device_t* device, uint32_t op, uint32_t dtype);

/* =============================================================== buffers == */

typedef struct kiln_buffer_t kiln_buffer_t;

/* `bytes` (> 0) bytes of device memory, contents undefined, 64-byte
 * aligned. Ownership: *out is the caller's (kiln_buffer_free).
 * Errors: INVALID_ARGUMENT (bytes == 0), OUT_OF_MEMORY (device memory; the
 * message gives the size).                                     [any thread] */
KILN_API kiln_status_t* kiln_buffer_alloc(kiln_device_t* device, uint64_t bytes, kiln_buffer_t** out);
/* Waits for work that may use it, then frees. NULL is a no-op. Cannot
 * fail (a plugin's failure goes to its log).                   [per handle] */
KILN_API void kiln_buffer_free(kiln_buffer_t* buffer);

/* Synchronous copies of `bytes` bytes at `offset`: complete when they
 * return. `data` is the caller's, read (write) or written (read) only
 * during the call. Errors: INVALID_ARGUMENT (offset + bytes beyond the
 * buffer: the message gives both sizes; data NULL), DEVICE_LOST.
 *                                                              [per handle] */
KILN_API kiln_status_t* kiln_buffer_write(kiln_buffer_t* buffer, uint64_t offset, const void* data, uint64_t bytes);
KILN_API kiln_status_t* kiln_buffer_read(const kiln_buffer_t* buffer, uint64_t offset, void* data, uint64_t bytes);

/* The buffer's size in bytes. Cannot fail (0 for NULL).         [any thread] */
KILN_API uint64_t kiln_buffer_size(const kiln_buffer_t* buffer);
/* For a buffer of a host-memory device (KILN_DEVICE_INFO_HOST_MEMORY): its
 * bytes themselves, valid until kiln_buffer_free: read and write them
 * directly, no copy (only while no launch using it runs). NULL on other
 * devices. Cannot fail.                                        [any thread] */
KILN_API void* kiln_buffer_host_pointer(const kiln_buffer_t* buffer);

/* =============================================================== kernels == */

typedef struct kiln_kernel_t kiln_kernel_t;

/* Parses the IR text form (docs/ir.md; `len` bytes, need not be
 * NUL-terminated) and verifies the kernel. Ownership: *out is the
 * caller's (kiln_kernel_free).
 * Errors: PARSE (the message starts "LINE:COL:", also in
 * kiln_status_line/column), VERIFY (a rule broken: kiln_status_op gives the
 * op, kiln_status_line its line).                              [any thread] */
KILN_API kiln_status_t* kiln_kernel_from_text(const char* text, size_t len, kiln_kernel_t** out);
/* NULL is a no-op. Cannot fail.                                [per handle] */
KILN_API void kiln_kernel_free(kiln_kernel_t* kernel);
/* The text form (ir::print); parses back to the same kernel. *text is the
 * caller's (kiln_string_free). Errors: INVALID_ARGUMENT (NULL). [any thread] */
KILN_API kiln_status_t* kiln_kernel_print(const kiln_kernel_t* kernel, char** text);
/* Number of ops. Cannot fail (0 for NULL).                      [any thread] */
KILN_API size_t kiln_kernel_op_count(const kiln_kernel_t* kernel);

/* One launch argument of a kernel (a PARAM), by slot. */
typedef struct kiln_param_info_t {
  size_t struct_size;
  uint32_t kind;      /* kiln_param_kind: GLOBAL (read), GLOBAL_MUT (written), VARIABLE (a scalar) */
  uint32_t dtype;     /* kiln_dtype of the elements / of the scalar */
  uint64_t elements;  /* buffer elements the kernel declares; 0 unknown (and for scalars) */
} kiln_param_info_t;
#define KILN_PARAM_INFO_T_SIZE (offsetof(kiln_param_info_t, elements) + sizeof(uint64_t))

/* Launch arguments: their number, and the param of each slot.
 * Errors: INVALID_ARGUMENT (NULL, slot >= count, struct_size too small).
 *                                                              [any thread] */
KILN_API kiln_status_t* kiln_kernel_param_count(const kiln_kernel_t* kernel, size_t* count);
KILN_API kiln_status_t* kiln_kernel_param(const kiln_kernel_t* kernel, size_t slot, kiln_param_info_t* info);

/* =============================================================== builder == */

/* Builds a kernel op by op; each value is the index of the op that defines
 * it (kiln_value_t), exactly as the IR numbers values. Result types follow
 * from the operands as kernel_ir.h says. Each call checks its operands
 * (INVALID_ARGUMENT naming the call and the operand: an id not yet defined,
 * or a marker with no value); the kernel as a whole is verified by
 * kiln_builder_finish (VERIFY naming the op). A builder is used by one
 * thread at a time: every builder function is [per handle]. */
typedef struct kiln_builder_t kiln_builder_t;
typedef uint32_t kiln_value_t;

/* Ownership: *out is the caller's (kiln_builder_free).          [any thread] */
KILN_API kiln_status_t* kiln_builder_new(kiln_builder_t** out);
/* NULL is a no-op. Cannot fail. */
KILN_API void kiln_builder_free(kiln_builder_t* builder);

/* A launch argument at the next free slot (slots count from 0 in call
 * order). kind: kiln_param_kind; elements: buffer length (> 0 for GLOBAL and
 * GLOBAL_MUT, so launches can be checked; 0 for VARIABLE). */
KILN_API kiln_status_t* kiln_builder_param(kiln_builder_t* builder, uint32_t kind, uint32_t dtype,
                                           uint64_t elements, kiln_value_t* out);
/* Kernel-internal memory (kiln_scope LOCAL or REGISTER) of `elements`
 * elements; a REGISTER storage of 1 element is a reduction's accumulator.
 * Must come before any loop (STORAGE appears outside every LOOP). */
KILN_API kiln_status_t* kiln_builder_storage(kiln_builder_t* builder, uint32_t scope, uint32_t dtype,
                                             uint64_t elements, kiln_value_t* out);
/* Constants of `dtype`, converted as CAST converts (floats round to
 * nearest even; integers truncate toward zero and wrap). */
KILN_API kiln_status_t* kiln_builder_const_f64(kiln_builder_t* builder, uint32_t dtype, double value,
                                               kiln_value_t* out);
KILN_API kiln_status_t* kiln_builder_const_i64(kiln_builder_t* builder, uint32_t dtype, int64_t value,
                                               kiln_value_t* out);
/* The work-group coordinate on grid axis `axis` (0..2) of `length` groups
 * (an i64 value: a constant or an expression of VARIABLE params). One per
 * axis, before any loop. */
KILN_API kiln_status_t* kiln_builder_index(kiln_builder_t* builder, uint32_t axis, kiln_value_t length,
                                           kiln_value_t* out);
/* A loop of `count` (i64) iterations; *out is its counter, 0..count-1,
 * visible until kiln_builder_end_loop(builder, *out). Values defined inside
 * are visible only until then: a reduction keeps its running value in a
 * REGISTER storage (load, combine, store) and loads it after the loop. */
KILN_API kiln_status_t* kiln_builder_loop(kiln_builder_t* builder, kiln_value_t count, kiln_value_t* out);
/* Errors: INVALID_ARGUMENT (`loop` is not the innermost open loop). */
KILN_API kiln_status_t* kiln_builder_end_loop(kiln_builder_t* builder, kiln_value_t loop);
/* An IF on a bool value; *out names it for kiln_builder_end_if. */
KILN_API kiln_status_t* kiln_builder_if(kiln_builder_t* builder, kiln_value_t condition, kiln_value_t* out);
KILN_API kiln_status_t* kiln_builder_end_if(kiln_builder_t* builder, kiln_value_t if_op);
/* Element `index` (i64) of `memory` (a GLOBAL/GLOBAL_MUT param or a storage). */
KILN_API kiln_status_t* kiln_builder_load(kiln_builder_t* builder, kiln_value_t memory, kiln_value_t index,
                                          kiln_value_t* out);
/* memory[index] = value (memory: a GLOBAL_MUT param or a storage). */
KILN_API kiln_status_t* kiln_builder_store(kiln_builder_t* builder, kiln_value_t memory, kiln_value_t index,
                                           kiln_value_t value);
/* op: kiln_unary_op (kernel_ir.h; codes a later minor appends, such as
 * tanh = 14, are accepted here and checked by finish). */
KILN_API kiln_status_t* kiln_builder_unary(kiln_builder_t* builder, uint32_t op, kiln_value_t x, kiln_value_t* out);
/* op: kiln_binary_op; x and y of one type (comparisons give bool). */
KILN_API kiln_status_t* kiln_builder_binary(kiln_builder_t* builder, uint32_t op, kiln_value_t x, kiln_value_t y,
                                            kiln_value_t* out);
KILN_API kiln_status_t* kiln_builder_cast(kiln_builder_t* builder, uint32_t dtype, kiln_value_t x, kiln_value_t* out);
/* condition ? if_true : if_false */
KILN_API kiln_status_t* kiln_builder_select(kiln_builder_t* builder, kiln_value_t condition, kiln_value_t if_true,
                                            kiln_value_t if_false, kiln_value_t* out);
/* a * b + c */
KILN_API kiln_status_t* kiln_builder_mad(kiln_builder_t* builder, kiln_value_t a, kiln_value_t b, kiln_value_t c,
                                         kiln_value_t* out);
/* Closes what is still open, verifies, and hands the kernel over; the
 * builder starts over empty. *out is the caller's (kiln_kernel_free).
 * Errors: VERIFY (the message names the rule and shows the op;
 * kiln_status_op is its index). */
KILN_API kiln_status_t* kiln_builder_finish(kiln_builder_t* builder, kiln_kernel_t** out);

/* ============================================================== programs == */

typedef struct kiln_program_t kiln_program_t;

typedef enum kiln_compile_mode_t {
  /* The always-on passes for the device, no tuned optimizations. */
  KILN_COMPILE_HEURISTIC = 0,
  /* The tuning database's entry for this kernel and device when it has a
   * valid one (launches nothing), else as HEURISTIC; never tunes (that is
   * kiln_kernel_tune). kiln_program_from_database says which it was. */
  KILN_COMPILE_TUNED = 1,
  /* The kernel exactly as given: verified, no pass runs (for kernels that
   * are already lowered, and for tests). */
  KILN_COMPILE_FROZEN = 2
} kiln_compile_mode_t;

typedef struct kiln_compile_options_t {
  size_t struct_size;
  uint32_t mode;              /* kiln_compile_mode_t */
  uint32_t reserved;          /* zero */
  const char* tuning_db;      /* TUNED: database file; NULL: the config's tuning_db */
} kiln_compile_options_t;
#define KILN_COMPILE_OPTIONS_T_SIZE (offsetof(kiln_compile_options_t, tuning_db) + sizeof(const char*))

/* Compiles `kernel` for `device`. `options` NULL: HEURISTIC. The kernel is
 * only read during the call. Ownership: *out is the caller's
 * (kiln_program_free); it keeps the device open.
 * Errors: VERIFY, UNSUPPORTED (an op or dtype the device lacks:
 * kiln_status_op names the op of `kernel`), COMPILE_FAILED (the backend
 * compiler's log), INVALID_ARGUMENT (an unknown mode), IO (the tuning
 * database cannot be opened).                                  [any thread] */
KILN_API kiln_status_t* kiln_program_compile(const kiln_device_t* device, const kiln_kernel_t* kernel,
                                             const kiln_compile_options_t* options, kiln_program_t** out);
/* NULL is a no-op. Cannot fail.                                [per handle] */
KILN_API void kiln_program_free(kiln_program_t* program);

/* The tuned sequence applied ("" for an untuned program), whether it came
 * from the tuning database, and its measured median time (0 when never
 * measured). Borrowed / cannot fail.                            [any thread] */
KILN_API const char* kiln_program_sequence(const kiln_program_t* program);
KILN_API int kiln_program_from_database(const kiln_program_t* program);
KILN_API uint64_t kiln_program_tuned_ns(const kiln_program_t* program);
/* The generated source for debugging: *language ("c", "opencl-c", ...) and
 * *text are borrowed from the program. Errors: NOT_IMPLEMENTED (the plugin
 * keeps none).                                                 [any thread] */
KILN_API kiln_status_t* kiln_program_source(const kiln_program_t* program, const char** language,
                                            const char** text);

/* One launch argument, bound to the param whose slot is its array index:
 * a buffer (GLOBAL, GLOBAL_MUT params: `buffer` set) or a scalar (VARIABLE
 * params: `buffer` NULL, `dtype` = the param's, `bits` = the value's bit
 * pattern as a CONST of that dtype holds it; kiln_arg_f32 and friends). */
typedef struct kiln_launch_arg_t {
  kiln_buffer_t* buffer;
  uint32_t dtype;
  uint32_t reserved; /* zero */
  uint64_t bits;
} kiln_launch_arg_t;

/* Runs the program once on `args` and waits for it. Buffers must belong
 * to the program's device (or, on a host-memory device, to any host-memory
 * device). Errors: INVALID_ARGUMENT (argument count, kind, dtype, or a
 * buffer smaller than the param declares: the message names the slot and
 * both sizes; a written buffer bound twice), LAUNCH_FAILED, DEVICE_LOST.
 *                                                              [any thread] */
KILN_API kiln_status_t* kiln_program_launch(const kiln_program_t* program, const kiln_launch_arg_t* args,
                                            size_t n_args);

typedef struct kiln_timing_t {
  size_t struct_size;
  uint64_t min_ns;
  uint64_t median_ns;
  uint32_t runs;    /* timed runs made */
  uint32_t timer;   /* kiln_timer_kind (plugin.h): 0 host clock, 1 device timer, 2 model (dummy) */
} kiln_timing_t;
#define KILN_TIMING_T_SIZE (offsetof(kiln_timing_t, timer) + sizeof(uint32_t))

/* Runs the program `warmups` + `repeats` (>= 1) times synchronously and
 * times the kernel alone (the device's timer where it has one). Inputs
 * written in place are not restored between runs. Errors: as launch, and
 * INVALID_ARGUMENT for repeats == 0 or more than 10000.         [any thread] */
KILN_API kiln_status_t* kiln_program_launch_timed(const kiln_program_t* program, const kiln_launch_arg_t* args,
                                                  size_t n_args, uint32_t warmups, uint32_t repeats,
                                                  kiln_timing_t* timing);

/* Scalar launch arguments. */
static inline kiln_launch_arg_t kiln_arg_buffer(kiln_buffer_t* buffer) {
  kiln_launch_arg_t a = {buffer, 0u, 0u, 0u};
  return a;
}
static inline kiln_launch_arg_t kiln_arg_i64(int64_t value) {
  kiln_launch_arg_t a = {NULL, (uint32_t)KILN_DTYPE_I64, 0u, (uint64_t)value};
  return a;
}
static inline kiln_launch_arg_t kiln_arg_i32(int32_t value) {
  kiln_launch_arg_t a = {NULL, (uint32_t)KILN_DTYPE_I32, 0u, (uint64_t)(uint32_t)value};
  return a;
}
static inline kiln_launch_arg_t kiln_arg_f32(float value) {
  union { float f; uint32_t u; } v;
  kiln_launch_arg_t a = {NULL, (uint32_t)KILN_DTYPE_F32, 0u, 0u};
  v.f = value;
  a.bits = v.u;
  return a;
}
static inline kiln_launch_arg_t kiln_arg_f64(double value) {
  union { double f; uint64_t u; } v;
  kiln_launch_arg_t a = {NULL, (uint32_t)KILN_DTYPE_F64, 0u, 0u};
  v.f = value;
  a.bits = v.u;
  return a;
}

/* ================================================================ tuning == */

typedef struct kiln_tune_options_t {
  size_t struct_size;
  double budget_s;             /* wall clock for the search; <= 0: the config's autotune.budget_s */
  uint64_t seed;               /* of the search's random choices */
  uint32_t force;              /* nonzero: tune even when the database has the kernel */
  uint32_t reserved;           /* zero */
  const double* scalars;       /* values of the kernel's VARIABLE params, in slot order */
  size_t n_scalars;
  const char* kernel_name;     /* for people, stored with the entry; NULL: "" */
  const char* tuning_db;       /* database file; NULL: the config's tuning_db */
} kiln_tune_options_t;
#define KILN_TUNE_OPTIONS_T_SIZE (offsetof(kiln_tune_options_t, tuning_db) + sizeof(const char*))

/* Tunes `kernel` on `device` (a tournament search measured by timed launches on
 * random inputs, every candidate checked against the untuned kernel:
 * docs/autotune.md) within the budget, stores the winner in the tuning
 * database, and returns it compiled. When the database already has a
 * valid entry (and force is 0) nothing is launched and that entry is used
 * (kiln_program_from_database is then 1). `options` NULL: the config's
 * settings. Buffer params must declare their element counts.
 * Ownership: *out is the caller's (kiln_program_free).
 * Errors: INVALID_ARGUMENT (a buffer param without an element count, too
 * few or too many scalars), IO (the database), and compile's.  [any thread] */
KILN_API kiln_status_t* kiln_kernel_tune(const kiln_device_t* device, const kiln_kernel_t* kernel,
                                         const kiln_tune_options_t* options, kiln_program_t** out);

/* ======================================================= tuning database == */

typedef struct kiln_tuning_db_t kiln_tuning_db_t;

/* Opens (creating it when missing) the tuning database `path`; NULL: the
 * runtime's config's tuning_db, else the default under $XDG_CACHE_HOME.
 * `runtime` may be NULL when `path` is given. Ownership: *out is the
 * caller's (kiln_tuning_db_free). A database handle is [per handle]; open
 * one per thread (several processes may share the file).
 * Errors: IO (not a database, a folder that cannot be created: the message
 * names the file).                                             [any thread] */
KILN_API kiln_status_t* kiln_tuning_db_open(const kiln_runtime_t* runtime, const char* path,
                                            kiln_tuning_db_t** out);
/* NULL is a no-op. Cannot fail. */
KILN_API void kiln_tuning_db_free(kiln_tuning_db_t* db);
/* The file. Borrowed; cannot fail (NULL for NULL). */
KILN_API const char* kiln_tuning_db_path(const kiln_tuning_db_t* db);

/* One entry as listed (kiln cache list). Strings are borrowed from the
 * database handle until its next kiln_tuning_db_list or its free. */
typedef struct kiln_tuning_entry_t {
  size_t struct_size;
  int64_t id;                 /* row id */
  const char* kernel_hash;
  const char* kernel_name;
  const char* device_id;      /* "c:0" */
  const char* device_name;
  const char* sequence;       /* the winner; "" = the untuned kernel won */
  uint64_t best_ns;
  uint64_t baseline_ns;       /* the untuned kernel */
  uint32_t candidates_measured;
  uint32_t reserved;
} kiln_tuning_entry_t;
#define KILN_TUNING_ENTRY_T_SIZE (offsetof(kiln_tuning_entry_t, reserved) + sizeof(uint32_t))

/* Reads every entry (oldest first) into the handle; *count is their number.
 * Errors: IO.                                                  [per handle] */
KILN_API kiln_status_t* kiln_tuning_db_list(kiln_tuning_db_t* db, size_t* count);
/* Entry `index` of the last list. Errors: INVALID_ARGUMENT (index >= the
 * count listed, struct_size too small).                        [per handle] */
KILN_API kiln_status_t* kiln_tuning_db_entry(const kiln_tuning_db_t* db, size_t index, kiln_tuning_entry_t* entry);
/* Every entry with its candidates as JSON ({"kiln_tuning_db": 1,
 * "entries": [...]}, as `kiln cache export`). *json is the caller's
 * (kiln_string_free). Errors: IO.                              [per handle] */
KILN_API kiln_status_t* kiln_tuning_db_export(kiln_tuning_db_t* db, char** json);
/* Stores the entries of an export (`len` bytes), replacing entries of equal
 * keys; *imported (may be NULL) is how many. All or nothing on a malformed
 * text. Errors: IO (malformed JSON), INVALID_ARGUMENT (a wrong shape: the
 * message names the entry and field).                          [per handle] */
KILN_API kiln_status_t* kiln_tuning_db_import(kiln_tuning_db_t* db, const char* json, size_t len,
                                              size_t* imported);

/* ============================================================= size pins == */

/* Layouts are part of the API (bindings such as python/kiln/_lib.py mirror
 * them): pinned for LP64, as kiln/plugin.h pins its own. */
#if UINTPTR_MAX == UINT64_MAX
KILN_STATIC_ASSERT(KILN_DEVICE_INFO_T_SIZE == 104, kiln_device_info_t_size);
KILN_STATIC_ASSERT(KILN_PARAM_INFO_T_SIZE == 24, kiln_param_info_t_size);
KILN_STATIC_ASSERT(KILN_COMPILE_OPTIONS_T_SIZE == 24, kiln_compile_options_t_size);
KILN_STATIC_ASSERT(sizeof(kiln_launch_arg_t) == 24, kiln_launch_arg_t_size);
KILN_STATIC_ASSERT(KILN_TIMING_T_SIZE == 32, kiln_timing_t_size);
KILN_STATIC_ASSERT(KILN_TUNE_OPTIONS_T_SIZE == 64, kiln_tune_options_t_size);
KILN_STATIC_ASSERT(KILN_TUNING_ENTRY_T_SIZE == 80, kiln_tuning_entry_t_size);
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_H */
