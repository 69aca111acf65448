#include "kiln/runtime/buffer.hpp"

#include "device_state.hpp"

#include <utility>

namespace kiln {

namespace {

Error range_error(const std::string& device, const char* what, std::uint64_t offset, std::uint64_t bytes,
                  std::uint64_t size) {
  Error e = make_error(ErrorCode::InvalidArgument, device + ": bytes [" + std::to_string(offset) + ", " +
                                                       std::to_string(offset + bytes) + ") are outside the buffer of " +
                                                       std::to_string(size) + " bytes");
  e.function = what;
  return e;
}

bool in_range(std::uint64_t offset, std::uint64_t bytes, std::uint64_t size) {
  return offset <= size && bytes <= size - offset;
}

}  // namespace

Buffer::~Buffer() {
  if (buffer_ == nullptr || !device_->alive()) return;
  {
    // The ABI requires that no submitted work still uses the buffer.
    std::lock_guard lock(device_->queue_mutex());
    (void)device_->drain_locked();
  }
  const kiln_plugin_api& api = device_->api();
  if (api.buffer_free2 != nullptr) {
    kiln_buffer_free_args args{};
    args.struct_size = KILN_BUFFER_FREE_ARGS_STRUCT_SIZE;
    args.device = device_->handle();
    args.buffer = buffer_;
    if (kiln_error* err = api.buffer_free2(&args)) device_->library().log_release_error(err, "buffer_free2");
  } else if (api.buffer_free != nullptr) {
    api.buffer_free(device_->handle(), buffer_);
  }
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(std::move(other.device_)),
      buffer_(std::exchange(other.buffer_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      host_pointer_(std::exchange(other.host_pointer_, nullptr)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Buffer dying(std::move(*this));
    device_ = std::move(other.device_);
    buffer_ = std::exchange(other.buffer_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    host_pointer_ = std::exchange(other.host_pointer_, nullptr);
  }
  return *this;
}

const std::string& Buffer::device_id() const {
  static const std::string none = "(no device)";
  return device_ != nullptr ? device_->info().id : none;
}

Result<Event> Buffer::copy(bool to_device, void* host, std::uint64_t bytes, std::uint64_t offset) const {
  const char* function = to_device ? "copy_to_device" : "copy_to_host";
  if (buffer_ == nullptr) return make_error(ErrorCode::InvalidArgument, std::string(function) + ": empty Buffer");
  if (!in_range(offset, bytes, bytes_)) return range_error(device_id(), function, offset, bytes, bytes_);
  if (bytes == 0) return Event();
  auto fn = to_device ? device_->api().copy_to_device : device_->api().copy_to_host;
  if (fn == nullptr) return device_->missing(function);
  kiln_copy_args args{};
  args.struct_size = KILN_COPY_ARGS_STRUCT_SIZE;
  args.device = device_->handle();
  args.device_buffer = buffer_;
  args.device_offset = offset;
  args.host = host;
  args.bytes = bytes;
  std::lock_guard lock(device_->queue_mutex());
  if (kiln_error* err = fn(&args)) return device_->error(err, function);
  if (args.event != nullptr) device_->mark_pending();
  return Event(device_, args.event);
}

Result<void> Buffer::write(std::span<const std::byte> data, std::uint64_t offset) {
  KILN_TRY_ASSIGN(Event done, write_async(data, offset));
  return done.wait();
}

Result<void> Buffer::read(std::span<std::byte> data, std::uint64_t offset) const {
  KILN_TRY_ASSIGN(Event done, read_async(data, offset));
  return done.wait();
}

Result<Event> Buffer::write_async(std::span<const std::byte> data, std::uint64_t offset) {
  // The ABI takes a non-const pointer for both directions; copy_to_device only reads it.
  return copy(true, const_cast<std::byte*>(data.data()), data.size(), offset);
}

Result<Event> Buffer::read_async(std::span<std::byte> data, std::uint64_t offset) const {
  return copy(false, data.data(), data.size(), offset);
}

Result<void> Buffer::copy_from(const Buffer& source, std::uint64_t bytes, std::uint64_t offset,
                               std::uint64_t source_offset) {
  const char* function = "copy_device_to_device";
  if (buffer_ == nullptr || source.buffer_ == nullptr)
    return make_error(ErrorCode::InvalidArgument, std::string(function) + ": empty Buffer");
  if (source.device_ != device_) {
    Error e = make_error(ErrorCode::InvalidArgument, "cannot copy from a buffer of " + source.device_id() +
                                                         " into one of " + device_id() +
                                                         " (copy through host memory instead)");
    e.function = function;
    return e;
  }
  if (!in_range(offset, bytes, bytes_)) return range_error(device_id(), function, offset, bytes, bytes_);
  if (!in_range(source_offset, bytes, source.bytes_))
    return range_error(device_id(), function, source_offset, bytes, source.bytes_);
  if (bytes == 0) return {};
  if (source.buffer_ == buffer_ && offset < source_offset + bytes && source_offset < offset + bytes) {
    // Refused by every plugin (plugin.h), so refused alike here, before any call.
    Error e = make_error(ErrorCode::InvalidArgument,
                         "source range [" + std::to_string(source_offset) + ", " + std::to_string(source_offset + bytes) +
                             ") and destination range [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                             ") of one buffer overlap (copy through a second buffer)");
    e.function = function;
    return e;
  }
  if (device_->api().copy_device_to_device == nullptr) return device_->missing(function);
  kiln_copy_args args{};
  args.struct_size = KILN_COPY_ARGS_STRUCT_SIZE;
  args.device = device_->handle();
  args.device_buffer = buffer_;
  args.device_offset = offset;
  args.src_buffer = source.buffer_;
  args.src_offset = source_offset;
  args.bytes = bytes;
  kiln_event* event = nullptr;
  {
    std::lock_guard lock(device_->queue_mutex());
    if (kiln_error* err = device_->api().copy_device_to_device(&args)) return device_->error(err, function);
    event = args.event;
    if (event != nullptr) device_->mark_pending();
  }
  return Event(device_, event).wait();
}

}  // namespace kiln
