/*
 * A complete plugin in plain C99, for the loader and runtime tests: it
 * proves the ABI is usable from C without the C++ SDK.
 *
 * One virtual device whose memory is host memory (64-byte aligned malloc),
 * and a small kernel interpreter (f32/i32/i64 scalars: CONST, PARAM, INDEX,
 * LOAD, STORE, ADD/SUB/MUL, CAST) so launches can be checked end to end.
 *
 * Built several times (tests/loader/CMakeLists.txt):
 *   TEST_DEFERRED=0  "host":  copies and launches complete in the call.
 *   TEST_DEFERRED=1  "queue": copies and launches are queued and run when an
 *                    event is waited or the device synchronised, so a host
 *                    that does not honour events sees stale data.
 *   TEST_WRONG_ADD=1 "wrong-add": f32 ADD is off by one, so a conformance
 *                    run has a case that fails (kiln conformance exits 1).
 *   TEST_COPY_SEGV=1 "copy-segv": copy_device_to_device dereferences NULL
 *                    (`kiln conformance` must report the case it crashed in),
 *                    =2 "host-init-segv": init does (outside any case),
 *                    =3 "copy-hang": copy_device_to_device never returns;
 *   TEST_COMPILE_SEGV=1 "compile-segv": compile of a kernel with a SUB
 *                    dereferences NULL (the compile probe must catch it);
 *                    other kernels compile and run as on "host".
 *
 * Not thread-safe beyond what the ABI asks of the host: tests call it from
 * one thread.
 */
#define _POSIX_C_SOURCE 200112L
#include <kiln/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#ifndef TEST_DEFERRED
#define TEST_DEFERRED 0
#endif
#ifndef TEST_WRONG_ADD
#define TEST_WRONG_ADD 0
#endif
#ifndef TEST_COPY_SEGV
#define TEST_COPY_SEGV 0
#endif
#ifndef TEST_COMPILE_SEGV
#define TEST_COMPILE_SEGV 0
#endif
#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "test_host"
#endif
#ifndef TEST_DEVICE_NAME
#define TEST_DEVICE_NAME "kiln test device"
#endif

static const kiln_host_api* host;

static kiln_error* fail(kiln_status status, const char* format, long long a, long long b) {
  char message[256];
  snprintf(message, sizeof message, format, a, b);
  return host->error_create(status, message, strlen(message));
}

static void log_line(kiln_log_level level, const char* text) { host->log(host->context, level, text, strlen(text)); }

/* ------------------------------------------------------------ memory -- */

struct kiln_buffer {
  void* data;
  uint64_t bytes;
};

struct kiln_device {
  int open;
};
static struct kiln_device the_device;

/* ------------------------------------------------------ deferred queue -- */

typedef enum { WORK_COPY, WORK_LAUNCH } work_kind;
typedef struct work {
  work_kind kind;
  void* dst;
  const void* src;
  uint64_t bytes;
  kiln_launch_args launch; /* args copied below */
  kiln_arg* args;
  struct work* next;
} work;

struct kiln_event {
  unsigned long long ticket;
};

static work* queue_head;
static work* queue_tail;
static unsigned long long submitted, completed;

static kiln_error* run_launch(const kiln_launch_args* a);

static kiln_error* drain(unsigned long long until) {
  kiln_error* first = NULL;
  while (queue_head != NULL && completed < until) {
    work* w = queue_head;
    queue_head = w->next;
    if (queue_head == NULL) queue_tail = NULL;
    if (w->kind == WORK_COPY) {
      if (w->bytes != 0) memmove(w->dst, w->src, w->bytes);
    } else {
      kiln_error* err = run_launch(&w->launch);
      if (err != NULL && first == NULL) first = err;
      free(w->args);
    }
    free(w);
    ++completed;
  }
  return first;
}

/* Runs now, or queues and returns an event (deferred build). */
static kiln_error* submit(work* w, kiln_event** event) {
  *event = NULL;
  if (!TEST_DEFERRED) {
    kiln_error* err = NULL;
    if (w->kind == WORK_COPY) {
      if (w->bytes != 0) memmove(w->dst, w->src, w->bytes);
    } else {
      err = run_launch(&w->launch);
    }
    free(w->args);
    free(w);
    return err;
  }
  w->next = NULL;
  if (queue_tail != NULL) queue_tail->next = w;
  else queue_head = w;
  queue_tail = w;
  *event = (kiln_event*)malloc(sizeof(kiln_event));
  if (*event == NULL) return fail(KILN_STATUS_OUT_OF_MEMORY, "event", 0, 0);
  (*event)->ticket = ++submitted;
  return NULL;
}

