// kiln_buffer_*: device memory and synchronous copies.
#include "capi/handles.hpp"

#include <cstddef>
#include <span>

using kiln::capi::guard;
using kiln::capi::make_status;
using kiln::capi::null_argument;
using kiln::capi::status_of;

extern "C" {

kiln_status_t* kiln_buffer_alloc(kiln_device_t* device, uint64_t bytes, kiln_buffer_t** out) {
  return guard("kiln_buffer_alloc", [&]() -> kiln_status_t* {
    if (device == nullptr) return null_argument("kiln_buffer_alloc", "device");
    if (out == nullptr) return null_argument("kiln_buffer_alloc", "out");
    if (bytes == 0) return make_status(KILN_CODE_INVALID_ARGUMENT, "kiln_buffer_alloc: bytes is 0");
    kiln::Result<kiln::Buffer> buffer = device->device.allocate(bytes);
    if (!buffer) return make_status(buffer.error());
    *out = new kiln_buffer_t{std::move(buffer).value()};
    return nullptr;
  });
}

// Destructors are noexcept: they wait for pending work and send a plugin's
// failure to its log, never up.
void kiln_buffer_free(kiln_buffer_t* buffer) { delete buffer; }

kiln_status_t* kiln_buffer_write(kiln_buffer_t* buffer, uint64_t offset, const void* data, uint64_t bytes) {
  return guard("kiln_buffer_write", [&]() -> kiln_status_t* {
    if (buffer == nullptr) return null_argument("kiln_buffer_write", "buffer");
    if (data == nullptr && bytes > 0) return null_argument("kiln_buffer_write", "data");
    return status_of(buffer->buffer.write(std::span(static_cast<const std::byte*>(data), bytes), offset));
  });
}

kiln_status_t* kiln_buffer_read(const kiln_buffer_t* buffer, uint64_t offset, void* data, uint64_t bytes) {
  return guard("kiln_buffer_read", [&]() -> kiln_status_t* {
    if (buffer == nullptr) return null_argument("kiln_buffer_read", "buffer");
    if (data == nullptr && bytes > 0) return null_argument("kiln_buffer_read", "data");
    return status_of(buffer->buffer.read(std::span(static_cast<std::byte*>(data), bytes), offset));
  });
}

uint64_t kiln_buffer_size(const kiln_buffer_t* buffer) { return buffer ? buffer->buffer.size() : 0; }

void* kiln_buffer_host_pointer(const kiln_buffer_t* buffer) { return buffer ? buffer->buffer.host_pointer() : nullptr; }

}  // extern "C"
