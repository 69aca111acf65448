/*
 * kiln/plugin.h - the kiln backend plugin ABI, version 1.1.
 *
 * C99, no C++. This header (with kiln/kernel_ir.h, which it includes) is all a
 * backend plugin needs: build a shared object that exports kiln_plugin_query,
 * list it in config.json (or drop a manifest next to it), and libkiln finds it
 * at start-up. docs/plugin-guide.md walks through writing one.
 *
 * ------------------------------------------------------------------ model --
 *
 *   host (libkiln)                                 plugin (shared object)
 *   dlopen(library) ---------------------------->  (no code runs but static init)
 *   kiln_plugin_query(1, host_minor) ----------->  returns &static table or NULL
 *   table->init(options JSON, host table) ------>  may enumerate devices
 *   device_count / device_info / device_open --->
 *   buffer_alloc / copy_* / compile / launch --->
 *   table->shutdown() at process exit ---------->
 *   (the library is never dlclosed)
 *
 * ------------------------------------------------------------- versioning --
 *
 * - ABI major must match exactly (KILN_ABI_MAJOR; it starts at 1, never 0).
 *   Minor versions only append: new functions at the end of kiln_plugin_api,
 *   new fields at the end of argument structs.
 * - Every table and every argument struct starts with `size_t struct_size`.
 *   The side that fills a struct for the other sets struct_size to the size
 *   it knows (the KILN_*_STRUCT_SIZE macros below). The receiving side reads
 *   only fields that lie entirely within min(struct_size, its own size) and
 *   treats the rest as zero. For out-fields the caller zero-fills the struct,
 *   sets struct_size, and the callee writes only fields that fit.
 * - A NULL function pointer in kiln_plugin_api means "not implemented"; the
 *   host checks before every call.
 * - Array element types (kiln_op, kiln_arg) are frozen within a major
 *   version; they carry reserved fields instead of struct_size.
 * - A struct embedded by value in another is frozen (kiln_launch_args_1_0);
 *   growing data is reached through a pointer to a struct of its own
 *   struct_size (kiln_timed_launch_args.launch_args).
 * - Optional features that need no new function travel in extension chains
 *   (kiln_extension, as Vulkan's pNext): the plugin table, the host table and
 *   the device info each end with one. A reader skips types it does not know.
 * - Compatibility, as the host applies it: a plugin built for minor P loads
 *   on a host of minor H >= P (the host reads only what minor P had, and
 *   treats newer fields as zero). A plugin whose minor is newer than the
 *   host's (P > H) is refused, naming both versions: the host cannot know
 *   what the plugin expects of fields it has never heard of. A plugin that
 *   can serve older hosts checks host_max_minor in kiln_plugin_query and
 *   returns a table that claims that minor.
 *
 * ----------------------------------------------------------------- errors --
 *
 * Every fallible function returns kiln_error*: NULL on success, otherwise an
 * error object the plugin made with kiln_host_api.error_create. Ownership of
 * the error passes to the host, which reads and destroys it. Plugins never
 * throw across this boundary and never abort the process: a C++ plugin
 * catches every exception in each exported function. kiln_status says what
 * kind of failure it is; the message says what exactly (for compile: which
 * op, by index).
 *
 * ------------------------------------------------------------- threading --
 *
 * Written on each function as one of:
 *   [any thread]      may be called concurrently from several threads.
 *   [per device]      calls for one kiln_device are made by one thread at a
 *                     time (the host serialises them); calls for different
 *                     devices may run concurrently.
 *   [exclusive]       no other call into the plugin runs concurrently.
 *
 * ------------------------------------------------------------- execution --
 *
 * Each opened device has one in-order queue: copies and launches submitted
 * to one device run in submission order. An out event (kiln_event*) tracks
 * one submitted operation; a plugin may return NULL instead when the
 * operation has already completed (synchronous devices always do).
 */
#ifndef KILN_PLUGIN_H
#define KILN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kernel_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_ABI_MAJOR 1u
#define KILN_ABI_MINOR 1u

/* The size of a struct up to and including `field`: the struct_size of the
 * minor version whose last field is `field`. */
#define KILN_STRUCT_SIZE(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))

/* Symbol visibility for the one exported entry point. */
#if defined(_WIN32)
#define KILN_PLUGIN_EXPORT __declspec(dllexport)
#else
#define KILN_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------ status -- */

typedef enum kiln_status {
  KILN_STATUS_OK = 0,
  KILN_STATUS_INVALID_ARGUMENT = 1, /* the caller broke a documented rule */
  KILN_STATUS_UNSUPPORTED = 2,      /* valid request this plugin/device cannot serve
                                       (an op, dtype, vector width...): expected, not a crash */
  KILN_STATUS_NOT_IMPLEMENTED = 3,  /* function present, feature not in this version */
  KILN_STATUS_OUT_OF_MEMORY = 4,
  KILN_STATUS_COMPILE_FAILED = 5,   /* the backend compiler rejected generated code */
  KILN_STATUS_LAUNCH_FAILED = 6,
  KILN_STATUS_UNAVAILABLE = 7,      /* no driver, no device, library missing */
  KILN_STATUS_DEVICE_LOST = 8,
  KILN_STATUS_INTERNAL = 9,         /* a bug in the plugin */
  KILN_STATUS_TIMEOUT = 10          /* ABI 1.1: a run passed kiln_timed_launch_args.timeout_ns */
} kiln_status;