/* ------------------------------------------------------- interpreter -- */

typedef union value {
  int64_t i;
  float f;
  void* memory;
} value;

static int supported_dtype(unsigned dt) {
  return dt == KILN_DTYPE_F32 || dt == KILN_DTYPE_I32 || dt == KILN_DTYPE_I64;
}

typedef struct program {
  kiln_op* ops;
  size_t n_ops;
  char source[64];
} program;

static value* values;
static size_t n_values;

static int64_t as_int(value v, unsigned dt) { return dt == KILN_DTYPE_I32 ? (int32_t)v.i : v.i; }

static kiln_error* run_thread(const program* p, const kiln_launch_args* a, const uint64_t group[3],
                              const uint32_t local[3]) {
  size_t id;
  for (id = 0; id < p->n_ops; ++id) {
    const kiln_op* op = &p->ops[id];
    value* out = &values[id];
    switch (op->kind) {
      case KILN_OP_CONST:
        if (op->dtype == KILN_DTYPE_F32) {
          uint32_t bits = (uint32_t)op->imm;
          memcpy(&out->f, &bits, 4);
        } else {
          out->i = op->dtype == KILN_DTYPE_I32 ? (int32_t)op->imm : (int64_t)op->imm;
        }
        break;
      case KILN_OP_PARAM: {
        const kiln_arg* arg = &a->args[op->attr];
        if (op->code == KILN_PARAM_VARIABLE) {
          if (op->dtype == KILN_DTYPE_F32) {
            uint32_t bits = (uint32_t)arg->scalar_bits;
            memcpy(&out->f, &bits, 4);
          } else {
            out->i = op->dtype == KILN_DTYPE_I32 ? (int32_t)arg->scalar_bits : (int64_t)arg->scalar_bits;
          }
        } else {
          out->memory = (void*)arg; /* resolved at LOAD/STORE */
        }
        break;
      }
      case KILN_OP_INDEX:
        out->i = op->code == KILN_SCOPE_GROUP ? (int64_t)group[op->attr] : (int64_t)local[op->attr];
        break;
      case KILN_OP_LOAD:
      case KILN_OP_STORE: {
        const kiln_arg* arg = (const kiln_arg*)values[op->src[0]].memory;
        const int64_t index = values[op->src[1]].i;
        const unsigned size = op->dtype == KILN_DTYPE_I64 ? 8u : 4u;
        char* base = (char*)arg->host_pointer;
        if (base == NULL) return fail(KILN_STATUS_LAUNCH_FAILED, "op %lld: buffer argument has no host_pointer", (long long)id, 0);
        if (index < 0 || (uint64_t)(index + 1) * size > arg->bytes)
          return fail(KILN_STATUS_LAUNCH_FAILED, "op %lld: element %lld out of range", (long long)id, (long long)index);
        if (op->kind == KILN_OP_LOAD) memcpy(out, base + index * size, size);
        else memcpy(base + index * size, &values[op->src[2]], size);
        if (op->kind == KILN_OP_LOAD && op->dtype == KILN_DTYPE_I32) out->i = *(int32_t*)(base + index * size);
        break;
      }
      case KILN_OP_BINARY: {
        const value x = values[op->src[0]], y = values[op->src[1]];
        if (op->dtype == KILN_DTYPE_F32) {
          out->f = op->code == KILN_BINARY_ADD ? x.f + y.f + (TEST_WRONG_ADD ? 1.0f : 0.0f)
                   : op->code == KILN_BINARY_SUB ? x.f - y.f
                                                 : x.f * y.f;
        } else {
          const int64_t xi = as_int(x, op->dtype), yi = as_int(y, op->dtype);
          const int64_t r = op->code == KILN_BINARY_ADD ? xi + yi : op->code == KILN_BINARY_SUB ? xi - yi : xi * yi;
          out->i = op->dtype == KILN_DTYPE_I32 ? (int32_t)r : r;
        }
        break;
      }
      case KILN_OP_CAST: {
        const kiln_op* from = &p->ops[op->src[0]];
        const value x = values[op->src[0]];
        if (op->dtype == KILN_DTYPE_F32) out->f = from->dtype == KILN_DTYPE_F32 ? x.f : (float)as_int(x, from->dtype);
        else if (from->dtype == KILN_DTYPE_F32) out->i = (int64_t)x.f;
        else out->i = op->dtype == KILN_DTYPE_I32 ? (int32_t)as_int(x, from->dtype) : as_int(x, from->dtype);
        break;
      }
      default:
        break;
    }
  }
  return NULL;
}

