// An out-of-tree kiln plugin: one host-memory device, written against the
// ABI header alone (kiln/plugin.h). It shows the whole contract a plugin
// keeps: one exported query function, errors as host error objects (never
// exceptions across the ABI), struct_size-aware output, ownership of
// buffers, and an honest NOT_IMPLEMENTED for compile.
#include <kiln/plugin.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <new>
#include <string>
#include <thread>

namespace {

const kiln_host_api* host = nullptr;

kiln_error* error(kiln_status status, const std::string& message) {
  return host->error_create(status, message.data(), message.size());
}

// Runs `body` and turns any C++ exception into a host error: nothing may
// unwind through the C ABI.
template <class Body>
kiln_error* guard(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return error(KILN_STATUS_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return error(KILN_STATUS_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return error(KILN_STATUS_INTERNAL, "internal error");
  }
}

template <std::size_t N>
void copy_string(char (&dst)[N], const std::string& src) {
  std::snprintf(dst, N, "%s", src.c_str());
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "host CPU";
}

struct Buffer {  // behind kiln_buffer*
  void* data;
  std::uint64_t bytes;
};
Buffer* as_buffer(kiln_buffer* b) { return reinterpret_cast<Buffer*>(b); }

kiln_device* const the_device = reinterpret_cast<kiln_device*>(&host);  // any unique non-NULL address

kiln_error* init(kiln_init_args* args) {
  host = args->host;
  const std::string line = "example plugin ready; options: " + std::string(args->options_json, args->options_json_len);
  host->log(host->context, KILN_LOG_INFO, line.data(), line.size());
  return nullptr;
}

void shutdown() {}

kiln_error* device_count(kiln_device_count_args* args) {
  args->count = 1;
  return nullptr;
}

kiln_error* device_info(kiln_device_info_args* args) {
  return guard([&]() -> kiln_error* {
    if (args->index != 0) return error(KILN_STATUS_INVALID_ARGUMENT, "no device " + std::to_string(args->index));
    // Fill a full local copy, then hand over only what the host's struct holds.
    kiln_device_info info{};
    copy_string(info.name, "example: " + cpu_name());
    copy_string(info.vendor, "kiln examples");
    copy_string(info.driver_version, EXAMPLE_VERSION);
    info.kind = KILN_DEVICE_KIND_CPU;
    info.flags = KILN_DEVICE_HOST_MEMORY;
    info.compute_units = std::thread::hardware_concurrency();
    info.warp_size = 1;
    info.max_local_threads = 1;
    info.max_local_dims[0] = info.max_local_dims[1] = info.max_local_dims[2] = 1;
    info.vector_widths = 1u << 1;
    const std::size_t size = args->info->struct_size < sizeof info ? args->info->struct_size : sizeof info;
    info.struct_size = args->info->struct_size;
    std::memcpy(static_cast<void*>(args->info), &info, size);
    return nullptr;
  });
}

kiln_error* device_open(kiln_device_open_args* args) {
  if (args->index != 0) return error(KILN_STATUS_INVALID_ARGUMENT, "no device " + std::to_string(args->index));
  args->device = the_device;
  return nullptr;
}

void device_close(kiln_device*) {}
kiln_error* device_synchronize(kiln_device*) { return nullptr; }  // every operation completes in its call

kiln_error* memory_info(kiln_memory_info_args* args) {
  args->free_bytes = 0;  // unknown
  args->total_bytes = 0;
  return nullptr;
}

kiln_error* buffer_alloc(kiln_buffer_alloc_args* args) {
  return guard([&]() -> kiln_error* {
    if (args->bytes == 0) return error(KILN_STATUS_INVALID_ARGUMENT, "buffer_alloc: size is 0");
    void* data = std::aligned_alloc(64, (args->bytes + 63) / 64 * 64);
    if (data == nullptr) return error(KILN_STATUS_OUT_OF_MEMORY, "cannot allocate " + std::to_string(args->bytes) + " bytes");
    args->buffer = reinterpret_cast<kiln_buffer*>(new Buffer{data, args->bytes});
    return nullptr;
  });
}

void buffer_free(kiln_device*, kiln_buffer* buffer) {
  if (buffer == nullptr) return;
  std::free(as_buffer(buffer)->data);
  delete as_buffer(buffer);
}

kiln_error* buffer_host_pointer(kiln_buffer_host_pointer_args* args) {
  args->pointer = as_buffer(args->buffer)->data;
  return nullptr;
}

kiln_error* check_range(const Buffer* b, std::uint64_t offset, std::uint64_t bytes) {
  if (offset > b->bytes || bytes > b->bytes - offset)
    return error(KILN_STATUS_INVALID_ARGUMENT, "range outside the buffer of " + std::to_string(b->bytes) + " bytes");
  return nullptr;
}

// A host copy's range and host pointer (plugin.h: NULL only for no bytes).
kiln_error* check_host_copy(const kiln_copy_args* args) {
  if (args->host == nullptr && args->bytes != 0) return error(KILN_STATUS_INVALID_ARGUMENT, "host pointer is NULL");
  return check_range(as_buffer(args->device_buffer), args->device_offset, args->bytes);
}

kiln_error* copy_to_device(kiln_copy_args* args) {
  if (kiln_error* e = check_host_copy(args)) return e;
  Buffer* b = as_buffer(args->device_buffer);
  if (args->bytes != 0) std::memcpy(static_cast<char*>(b->data) + args->device_offset, args->host, args->bytes);
  args->event = nullptr;  // already complete
  return nullptr;
}

kiln_error* copy_to_host(kiln_copy_args* args) {
  if (kiln_error* e = check_host_copy(args)) return e;
  const Buffer* b = as_buffer(args->device_buffer);
  if (args->bytes != 0) std::memcpy(args->host, static_cast<const char*>(b->data) + args->device_offset, args->bytes);
  args->event = nullptr;
  return nullptr;
}

kiln_error* copy_device_to_device(kiln_copy_args* args) {
  Buffer* dst = as_buffer(args->device_buffer);
  Buffer* src = as_buffer(args->src_buffer);
  if (kiln_error* e = check_range(dst, args->device_offset, args->bytes)) return e;
  if (kiln_error* e = check_range(src, args->src_offset, args->bytes)) return e;
  // plugin.h: two ranges of one buffer that overlap are refused, as on GPUs.
  if (dst == src && args->bytes != 0 && args->device_offset < args->src_offset + args->bytes &&
      args->src_offset < args->device_offset + args->bytes)
    return error(KILN_STATUS_INVALID_ARGUMENT, "copy_device_to_device: ranges of one buffer overlap");
  std::memcpy(static_cast<char*>(dst->data) + args->device_offset,
               static_cast<const char*>(src->data) + args->src_offset, args->bytes);
  args->event = nullptr;
  return nullptr;
}

kiln_error* event_wait(kiln_event*) { return nullptr; }
void event_release(kiln_event*) {}

kiln_error* compile(kiln_compile_args*) {
  return error(KILN_STATUS_NOT_IMPLEMENTED, "the example plugin does not compile kernels in this version");
}

kiln_error* cache_key(kiln_cache_key_args* args) {
  args->key = "example " EXAMPLE_VERSION;
  return nullptr;
}

kiln_plugin_api make_table() {
  kiln_plugin_api t{};
  t.struct_size = KILN_PLUGIN_API_STRUCT_SIZE;
  t.abi_major = KILN_ABI_MAJOR;
  t.abi_minor = KILN_ABI_MINOR;
  t.name = "example";
  t.version = EXAMPLE_VERSION;
  t.description = "an out-of-tree example: one host-memory device";
  t.init = init;
  t.shutdown = shutdown;
  t.device_count = device_count;
  t.device_info = device_info;
  t.device_open = device_open;
  t.device_close = device_close;
  t.device_synchronize = device_synchronize;
  t.memory_info = memory_info;
  t.buffer_alloc = buffer_alloc;
  t.buffer_free = buffer_free;
  t.buffer_host_pointer = buffer_host_pointer;
  t.copy_to_device = copy_to_device;
  t.copy_to_host = copy_to_host;
  t.copy_device_to_device = copy_device_to_device;
  t.event_wait = event_wait;
  t.event_release = event_release;
  t.compile = compile;
  // program_source, program_release, launch, launch_timed stay NULL: not
  // implemented (the host checks before calling).
  t.cache_key = cache_key;
  return t;
}

const kiln_plugin_api table = make_table();

}  // namespace

extern "C" KILN_PLUGIN_EXPORT const kiln_plugin_api* kiln_plugin_query(uint32_t host_major, uint32_t) {
  return host_major == KILN_ABI_MAJOR ? &table : nullptr;
}