typedef enum kiln_log_level {
  KILN_LOG_DEBUG = 0,
  KILN_LOG_INFO = 1,
  KILN_LOG_WARNING = 2,
  KILN_LOG_ERROR = 3
} kiln_log_level;

/* --------------------------------------------------------- opaque handles -- */

typedef struct kiln_error kiln_error;     /* host-owned error object */
typedef struct kiln_device kiln_device;   /* plugin-owned; from device_open */
typedef struct kiln_buffer kiln_buffer;   /* plugin-owned; from buffer_alloc */
typedef struct kiln_program kiln_program; /* plugin-owned; from compile */
typedef struct kiln_event kiln_event;     /* plugin-owned; from copies and launch */

/* ============================================================ extensions == */

/* One link of an extension chain. A concrete extension starts with this
 * header (struct_size = its own size; type = one of the values below, or a
 * vendor's value >= KILN_EXTENSION_VENDOR_FIRST) and points at the next link
 * or NULL. A reader walks the chain, skips types it does not know, and never
 * writes to it. Chains in the plugin table and in device info are owned by
 * the plugin and live until shutdown; the host table's chain is owned by the
 * host and lives until shutdown returns. */
typedef struct kiln_extension {
  size_t struct_size;
  uint32_t type;
  uint32_t reserved; /* zero */
  const struct kiln_extension* next;
} kiln_extension;

#define KILN_EXTENSION_VENDOR_FIRST 0x10000u

/* ============================================================ host table == */

/* Handed to init; valid (and constant) until shutdown returns. */
typedef struct kiln_host_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* host_version; /* e.g. "0.1.0"; static */

  /* Passed back as the first argument of log; identifies this plugin. */
  void* context;

  /* Makes an error object for a plugin to return. `message` need not be
   * NUL-terminated and is copied (len bytes). Never returns NULL (on host
   * allocation failure it returns a static out-of-memory error).
   * [any thread] */
  kiln_error* (*error_create)(kiln_status status, const char* message, size_t len);

  /* Writes a log line attributed to this plugin. `message` is copied.
   * [any thread] */
  void (*log)(void* context, kiln_log_level level, const char* message, size_t len);

  /* ---- ABI 1.1 ---- */
  /* The host's extension chain, or NULL. */
  const kiln_extension* extensions;
} kiln_host_api;

#define KILN_HOST_API_STRUCT_SIZE_1_0 KILN_STRUCT_SIZE(kiln_host_api, log)
#define KILN_HOST_API_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_host_api, extensions)

/* ============================================================ device info == */

typedef enum kiln_device_kind {
  KILN_DEVICE_KIND_UNKNOWN = 0,
  KILN_DEVICE_KIND_CPU = 1,
  KILN_DEVICE_KIND_GPU = 2,
  KILN_DEVICE_KIND_ACCELERATOR = 3,
  KILN_DEVICE_KIND_VIRTUAL = 4 /* simulated, e.g. the dummy plugin */
} kiln_device_kind;

/* kiln_device_info.flags */
#define KILN_DEVICE_CAN_COMPILE (1u << 0)   /* compile accepts kernels (else NOT_IMPLEMENTED) */
#define KILN_DEVICE_HOST_MEMORY (1u << 1)   /* buffers are plain host memory: see kiln_arg */
#define KILN_DEVICE_NATIVE_EXP2 (1u << 2)   /* exp2/log2 are native; exp/ln cost more */
#define KILN_DEVICE_DEVICE_TIMER (1u << 3)  /* launch_timed uses a device-side timer */
#define KILN_DEVICE_FIXED_FUNCTION (1u << 4) /* compiles only kernels it recognises (e.g. BLAS) */
/* ABI 1.1: a timed launch with KILN_TIMED_ISOLATE that passes timeout_ns is
 * stopped and the device stays usable (the C plugin kills its worker). Hosts
 * may then set tight limits (the autotuner derives them from its budget);
 * without the flag a timeout may lose the device (see timeout_ns), so hosts
 * keep limits generous. Older plugins leave it clear: the safe reading. */
#define KILN_DEVICE_SURVIVES_TIMEOUT (1u << 5)

/* Room for op codes in the 1.1 capability arrays: every kiln_op_kind,
 * kiln_unary_op and kiln_binary_op value (present and appended in later
 * minors) is below this. */
#define KILN_CAP_SLOTS 64u
/* Bits in kiln_device_info.features (KILN_FEATURE_* values index them). */
#define KILN_FEATURE_WORDS 4u
#define KILN_FEATURE_WORD(f) ((uint32_t)(f) / 64u)
#define KILN_FEATURE_MASK(f) (UINT64_C(1) << ((uint32_t)(f) % 64u))
/* A dtype's bit in a capability mask (unary_dtypes[], binary_dtypes[],
 * op_kind_dtypes[]). */
#define KILN_DTYPE_BIT(dt) (UINT32_C(1) << (uint32_t)(dt))