static kiln_error* run_launch(const kiln_launch_args* a) {
  const program* p = (const program*)a->program;
  uint64_t g[3];
  uint32_t l[3];
  if (n_values < p->n_ops) {
    value* grown = (value*)realloc(values, p->n_ops * sizeof(value));
    if (grown == NULL) return fail(KILN_STATUS_OUT_OF_MEMORY, "values", 0, 0);
    values = grown;
    n_values = p->n_ops;
  }
  for (g[2] = 0; g[2] < a->groups[2]; ++g[2])
    for (g[1] = 0; g[1] < a->groups[1]; ++g[1])
      for (g[0] = 0; g[0] < a->groups[0]; ++g[0])
        for (l[2] = 0; l[2] < a->local[2]; ++l[2])
          for (l[1] = 0; l[1] < a->local[1]; ++l[1])
            for (l[0] = 0; l[0] < a->local[0]; ++l[0]) {
              kiln_error* err = run_thread(p, a, g, l);
              if (err != NULL) return err;
            }
  return NULL;
}

/* ---------------------------------------------------------- the table -- */

static kiln_error* init(kiln_init_args* args) {
  char line[512];
  host = args->host;
  if (TEST_COPY_SEGV == 2) {
    volatile int* volatile nowhere = NULL;
    *nowhere = 1;
  }
  snprintf(line, sizeof line, "options: %.*s", (int)args->options_json_len, args->options_json);
  log_line(KILN_LOG_INFO, line);
  return NULL;
}

static void plugin_shutdown(void) {
  drain((unsigned long long)-1);
  free(values);
}

static kiln_error* device_count(kiln_device_count_args* args) {
  args->count = 1;
  return NULL;
}

static kiln_error* device_info(kiln_device_info_args* args) {
  kiln_device_info* info = args->info;
  if (args->index != 0) return fail(KILN_STATUS_INVALID_ARGUMENT, "no device %lld", args->index, 0);
  /* Writes only fields that fit in the caller's struct_size: all of 1.0's. */
  if (info->struct_size < KILN_DEVICE_INFO_STRUCT_SIZE)
    return fail(KILN_STATUS_INVALID_ARGUMENT, "device_info struct_size %lld too small", (long long)info->struct_size, 0);
  snprintf(info->name, sizeof info->name, "%s", TEST_DEVICE_NAME);
  snprintf(info->vendor, sizeof info->vendor, "kiln tests");
  snprintf(info->driver_version, sizeof info->driver_version, "1.0");
  info->kind = KILN_DEVICE_KIND_VIRTUAL;
  info->flags = KILN_DEVICE_HOST_MEMORY | KILN_DEVICE_CAN_COMPILE;
  info->memory_bytes = 1ull << 30;
  info->max_grid_dims[0] = 1u << 20;
  info->max_grid_dims[1] = info->max_grid_dims[2] = 1u << 16;
  info->max_local_dims[0] = 64;
  info->max_local_dims[1] = info->max_local_dims[2] = 4;
  info->max_local_threads = 64;
  info->compute_units = 1;
  info->warp_size = 1;
  info->vector_widths = (1u << 1) | (1u << 4);
  info->dtype_ops[KILN_DTYPE_F32] = KILN_CAP_BINARY(KILN_BINARY_ADD) | KILN_CAP_BINARY(KILN_BINARY_MUL);
  return NULL;
}

static kiln_error* device_open(kiln_device_open_args* args) {
  if (args->index != 0) return fail(KILN_STATUS_INVALID_ARGUMENT, "no device %lld", args->index, 0);
  the_device.open = 1;
  args->device = &the_device;
  return NULL;
}

static void device_close(kiln_device* device) {
  drain((unsigned long long)-1);
  device->open = 0;
}

static kiln_error* device_synchronize(kiln_device* device) {
  (void)device;
  return drain((unsigned long long)-1);
}

static kiln_error* memory_info(kiln_memory_info_args* args) {
  args->free_bytes = 1ull << 29;
  args->total_bytes = 1ull << 30;
  return NULL;
}

