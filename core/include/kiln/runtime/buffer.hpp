// kiln/runtime/buffer.hpp - device memory and host<->device copies.
#pragma once

#include <kiln/result.hpp>
#include <kiln/runtime/event.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

struct kiln_buffer;

namespace kiln {

// Threads: one Buffer may be read, written and launched on from several
// threads at once; the copies serialise on its device's queue (which write
// lands last is the callers' business, as with any shared memory). Moving,
// assigning or destroying a Buffer while another thread uses it is a race.
class Buffer {
 public:
  Buffer() = default;
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  std::uint64_t size() const { return bytes_; }
  bool valid() const { return buffer_ != nullptr; }
  const std::string& device_id() const;

  // Synchronous copies: complete when they return.
  Result<void> write(std::span<const std::byte> data, std::uint64_t offset = 0);
  Result<void> read(std::span<std::byte> data, std::uint64_t offset = 0) const;

  // Asynchronous copies, in the device's queue order. `data` must stay valid
  // (and unchanged, for writes) until the Event is waited or destroyed; read
  // data is defined only then.
  Result<Event> write_async(std::span<const std::byte> data, std::uint64_t offset = 0);
  Result<Event> read_async(std::span<std::byte> data, std::uint64_t offset = 0) const;

  // Copies `bytes` from `source` (a buffer of the same device; this buffer
  // itself only for ranges that do not overlap: InvalidArgument otherwise).
  Result<void> copy_from(const Buffer& source, std::uint64_t bytes, std::uint64_t offset = 0,
                         std::uint64_t source_offset = 0);

  // For buffers of host-memory devices: the bytes themselves (64-byte
  // aligned), else nullptr.
  void* host_pointer() const { return host_pointer_; }

 private:
  friend class Device;
  friend struct detail::LaunchAccess;
  Result<Event> copy(bool to_device, void* host, std::uint64_t bytes, std::uint64_t offset) const;

  std::shared_ptr<detail::DeviceState> device_;
  kiln_buffer* buffer_ = nullptr;
  std::uint64_t bytes_ = 0;
  void* host_pointer_ = nullptr;
};

}  // namespace kiln