/* Everything the core's optimizer and autotuner know of a device. Strings
 * are inline, NUL-terminated and may be truncated. Unknown numbers are 0.
 *
 * Capabilities. ABI 1.0 had one word per dtype (dtype_ops, KILN_CAP_* bits),
 * which is full. ABI 1.1 states them per op, with room to grow:
 *   op_kind_dtypes[k]  bit d set: ops of kind k (kiln_op_kind) run with
 *                      result dtype d (for LOAD/STORE/PARAM/STORAGE: memory
 *                      of dtype d). Kinds appended after 1.0 (matrix
 *                      multiply-accumulate, subgroup reductions) are sent to
 *                      a device only when it sets them here.
 *   unary_dtypes[u]    bit d set: UNARY op u runs on dtype d.
 *   binary_dtypes[b]   bit d set: BINARY op b runs on operands of dtype d.
 *                      SUBGROUP_REDUCE (kernel_ir.h): a device claims the
 *                      dtypes it reduces, and runs every width up to its
 *                      warp_size, which it then guarantees: the threads of
 *                      every work-group it launches form subgroups of
 *                      warp_size consecutive linear local ids (a device
 *                      whose subgroup size may vary per kernel, e.g. an
 *                      OpenCL device without a required size, does not
 *                      claim the op). warp_size is the one width number;
 *                      narrower widths stay inside an aligned subgroup.
 *   features           KILN_FEATURE_* bits (kernel_ir.h defines bits 0-7:
 *                      the MMA shapes, the CPU's bf16 units, the tf32
 *                      WGMMA's A from registers, vector accesses (or
 *                      loads alone) at any element index; later minors
 *                      and the
 *                      extension chain define more). A bit a plugin leaves
 *                      clear is a capability the host never uses there.
 * A 1.1 plugin fills these and dtype_ops alike (the SDK's
 * sdk::set_capabilities does both from one description). For a plugin of
 * minor 0 the host derives the arrays from dtype_ops: every 1.0 op kind on
 * every dtype whose word is nonzero, no later kind, no features. */
typedef struct kiln_device_info {
  size_t struct_size;
  char name[128];
  char vendor[64];
  char driver_version[64];
  char pci_bus_id[32];          /* "0000:65:00.0", empty if none */
  uint32_t kind;                /* kiln_device_kind */
  uint32_t flags;               /* KILN_DEVICE_* */
  uint64_t memory_bytes;        /* total device memory */
  uint64_t local_memory_bytes;  /* LOCAL storage per work-group */
  uint64_t register_bytes;      /* REGISTER storage budget per thread */
  uint64_t max_grid_dims[3];    /* max work-groups per axis */
  uint32_t max_local_dims[3];   /* max threads per group, per axis */
  uint32_t max_local_threads;   /* max threads per group (product of axes) */
  uint32_t compute_units;       /* cores / SMs / compute units */
  uint32_t warp_size;           /* SIMD width threads run in lock-step; 1 on CPUs; the
                                   widest SUBGROUP_REDUCE (op_kind_dtypes, above) */
  uint32_t clock_mhz;
  uint32_t vector_widths;       /* bit n set: LOAD/STORE/ops with lanes == n supported
                                   (bit 1 is always set) */
  uint32_t dtype_ops[16];       /* [kiln_dtype]: KILN_CAP_UNARY/BINARY bits supported;
                                   0 means the dtype is unsupported */
  uint64_t cache_bytes[3];      /* L1 (per unit), L2, L3 */
  double peak_gflops;           /* f32, all units; for the cost model */
  double memory_bandwidth_gbps; /* for the cost model */

  /* ---- ABI 1.1 ---- */
  uint32_t op_kind_dtypes[KILN_CAP_SLOTS]; /* [kiln_op_kind]: KILN_DTYPE_BIT mask */
  uint32_t unary_dtypes[KILN_CAP_SLOTS];   /* [kiln_unary_op]: KILN_DTYPE_BIT mask */
  uint32_t binary_dtypes[KILN_CAP_SLOTS];  /* [kiln_binary_op]: KILN_DTYPE_BIT mask */
  uint64_t features[KILN_FEATURE_WORDS];   /* KILN_FEATURE_* bits */
  const kiln_extension* extensions;        /* plugin-owned chain, or NULL */
  /* The most REGISTER storage one thread may declare (bytes; private or
   * per-thread local memory, spills included): a hard limit, unlike the
   * register_bytes budget the optimizer plans with. A kernel past it is
   * refused before compile, naming both. 0: unknown; the host then applies
   * 64 KiB (docs/plugin-guide.md, "Devices"). */
  uint64_t max_register_bytes;
} kiln_device_info;

#define KILN_DEVICE_INFO_STRUCT_SIZE_1_0 KILN_STRUCT_SIZE(kiln_device_info, memory_bandwidth_gbps)
#define KILN_DEVICE_INFO_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_device_info, max_register_bytes)

/* ======================================================= argument structs == */

typedef struct kiln_init_args {
  size_t struct_size;
  const kiln_host_api* host; /* valid until shutdown returns */
  const char* options_json;  /* the config's "options" object as JSON text ("{}" if none);
                                valid for the call only */
  size_t options_json_len;
} kiln_init_args;
#define KILN_INIT_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_init_args, options_json_len)

typedef struct kiln_device_count_args {
  size_t struct_size;
  uint32_t count; /* out */
} kiln_device_count_args;
#define KILN_DEVICE_COUNT_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_device_count_args, count)