static kiln_error* buffer_alloc(kiln_buffer_alloc_args* args) {
  kiln_buffer* b;
  if (args->bytes == 0) return fail(KILN_STATUS_INVALID_ARGUMENT, "buffer_alloc: 0 bytes", 0, 0);
  b = (kiln_buffer*)malloc(sizeof *b);
  if (b == NULL) return fail(KILN_STATUS_OUT_OF_MEMORY, "buffer_alloc", 0, 0);
  if (posix_memalign(&b->data, 64, (size_t)args->bytes) != 0) {
    free(b);
    return fail(KILN_STATUS_OUT_OF_MEMORY, "cannot allocate %lld bytes", (long long)args->bytes, 0);
  }
  b->bytes = args->bytes;
  args->buffer = b;
  return NULL;
}

static void buffer_free(kiln_device* device, kiln_buffer* buffer) {
  (void)device;
  if (buffer == NULL) return;
  free(buffer->data);
  free(buffer);
}

static kiln_error* buffer_host_pointer(kiln_buffer_host_pointer_args* args) {
  args->pointer = args->buffer->data;
  return NULL;
}

static kiln_error* copy(kiln_copy_args* args, int to_device) {
  work* w;
  if (args->device_offset > args->device_buffer->bytes || args->bytes > args->device_buffer->bytes - args->device_offset)
    return fail(KILN_STATUS_INVALID_ARGUMENT, "copy: range ends at %lld, buffer has %lld bytes",
                (long long)(args->device_offset + args->bytes), (long long)args->device_buffer->bytes);
  if (to_device != 2 && args->host == NULL && args->bytes != 0)
    return fail(KILN_STATUS_INVALID_ARGUMENT, "copy: host pointer is NULL (%lld bytes)", (long long)args->bytes, 0);
  if (to_device == 2) {
    if (args->src_offset > args->src_buffer->bytes || args->bytes > args->src_buffer->bytes - args->src_offset)
      return fail(KILN_STATUS_INVALID_ARGUMENT, "copy: source range ends at %lld, buffer has %lld bytes",
                  (long long)(args->src_offset + args->bytes), (long long)args->src_buffer->bytes);
    /* plugin.h: ranges of one buffer that overlap are refused. */
    if (args->src_buffer == args->device_buffer && args->bytes != 0 &&
        args->device_offset < args->src_offset + args->bytes && args->src_offset < args->device_offset + args->bytes)
      return fail(KILN_STATUS_INVALID_ARGUMENT, "copy: source and destination ranges of one buffer overlap at %lld and %lld",
                  (long long)args->src_offset, (long long)args->device_offset);
  }
  w = (work*)calloc(1, sizeof *w);
  if (w == NULL) return fail(KILN_STATUS_OUT_OF_MEMORY, "copy", 0, 0);
  w->kind = WORK_COPY;
  w->bytes = args->bytes;
  if (to_device == 1) {
    w->dst = (char*)args->device_buffer->data + args->device_offset;
    w->src = args->host;
  } else if (to_device == 0) {
    w->dst = args->host;
    w->src = (const char*)args->device_buffer->data + args->device_offset;
  } else {
    w->dst = (char*)args->device_buffer->data + args->device_offset;
    w->src = (const char*)args->src_buffer->data + args->src_offset;
  }
  return submit(w, &args->event);
}

static kiln_error* copy_to_device(kiln_copy_args* args) { return copy(args, 1); }
static kiln_error* copy_to_host(kiln_copy_args* args) { return copy(args, 0); }
static kiln_error* copy_device_to_device(kiln_copy_args* args) {
  if (TEST_COPY_SEGV == 1) {
    volatile int* volatile nowhere = NULL;
    *nowhere = 1;
  }
  while (TEST_COPY_SEGV == 3) pause();
  return copy(args, 2);
}

static kiln_error* event_wait(kiln_event* event) { return event == NULL ? NULL : drain(event->ticket); }
static void event_release(kiln_event* event) { free(event); }

