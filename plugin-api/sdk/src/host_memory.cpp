#include "kiln/sdk/host_memory.hpp"

#include "kiln/sdk/plugin_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

namespace kiln::sdk {

namespace {

// The opaque kiln_buffer of host-memory plugins.
struct HostBuffer {
  void* data;
  std::uint64_t bytes;
};

HostBuffer* as_host(kiln_buffer* buffer) { return reinterpret_cast<HostBuffer*>(buffer); }

std::uint64_t meminfo_kib(const char* field) {
  std::ifstream in("/proc/meminfo");
  std::string name;
  std::uint64_t value = 0;
  std::string unit;
  while (in >> name >> value >> unit) {
    if (name == field) return value;
  }
  return 0;
}

void check_range(const HostBuffer* buffer, std::uint64_t offset, std::uint64_t bytes, const char* what) {
  if (buffer == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, std::string(what) + ": buffer is NULL");
  check_buffer_range(what, "", offset, bytes, buffer->bytes);
}

}  // namespace

std::uint64_t host_available_bytes() {
  std::uint64_t kib = meminfo_kib("MemAvailable:");
  if (kib != 0) return kib * 1024;
  long pages = sysconf(_SC_AVPHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

std::uint64_t host_total_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

kiln_error* host_memory_info(kiln_memory_info_args* raw) {
  return guard([&] {
    auto args = read_args(raw);
    args.free_bytes = host_available_bytes();
    args.total_bytes = host_total_bytes();
    write_args(raw, args);
  });
}

kiln_error* host_buffer_alloc(kiln_buffer_alloc_args* raw) {
  return guard([&] {
    auto args = read_args(raw);
    if (args.bytes == 0) fail(KILN_STATUS_INVALID_ARGUMENT, "buffer_alloc: size is 0");
    // aligned_alloc needs a size that is a multiple of the alignment.
    const std::uint64_t rounded = (args.bytes + 63) / 64 * 64;
    void* data = std::aligned_alloc(64, rounded);
    if (data == nullptr)
      fail(KILN_STATUS_OUT_OF_MEMORY, "buffer_alloc: cannot allocate " + std::to_string(args.bytes) + " bytes");
    auto* buffer = new HostBuffer{data, args.bytes};
    args.buffer = reinterpret_cast<kiln_buffer*>(buffer);
    write_args(raw, args);
  });
}

void host_buffer_free(kiln_device*, kiln_buffer* buffer) {
  if (buffer == nullptr) return;
  HostBuffer* host = as_host(buffer);
  std::free(host->data);
  delete host;
}

kiln_error* host_buffer_host_pointer(kiln_buffer_host_pointer_args* raw) {
  return guard([&] {
    auto args = read_args(raw);
    if (args.buffer == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, "buffer_host_pointer: buffer is NULL");
    args.pointer = as_host(args.buffer)->data;
    write_args(raw, args);
  });
}

kiln_error* host_copy_to_device(kiln_copy_args* raw) {
  return guard([&] {
    auto args = read_args(raw);
    HostBuffer* dst = as_host(args.device_buffer);
    check_range(dst, args.device_offset, args.bytes, "copy_to_device");
    check_copy_host(args, "copy_to_device");
    if (args.bytes != 0) std::memcpy(static_cast<char*>(dst->data) + args.device_offset, args.host, args.bytes);
    args.event = nullptr;
    write_args(raw, args);
  });
}

kiln_error* host_copy_to_host(kiln_copy_args* raw) {
  return guard([&] {
    auto args = read_args(raw);
    HostBuffer* src = as_host(args.device_buffer);
    check_range(src, args.device_offset, args.bytes, "copy_to_host");
    check_copy_host(args, "copy_to_host");
    if (args.bytes != 0) std::memcpy(args.host, static_cast<const char*>(src->data) + args.device_offset, args.bytes);
    args.event = nullptr;
    write_args(raw, args);
  });
}

kiln_error* host_copy_device_to_device(kiln_copy_args* raw) {
  return guard([&] {
    auto args = read_args(raw);
    HostBuffer* dst = as_host(args.device_buffer);
    HostBuffer* src = as_host(args.src_buffer);
    if (dst == nullptr || src == nullptr)
      fail(KILN_STATUS_INVALID_ARGUMENT, std::string("copy_device_to_device: ") + (dst == nullptr ? "destination" : "source") +
                                             " buffer is NULL");
    check_device_copy(args, dst->bytes, src->bytes);
    if (args.bytes != 0)
      std::memcpy(static_cast<char*>(dst->data) + args.device_offset,
                   static_cast<const char*>(src->data) + args.src_offset, args.bytes);
    args.event = nullptr;
    write_args(raw, args);
  });
}

kiln_error* host_event_wait(kiln_event*) { return nullptr; }
void host_event_release(kiln_event*) {}
kiln_error* host_event_query(kiln_event_query_args* raw) {
  return guard([&] {
    auto args = read_args(raw);
    if (args.event == nullptr) fail(KILN_STATUS_INVALID_ARGUMENT, "event_query: event is NULL");
    args.complete = 1;
    write_args(raw, args);
  });
}
kiln_error* host_device_synchronize(kiln_device*) { return nullptr; }

void* host_buffer_data(kiln_buffer* buffer) { return buffer == nullptr ? nullptr : as_host(buffer)->data; }
std::uint64_t host_buffer_size(kiln_buffer* buffer) { return buffer == nullptr ? 0 : as_host(buffer)->bytes; }

}  // namespace kiln::sdk