typedef struct kiln_device_info_args {
  size_t struct_size;
  uint32_t index;          /* < device_count */
  kiln_device_info* info;  /* out; caller-owned, zero-filled, struct_size set */
} kiln_device_info_args;
#define KILN_DEVICE_INFO_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_device_info_args, info)

typedef struct kiln_device_open_args {
  size_t struct_size;
  uint32_t index;        /* < device_count */
  kiln_device* device;   /* out */
} kiln_device_open_args;
#define KILN_DEVICE_OPEN_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_device_open_args, device)

typedef struct kiln_buffer_alloc_args {
  size_t struct_size;
  kiln_device* device;
  uint64_t bytes;        /* > 0 */
  kiln_buffer* buffer;   /* out */
} kiln_buffer_alloc_args;
#define KILN_BUFFER_ALLOC_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_buffer_alloc_args, buffer)

typedef struct kiln_buffer_host_pointer_args {
  size_t struct_size;
  kiln_device* device;
  kiln_buffer* buffer;
  void* pointer;         /* out: start of the buffer's bytes, 64-byte aligned */
} kiln_buffer_host_pointer_args;
#define KILN_BUFFER_HOST_POINTER_ARGS_STRUCT_SIZE \
  KILN_STRUCT_SIZE(kiln_buffer_host_pointer_args, pointer)

typedef struct kiln_copy_args {
  size_t struct_size;
  kiln_device* device;
  kiln_buffer* device_buffer;    /* to_device: destination; to_host: source;
                                    device_to_device: destination */
  uint64_t device_offset;        /* bytes into device_buffer */
  kiln_buffer* src_buffer;       /* device_to_device only: source */
  uint64_t src_offset;           /* device_to_device only */
  void* host;                    /* to_device: source (read); to_host: destination */
  uint64_t bytes;
  kiln_event* event;             /* out; NULL when already complete */
} kiln_copy_args;
#define KILN_COPY_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_copy_args, event)

typedef struct kiln_memory_info_args {
  size_t struct_size;
  kiln_device* device;
  uint64_t free_bytes;   /* out */
  uint64_t total_bytes;  /* out */
} kiln_memory_info_args;
#define KILN_MEMORY_INFO_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_memory_info_args, total_bytes)

typedef struct kiln_compile_args {
  size_t struct_size;
  kiln_device* device;
  const kiln_kernel* kernel; /* verified by the host; valid for the call only */
  kiln_program* program;     /* out */
  int64_t failed_op;         /* out: on UNSUPPORTED/COMPILE_FAILED, the op index
                                at fault, or -1 when no single op is */
} kiln_compile_args;
#define KILN_COMPILE_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_compile_args, failed_op)

typedef struct kiln_program_source_args {
  size_t struct_size;
  kiln_program* program;
  const char* language;  /* out: "c", "cuda", "opencl-c", "glsl", "ptx", "blas-call", ... */
  const char* text;      /* out: owned by the program; valid until program_release */
  size_t text_len;       /* out */
} kiln_program_source_args;
#define KILN_PROGRAM_SOURCE_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_program_source_args, text_len)

typedef enum kiln_arg_kind {
  KILN_ARG_INVALID = 0,
  KILN_ARG_BUFFER = 1, /* binds a GLOBAL or GLOBAL_MUT param */
  KILN_ARG_SCALAR = 2  /* binds a VARIABLE param */
} kiln_arg_kind;

/* One launch argument, bound to the PARAM whose slot is its array index.
 * Frozen layout (40 bytes). For devices with KILN_DEVICE_HOST_MEMORY the host
 * always sets host_pointer (it may come from another host-memory plugin's
 * buffer, in which case `buffer` is NULL): such plugins use host_pointer.
 * Other devices use `buffer`, which was allocated on the launching device. */
typedef struct kiln_arg {
  uint32_t kind;        /* kiln_arg_kind */
  uint32_t dtype;       /* SCALAR: kiln_dtype of the value (= the param's) */
  kiln_buffer* buffer;  /* BUFFER */
  void* host_pointer;   /* BUFFER on HOST_MEMORY devices */
  uint64_t bytes;       /* BUFFER: size of the bound memory in bytes */
  uint64_t scalar_bits; /* SCALAR: value bits, as kiln_op.imm of a CONST */
} kiln_arg;

/* The arguments of one launch. Later minors may append fields; a struct
 * that needs them refers to this one by pointer. */
typedef struct kiln_launch_args {
  size_t struct_size;
  kiln_device* device;
  kiln_program* program;    /* compiled on this device */
  const kiln_arg* args;     /* valid for the call only */
  size_t n_args;            /* = number of PARAMs */
  uint64_t groups[3];       /* work-groups per axis, from the GROUP indices (>= 1) */
  uint32_t local[3];        /* threads per group per axis, from the LOCAL indices (>= 1) */
  kiln_event* event;        /* out (launch only); NULL when already complete */
} kiln_launch_args;
#define KILN_LAUNCH_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_launch_args, event)

/* kiln_launch_args exactly as ABI 1.0 laid it out, frozen: the form that
 * kiln_timed_launch_args embeds by value (so appending to kiln_launch_args
 * never moves the timed-launch fields after it). Same field names. */