static kiln_error* compile(kiln_compile_args* args) {
  const kiln_kernel* k = args->kernel;
  program* p;
  size_t i;
  if (k == NULL || (k->n_ops != 0 && k->ops == NULL)) return fail(KILN_STATUS_INVALID_ARGUMENT, "compile: kernel is NULL", 0, 0);
  for (i = 0; i < k->n_ops; ++i) {
    const kiln_op* op = &k->ops[i];
    const int ok_kind = op->kind == KILN_OP_CONST || op->kind == KILN_OP_PARAM || op->kind == KILN_OP_INDEX ||
                        op->kind == KILN_OP_LOAD || op->kind == KILN_OP_STORE || op->kind == KILN_OP_CAST ||
                        (op->kind == KILN_OP_BINARY && (op->code == KILN_BINARY_ADD || op->code == KILN_BINARY_SUB ||
                                                         op->code == KILN_BINARY_MUL));
    if (TEST_COMPILE_SEGV && op->kind == KILN_OP_BINARY && op->code == KILN_BINARY_SUB) {
      volatile int* volatile nowhere = NULL;
      fprintf(stderr, "compile-segv plugin: about to dereference NULL\n");
      *nowhere = 1;
    }
    if (!ok_kind || op->lanes != 1 || !supported_dtype(op->dtype)) {
      args->failed_op = (int64_t)i;
      return fail(KILN_STATUS_UNSUPPORTED, "op %lld: kind %lld is not supported by the test interpreter", (long long)i,
                  (long long)op->kind);
    }
  }
  p = (program*)calloc(1, sizeof *p);
  if (p == NULL) return fail(KILN_STATUS_OUT_OF_MEMORY, "compile", 0, 0);
  p->ops = (kiln_op*)malloc(k->n_ops * sizeof(kiln_op) + 1);
  if (p->ops == NULL) {
    free(p);
    return fail(KILN_STATUS_OUT_OF_MEMORY, "compile", 0, 0);
  }
  memcpy(p->ops, k->ops, k->n_ops * sizeof(kiln_op));
  p->n_ops = k->n_ops;
  snprintf(p->source, sizeof p->source, "interpreted: %lu ops", (unsigned long)k->n_ops);
  args->program = (kiln_program*)p;
  return NULL;
}

static kiln_error* program_source(kiln_program_source_args* args) {
  const program* p = (const program*)args->program;
  args->language = "test-interpreter";
  args->text = p->source;
  args->text_len = strlen(p->source);
  return NULL;
}

static void program_release(kiln_program* handle) {
  program* p = (program*)handle;
  if (p == NULL) return;
  free(p->ops);
  free(p);
}

static uint64_t dtype_size(uint8_t dtype) {
  switch (dtype) {
    case KILN_DTYPE_F64: case KILN_DTYPE_I64: case KILN_DTYPE_U64: return 8;
    case KILN_DTYPE_F32: case KILN_DTYPE_I32: case KILN_DTYPE_U32: return 4;
    case KILN_DTYPE_F16: case KILN_DTYPE_BF16: case KILN_DTYPE_I16: case KILN_DTYPE_U16: return 2;
    default: return 1;
  }
}

/* plugin.h: arguments that do not match the params are INVALID_ARGUMENT. */
static kiln_error* check_args(const kiln_launch_args* a) {
  const program* p = (const program*)a->program;
  size_t i, params = 0;
  for (i = 0; i < p->n_ops; ++i) params += p->ops[i].kind == KILN_OP_PARAM;
  if (a->n_args != params || (params != 0 && a->args == NULL))
    return fail(KILN_STATUS_INVALID_ARGUMENT, "launch has %lld arguments, the kernel %lld params", (long long)a->n_args,
                (long long)params);
  for (i = 0; i < p->n_ops; ++i) {
    const kiln_op* op = &p->ops[i];
    const kiln_arg* arg;
    if (op->kind != KILN_OP_PARAM) continue;
    if (op->attr >= a->n_args) return fail(KILN_STATUS_INVALID_ARGUMENT, "param slot %lld of %lld", (long long)op->attr, (long long)a->n_args);
    arg = &a->args[op->attr];
    if (op->code == KILN_PARAM_VARIABLE) {
      if (arg->kind != KILN_ARG_SCALAR) return fail(KILN_STATUS_INVALID_ARGUMENT, "argument %lld: expected a scalar", (long long)op->attr, 0);
    } else {
      if (arg->kind != KILN_ARG_BUFFER) return fail(KILN_STATUS_INVALID_ARGUMENT, "argument %lld: expected a buffer", (long long)op->attr, 0);
      if (arg->bytes < (uint64_t)op->imm * dtype_size(op->dtype))
        return fail(KILN_STATUS_INVALID_ARGUMENT, "argument %lld: %lld bytes bound", (long long)op->attr, (long long)arg->bytes);
    }
  }
  return NULL;
}