typedef struct kiln_launch_args_1_0 {
  size_t struct_size;
  kiln_device* device;
  kiln_program* program;
  const kiln_arg* args;
  size_t n_args;
  uint64_t groups[3];
  uint32_t local[3];
  kiln_event* event;
} kiln_launch_args_1_0;

/* kiln_timed_launch_args.flags */
#define KILN_TIMED_FLUSH_CACHE (1u << 0) /* flush caches (e.g. L2) before each timed run */
/* The host would rather lose this launch than the process: the program may
 * be faulty (an autotuning candidate). A plugin that can run it where a
 * crash or a hang cannot take the host down (the C plugin: a worker
 * process) does so, and reports a crash or a timeout as LAUNCH_FAILED
 * naming the signal or the limit; buffers are then left as they were.
 * Plugins that cannot ignore the flag. (ABI 1.1: older plugins ignore it.) */
#define KILN_TIMED_ISOLATE (1u << 1)

typedef enum kiln_timer_kind {
  KILN_TIMER_HOST = 0,   /* steady clock around a synchronous run */
  KILN_TIMER_DEVICE = 1, /* device-side timestamps around the kernel alone */
  KILN_TIMER_MODEL = 2   /* simulated (dummy plugin) */
} kiln_timer_kind;

typedef struct kiln_timed_launch_args {
  size_t struct_size;
  kiln_launch_args_1_0 launch; /* the launch as 1.0 knew it; launch.event is unused.
                                  A 1.1 host sets it and launch_args alike. */
  uint32_t warmups;         /* untimed runs first */
  uint32_t repeats;         /* timed runs (>= 1) */
  uint32_t flags;           /* KILN_TIMED_* */
  uint64_t abort_ns;        /* if nonzero: after a timed run longer than this,
                               the plugin may stop early (aborted = 1) */
  uint64_t* samples_ns;     /* optional caller array of `repeats` entries, or NULL */
  uint64_t min_ns;          /* out */
  uint64_t median_ns;       /* out */
  uint32_t runs;            /* out: timed runs actually made */
  uint32_t aborted;         /* out */
  uint32_t timer;           /* out: kiln_timer_kind */

  /* ---- ABI 1.1 ---- */
  /* The whole launch (its own struct_size; may have fields `launch` lacks).
   * A 1.1 host always sets it; a plugin reads the launch from here when it
   * is non-NULL and from `launch` otherwise (the SDK's
   * sdk::read_timed_launch does). Valid for the call only. */
  const kiln_launch_args* launch_args;
  /* If nonzero: the longest one run (warm-up or timed) may take. The plugin
   * waits for each run with this deadline (polling its event or fence) and
   * past it returns KILN_STATUS_TIMEOUT naming the limit. The limit is the
   * kernel's: a driver that builds a kernel at its first launch (PoCL) may
   * count it from the run's start, bounding the wait for the start apart
   * (the OpenCL plugin: max(timeout_ns, 60 s)). What happens to
   * the run that passed it depends on what the API can cancel:
   *   - the C plugin's isolated launch (KILN_TIMED_ISOLATE) kills its worker
   *     process: the device stays usable, the buffers are left as they were;
   *   - OpenCL, Vulkan and CUDA cannot stop a kernel that is running (CUDA
   *     only by destroying the context, OpenCL and Vulkan not at all), so
   *     the kernel keeps the device: the plugin marks the device lost, and
   *     every later call on it fails with KILN_STATUS_DEVICE_LOST.
   * A plugin that runs in-process and cannot wait with a deadline (the C
   * plugin without KILN_TIMED_ISOLATE) ignores it. Plugins of minor 0, and
   * callers that set a smaller struct_size, read it as 0 (no limit). */
  uint64_t timeout_ns;
} kiln_timed_launch_args;
#define KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE_1_0 KILN_STRUCT_SIZE(kiln_timed_launch_args, timer)
#define KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_timed_launch_args, timeout_ns)

typedef struct kiln_cache_key_args {
  size_t struct_size;
  kiln_device* device;
  const char* key;   /* out: plugin version + compiler identity + flags; identifies
                        what compile produces for a given kernel. Owned by the
                        plugin, valid until shutdown. */
} kiln_cache_key_args;
#define KILN_CACHE_KEY_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_cache_key_args, key)

/* ---- ABI 1.1: the argument structs of the functions appended in 1.1 ---- */

typedef struct kiln_shutdown_args {
  size_t struct_size;
} kiln_shutdown_args;
#define KILN_SHUTDOWN_ARGS_STRUCT_SIZE sizeof(kiln_shutdown_args)

typedef struct kiln_device_close_args {
  size_t struct_size;
  kiln_device* device;
} kiln_device_close_args;
#define KILN_DEVICE_CLOSE_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_device_close_args, device)

typedef struct kiln_buffer_free_args {
  size_t struct_size;
  kiln_device* device;
  kiln_buffer* buffer;
} kiln_buffer_free_args;
#define KILN_BUFFER_FREE_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_buffer_free_args, buffer)

typedef struct kiln_event_query_args {
  size_t struct_size;
  kiln_event* event;
  uint32_t complete; /* out: 1 when the operation has finished (successfully or not) */
} kiln_event_query_args;
#define KILN_EVENT_QUERY_ARGS_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_event_query_args, complete)

/* ========================================================== plugin table == */

/* Each function below states:
 *   ownership  who owns what it receives and returns;
 *   threading  [any thread], [per device] or [exclusive] (see the top);
 *   errors     every status it may return. Any function may also return
 *              OUT_OF_MEMORY (host memory ran out) and INTERNAL (a plugin
 *              bug); INVALID_ARGUMENT always means the caller broke a rule
 *              written here (a NULL or foreign handle, a struct_size too
 *              small for the fields the call needs, an index out of range).
 * Every kiln_error* a function returns is owned by the host from then on. */
typedef struct kiln_plugin_api {
  size_t struct_size;     /* KILN_PLUGIN_API_STRUCT_SIZE of the plugin's minor */
  uint32_t abi_major;     /* KILN_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;
  const char* name;       /* "c", "cuda", ...: [a-z0-9_-]+, static */
  const char* version;    /* plugin's own version, e.g. "1.2.0", static */
  const char* description; /* one line, static */

  /* Initialises the plugin: parse options, load drivers, enumerate devices.
   * Called once, before anything else but query. On error the host skips the
   * plugin (keeping the message) and calls nothing else, not even shutdown.
   * Ownership: args->host stays valid until shutdown returns; options_json
   * only for the call.
   * Errors: INVALID_ARGUMENT (bad options: name the key), UNAVAILABLE (no
   * driver / no device: say which library or call failed and why).
   * A plugin that crashes, aborts or throws out of init takes the process
   * with it: the host cannot survive that in-process (docs/plugin-guide.md).
   *                                                           [exclusive] */
  kiln_error* (*init)(kiln_init_args* args);

  /* Releases everything. All devices, buffers, programs and events the host
   * still holds are invalid afterwards. Called at most once. Superseded by
   * shutdown2 where the plugin sets it (the host then calls only that).
   * Errors: none can be reported.                              [exclusive] */
  void (*shutdown)(void);

  /* Number of devices; constant after init. Errors: none beyond the
   * general ones.                                              [any thread] */
  kiln_error* (*device_count)(kiln_device_count_args* args);

  /* Fills args->info for device `index`. Touches no queue. Ownership: the
   * info struct is the caller's; strings are copied into it; its extension
   * chain is the plugin's. Errors: INVALID_ARGUMENT (index out of range,
   * info NULL).                                                 [any thread] */
  kiln_error* (*device_info)(kiln_device_info_args* args);

  /* Opens device `index` (contexts, queues). Opening an open device returns
   * the same handle. The handle is the plugin's, valid until device_close
   * or shutdown. Errors: INVALID_ARGUMENT (index), UNAVAILABLE (the driver
   * refused a context or queue), DEVICE_LOST.                  [any thread] */
  kiln_error* (*device_open)(kiln_device_open_args* args);

  /* Waits for the device's queue, then releases it. Buffers, programs and
   * events of the device must have been released first. Superseded by
   * device_close2 where the plugin sets it.
   * Errors: none can be reported.                              [per device] */
  void (*device_close)(kiln_device* device);

  /* Waits until all work submitted to the device has completed.
   * Errors: DEVICE_LOST, LAUNCH_FAILED (an asynchronous failure).  [per device] */
  kiln_error* (*device_synchronize)(kiln_device* device);

  /* Free and total device memory; 0 for a figure the plugin cannot tell
   * (free never above a known total). Errors: INVALID_ARGUMENT (device),
   * DEVICE_LOST.                                                [any thread] */
  kiln_error* (*memory_info)(kiln_memory_info_args* args);

  /* Allocates `bytes` of device memory (contents undefined), 64-byte aligned.
   * The buffer belongs to the device and to the plugin; the host frees it
   * with buffer_free(2). Errors: INVALID_ARGUMENT (bytes == 0, device),
   * OUT_OF_MEMORY (device memory: the message gives the size asked for).
   *                                                              [any thread] */
  kiln_error* (*buffer_alloc)(kiln_buffer_alloc_args* args);

  /* Frees a buffer. The host guarantees no submitted work still uses it
   * (it waits for the events first). NULL is a no-op. Superseded by
   * buffer_free2 where the plugin sets it.
   * Errors: none can be reported.                              [any thread] */
  void (*buffer_free)(kiln_device* device, kiln_buffer* buffer);

  /* HOST_MEMORY devices only (else NULL): the buffer's address, valid until
   * buffer_free. Errors: INVALID_ARGUMENT (device, buffer).     [any thread] */
  kiln_error* (*buffer_host_pointer)(kiln_buffer_host_pointer_args* args);

  /* Copies host -> device. `host` (the caller's) must stay valid and
   * unchanged until the returned event completes (or until the call returns
   * when it is NULL). The event is the plugin's until event_release.
   * Errors: INVALID_ARGUMENT (range outside the buffer, host NULL),
   * DEVICE_LOST.                                                [per device] */
  kiln_error* (*copy_to_device)(kiln_copy_args* args);

  /* Copies device -> host. `host` must stay valid until the event completes;
   * its contents are defined only then. Errors: as copy_to_device.
   *                                                              [per device] */
  kiln_error* (*copy_to_host)(kiln_copy_args* args);

  /* Copies between two buffers of the same device, or between two ranges of
   * one buffer that do not overlap. Errors: INVALID_ARGUMENT (either range,
   * ranges of one buffer that overlap, a buffer of another device),
   * DEVICE_LOST. (sdk::check_device_copy makes the range checks.)
   *                                                               [per device] */
  kiln_error* (*copy_device_to_device)(kiln_copy_args* args);

  /* Blocks until the event's operation completes. Returns the operation's
   * own error, if it failed (LAUNCH_FAILED, DEVICE_LOST, or the status the
   * operation would have returned synchronously). Does not release the
   * event.                                                      [any thread] */
  kiln_error* (*event_wait)(kiln_event* event);

  /* Releases an event (completed or not; the operation still runs). NULL is
   * a no-op. Errors: none can be reported.                      [any thread] */
  void (*event_release)(kiln_event* event);

  /* Compiles a kernel for the device. The kernel is only read during the
   * call; the program is the plugin's until program_release. Errors:
   * UNSUPPORTED (an op/dtype/width the device lacks: failed_op names it; the
   * autotuner skips such candidates), COMPILE_FAILED (message holds the
   * compiler log and where the generated source was kept), NOT_IMPLEMENTED
   * (plugin cannot compile yet), INVALID_ARGUMENT (device, kernel NULL).
   * Compile may run on several threads at once and alongside the device's
   * launches.                                                   [any thread] */
  kiln_error* (*compile)(kiln_compile_args* args);

  /* The generated source or assembly, for debugging. The text is the
   * program's. Errors: INVALID_ARGUMENT (program), NOT_IMPLEMENTED (the
   * plugin keeps no source).                                    [any thread] */
  kiln_error* (*program_source)(kiln_program_source_args* args);

  /* Releases a program. The host guarantees no submitted launch still uses
   * it. NULL is a no-op. Errors: none can be reported.          [any thread] */
  void (*program_release)(kiln_program* program);

  /* Enqueues one run of the program. Arguments are copied during the call
   * (buffers must stay allocated until the event completes). The host
   * checks that groups/local are within the device limits and that the
   * local sizes equal the kernel's LOCAL index lengths.
   * Errors: INVALID_ARGUMENT (argument kinds or sizes do not match the
   * params), LAUNCH_FAILED, DEVICE_LOST.                        [per device] */
  kiln_error* (*launch)(kiln_launch_args* args);

  /* Runs the program warmups + repeats times synchronously and reports the
   * time of the kernel alone (device timer where the device has one).
   * Inputs written in place are NOT restored between runs. samples_ns, if
   * set, is the caller's. Errors: as launch, INVALID_ARGUMENT for
   * repeats == 0, TIMEOUT (a run passed timeout_ns; see there what becomes
   * of the device), and DEVICE_LOST after such a timeout.        [per device] */
  kiln_error* (*launch_timed)(kiln_timed_launch_args* args);

  /* Identifies compile's output for caching: equal keys and equal kernels
   * give interchangeable programs. The key is the plugin's, valid until
   * shutdown. Errors: INVALID_ARGUMENT (device).                [any thread] */
  kiln_error* (*cache_key)(kiln_cache_key_args* args);

  /* ---- ABI 1.1: appended; any of them may be NULL (not implemented) ---- */

  /* The plugin's extension chain, or NULL (static, plugin-owned). */
  const kiln_extension* extensions;

  /* As shutdown, and says whether everything was released. Called at most
   * once, instead of shutdown. The plugin is unusable afterwards whatever
   * it returns. Errors: DEVICE_LOST or INTERNAL (a device could not be
   * drained or released: the message says which).              [exclusive] */
  kiln_error* (*shutdown2)(kiln_shutdown_args* args);

  /* As device_close, and reports failure: the handle is invalid afterwards
   * whatever it returns. Errors: INVALID_ARGUMENT (device), DEVICE_LOST and
   * LAUNCH_FAILED (queued work failed while draining).          [per device] */
  kiln_error* (*device_close2)(kiln_device_close_args* args);

  /* As buffer_free, and reports failure: the buffer is invalid afterwards
   * whatever it returns. Errors: INVALID_ARGUMENT (a buffer of another
   * device, or not a buffer), DEVICE_LOST.                       [any thread] */
  kiln_error* (*buffer_free2)(kiln_buffer_free_args* args);

  /* Whether an event's operation has completed, without blocking. Sets
   * args->complete; once complete, returns the operation's own error as
   * event_wait would (and again on every later query). Errors:
   * INVALID_ARGUMENT (event NULL), and the operation's error.    [any thread] */
  kiln_error* (*event_query)(kiln_event_query_args* args);
} kiln_plugin_api;