static kiln_error* launch(kiln_launch_args* args) {
  kiln_error* bad = check_args(args);
  work* w;
  if (bad != NULL) return bad;
  w = (work*)calloc(1, sizeof *w);
  if (w == NULL) return fail(KILN_STATUS_OUT_OF_MEMORY, "launch", 0, 0);
  w->kind = WORK_LAUNCH;
  w->launch = *args;
  w->args = (kiln_arg*)malloc(args->n_args * sizeof(kiln_arg) + 1);
  if (w->args == NULL) {
    free(w);
    return fail(KILN_STATUS_OUT_OF_MEMORY, "launch", 0, 0);
  }
  memcpy(w->args, args->args, args->n_args * sizeof(kiln_arg)); /* args are valid for the call only */
  w->launch.args = w->args;
  return submit(w, &args->event);
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int compare_u64(const void* a, const void* b) {
  const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

/* The launch a timed launch carries. Built against the 1.1 header, the
 * plugin reads launch_args (the whole, growable launch); against the frozen
 * 1.0 copy (the "legacy" build), only the embedded 1.0 form exists. The two
 * have the same leading layout, which is what lets one source serve both. */
static const kiln_launch_args* timed_launch_of(const kiln_timed_launch_args* args) {
#if KILN_ABI_MINOR >= 1
  if (args->struct_size >= KILN_STRUCT_SIZE(kiln_timed_launch_args, launch_args) && args->launch_args != NULL)
    return args->launch_args;
  return (const kiln_launch_args*)(const void*)&args->launch;
#else
  return &args->launch;
#endif
}

static kiln_error* launch_timed(kiln_timed_launch_args* args) {
  uint64_t samples[256];
  uint32_t i, runs = 0;
  const kiln_launch_args* launch = timed_launch_of(args);
  kiln_error* err = drain((unsigned long long)-1);
  if (err != NULL) return err;
  if (args->repeats == 0 || args->repeats > 256) return fail(KILN_STATUS_INVALID_ARGUMENT, "repeats %lld", args->repeats, 0);
  if ((err = check_args(launch)) != NULL) return err;
  for (i = 0; i < args->warmups; ++i)
    if ((err = run_launch(launch)) != NULL) return err;
  for (i = 0; i < args->repeats; ++i) {
    const uint64_t begin = now_ns();
    if ((err = run_launch(launch)) != NULL) return err;
    samples[runs] = now_ns() - begin;
    if (args->samples_ns != NULL) args->samples_ns[runs] = samples[runs];
    ++runs;
    if (args->abort_ns != 0 && samples[runs - 1] > args->abort_ns && i + 1 < args->repeats) {
      args->aborted = 1;
      break;
    }
  }
  qsort(samples, runs, sizeof samples[0], compare_u64);
  args->min_ns = samples[0];
  args->median_ns = samples[(runs - 1) / 2];
  args->runs = runs;
  args->timer = KILN_TIMER_HOST;
  return NULL;
}

static kiln_error* cache_key(kiln_cache_key_args* args) {
  args->key = TEST_DEVICE_NAME " 1.0";
  return NULL;
}

static const kiln_plugin_api table = {
    .struct_size = KILN_PLUGIN_API_STRUCT_SIZE,
    .abi_major = KILN_ABI_MAJOR,
    .abi_minor = KILN_ABI_MINOR,
    .name = TEST_PLUGIN_NAME,
    .version = "1.0.0",
    .description = "a test plugin written in C99",
    .init = init,
    .shutdown = plugin_shutdown,
    .device_count = device_count,
    .device_info = device_info,
    .device_open = device_open,
    .device_close = device_close,
    .device_synchronize = device_synchronize,
    .memory_info = memory_info,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    .buffer_host_pointer = buffer_host_pointer,
    .copy_to_device = copy_to_device,
    .copy_to_host = copy_to_host,
    .copy_device_to_device = copy_device_to_device,
    .event_wait = event_wait,
    .event_release = event_release,
    .compile = compile,
    .program_source = program_source,
    .program_release = program_release,
    .launch = launch,
    .launch_timed = launch_timed,
    .cache_key = cache_key,
};

KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(uint32_t host_major, uint32_t host_max_minor) {
  (void)host_max_minor;
  return host_major == KILN_ABI_MAJOR ? &table : NULL;
}