/* The table size of each minor: a host accepts any table at least
 * KILN_PLUGIN_API_STRUCT_SIZE_1_0 long and reads only what fits. */
#define KILN_PLUGIN_API_STRUCT_SIZE_1_0 KILN_STRUCT_SIZE(kiln_plugin_api, cache_key)
#define KILN_PLUGIN_API_STRUCT_SIZE KILN_STRUCT_SIZE(kiln_plugin_api, event_query)

/* ========================================================== entry point == */

/* The one exported symbol. Returns the plugin's static table when it can
 * serve a host of ABI major `host_major` whose newest minor is
 * `host_max_minor`, else NULL. Does no work: no allocation, no driver
 * loading, no device access. The table lives as long as the process.
 * [any thread] */
typedef const kiln_plugin_api* (*kiln_plugin_query_fn)(uint32_t host_major, uint32_t host_max_minor);

#define KILN_PLUGIN_QUERY_SYMBOL "kiln_plugin_query"

KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(uint32_t host_major,
                                                            uint32_t host_max_minor);

/* ============================================================= size pins == */

/* Layouts are part of the ABI: a change here is an ABI break. Pinned for
 * LP64 (x86-64, aarch64 Linux). */
#if defined(__cplusplus)
#define KILN_STATIC_ASSERT(cond, name) static_assert(cond, #name)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define KILN_STATIC_ASSERT(cond, name) _Static_assert(cond, #name)
#else
#define KILN_STATIC_ASSERT(cond, name) typedef char kiln_static_assert_##name[(cond) ? 1 : -1]
#endif

#if UINTPTR_MAX == UINT64_MAX
KILN_STATIC_ASSERT(sizeof(kiln_op) == 32, kiln_op_size);
KILN_STATIC_ASSERT(sizeof(kiln_arg) == 40, kiln_arg_size);
KILN_STATIC_ASSERT(sizeof(kiln_kernel) == 32, kiln_kernel_size);
KILN_STATIC_ASSERT(KILN_HOST_API_STRUCT_SIZE_1_0 == 48, kiln_host_api_size_1_0);
KILN_STATIC_ASSERT(KILN_HOST_API_STRUCT_SIZE == 56, kiln_host_api_size);
KILN_STATIC_ASSERT(KILN_DEVICE_INFO_STRUCT_SIZE_1_0 == 488, kiln_device_info_size_1_0);
KILN_STATIC_ASSERT(offsetof(kiln_device_info, op_kind_dtypes) == 488, kiln_device_info_1_1_start);
KILN_STATIC_ASSERT(KILN_DEVICE_INFO_STRUCT_SIZE == 1304, kiln_device_info_size);
KILN_STATIC_ASSERT(KILN_INIT_ARGS_STRUCT_SIZE == 32, kiln_init_args_size);
KILN_STATIC_ASSERT(KILN_DEVICE_COUNT_ARGS_STRUCT_SIZE == 12, kiln_device_count_args_size);
KILN_STATIC_ASSERT(KILN_DEVICE_INFO_ARGS_STRUCT_SIZE == 24, kiln_device_info_args_size);
KILN_STATIC_ASSERT(KILN_DEVICE_OPEN_ARGS_STRUCT_SIZE == 24, kiln_device_open_args_size);
KILN_STATIC_ASSERT(KILN_BUFFER_ALLOC_ARGS_STRUCT_SIZE == 32, kiln_buffer_alloc_args_size);
KILN_STATIC_ASSERT(KILN_BUFFER_HOST_POINTER_ARGS_STRUCT_SIZE == 32, kiln_buffer_host_pointer_args_size);
KILN_STATIC_ASSERT(KILN_COPY_ARGS_STRUCT_SIZE == 72, kiln_copy_args_size);
KILN_STATIC_ASSERT(KILN_MEMORY_INFO_ARGS_STRUCT_SIZE == 32, kiln_memory_info_args_size);
KILN_STATIC_ASSERT(KILN_COMPILE_ARGS_STRUCT_SIZE == 40, kiln_compile_args_size);
KILN_STATIC_ASSERT(KILN_PROGRAM_SOURCE_ARGS_STRUCT_SIZE == 40, kiln_program_source_args_size);
KILN_STATIC_ASSERT(KILN_LAUNCH_ARGS_STRUCT_SIZE == 88, kiln_launch_args_size);
KILN_STATIC_ASSERT(sizeof(kiln_launch_args_1_0) == 88, kiln_launch_args_1_0_size);
KILN_STATIC_ASSERT(KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE_1_0 == 156, kiln_timed_launch_args_size_1_0);
KILN_STATIC_ASSERT(KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE == 176, kiln_timed_launch_args_size);
KILN_STATIC_ASSERT(KILN_CACHE_KEY_ARGS_STRUCT_SIZE == 24, kiln_cache_key_args_size);
KILN_STATIC_ASSERT(KILN_SHUTDOWN_ARGS_STRUCT_SIZE == 8, kiln_shutdown_args_size);
KILN_STATIC_ASSERT(KILN_DEVICE_CLOSE_ARGS_STRUCT_SIZE == 16, kiln_device_close_args_size);
KILN_STATIC_ASSERT(KILN_BUFFER_FREE_ARGS_STRUCT_SIZE == 24, kiln_buffer_free_args_size);
KILN_STATIC_ASSERT(KILN_EVENT_QUERY_ARGS_STRUCT_SIZE == 20, kiln_event_query_args_size);
KILN_STATIC_ASSERT(KILN_PLUGIN_API_STRUCT_SIZE_1_0 == 216, kiln_plugin_api_size_1_0);
KILN_STATIC_ASSERT(KILN_PLUGIN_API_STRUCT_SIZE == 256, kiln_plugin_api_size);
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_PLUGIN_H */
