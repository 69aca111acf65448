// Buffers (cuMemAlloc), asynchronous copies on the device's stream, events.
//
// Host memory contract (stronger than plugin.h asks):
//   copy_to_device reads the caller's memory only during the call: the bytes
//     go into pinned staging blocks, and the DMA reads those.
//   copy_to_host writes the caller's memory only from stream callbacks that
//     run after the DMA and before the returned event completes; after the
//     event completes nothing touches it.
#include "cuda.hpp"

#include <kiln/sdk/handles.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <cstring>

namespace kiln::cuda {

namespace {

Buffer& checked_buffer(kiln_buffer* buffer, const Device& device, const char* function, const char* role) {
  return sdk::checked_buffer<Buffer>(buffer, device, function, role);
}

void check_range(const Buffer& b, std::uint64_t offset, std::uint64_t bytes, const char* function, const char* role) {
  sdk::check_buffer_range(function, role, offset, bytes, b.bytes);
}

// One staged piece of a device-to-host copy, finished by a stream callback.
struct CopyOut {
  const void* staging;
  void* destination;
  std::size_t bytes;
};

void CUDA_CB finish_copy_out(void* data) {
  const auto* piece = static_cast<CopyOut*>(data);
  std::memcpy(piece->destination, piece->staging, piece->bytes);
  delete piece;
}

}  // namespace

kiln_event* wrap_event(SharedEvent done) { return reinterpret_cast<kiln_event*>(new Event{std::move(done)}); }

kiln_error* memory_info(kiln_memory_info_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "memory_info");
    ContextScope scope(d.context);
    std::size_t free = 0;
    std::size_t total = 0;
    check_cu(cu().cuMemGetInfo(&free, &total), "cuMemGetInfo");
    args.free_bytes = free;
    args.total_bytes = total;
    sdk::write_args(raw, args);
  });
}

kiln_error* buffer_alloc(kiln_buffer_alloc_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "buffer_alloc");
    if (args.bytes == 0) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "buffer_alloc: size is 0");
    ContextScope scope(d.context);
    CUdeviceptr ptr = 0;  // 256-byte aligned
    check_cu(cu().cuMemAlloc(&ptr, args.bytes), "cuMemAlloc(" + std::to_string(args.bytes) + " bytes)",
             KILN_STATUS_OUT_OF_MEMORY);
    try {
      args.buffer = reinterpret_cast<kiln_buffer*>(new Buffer{&d, ptr, args.bytes});
    } catch (...) {
      cu().cuMemFree(ptr);
      throw;
    }
    sdk::write_args(raw, args);
  });
}

void buffer_free(kiln_device*, kiln_buffer* buffer) {
  if (buffer == nullptr) return;
  Buffer* b = as_buffer(buffer);
  if (b->device->open && !b->device->lost) {  // lost: the runaway kernel may still use it
    cu().cuCtxPushCurrent(b->device->context);
    cu().cuMemFree(b->ptr);
    CUcontext popped = nullptr;
    cu().cuCtxPopCurrent(&popped);
  }
  delete b;
}

kiln_error* copy_to_device(kiln_copy_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "copy_to_device");
    Buffer& dst = checked_buffer(args.device_buffer, d, "copy_to_device", "destination");
    check_range(dst, args.device_offset, args.bytes, "copy_to_device", "destination");
    sdk::check_copy_host(args, "copy_to_device");
    args.event = nullptr;
    if (args.bytes != 0) {
      ContextScope scope(d.context);
      const auto* source = static_cast<const char*>(args.host);
      SharedEvent done;
      for (std::uint64_t offset = 0; offset < args.bytes; offset += StagingPool::kChunkBytes) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(StagingPool::kChunkBytes, args.bytes - offset));
        const PinnedBlock block = d.staging->acquire(n);
        std::memcpy(block.ptr, source + offset, n);
        const CUresult copied = cu().cuMemcpyHtoDAsync(dst.ptr + args.device_offset + offset, block.ptr, n, d.stream);
        if (copied != CUDA_SUCCESS) {
          // Nothing was queued for this block: wait out what was, then free it.
          cu().cuStreamSynchronize(d.stream);
          cu().cuMemFreeHost(block.ptr);
          check_cu(copied, "cuMemcpyHtoDAsync");
        }
        done = std::make_shared<EventRecord>(d.context, d.stream, false);
        d.staging->release_after(block, done);
      }
      args.event = wrap_event(std::move(done));
    }
    sdk::write_args(raw, args);
  });
}

kiln_error* copy_to_host(kiln_copy_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "copy_to_host");
    Buffer& src = checked_buffer(args.device_buffer, d, "copy_to_host", "source");
    check_range(src, args.device_offset, args.bytes, "copy_to_host", "source");
    sdk::check_copy_host(args, "copy_to_host");
    args.event = nullptr;
    if (args.bytes != 0) {
      ContextScope scope(d.context);
      auto* destination = static_cast<char*>(args.host);
      SharedEvent done;
      for (std::uint64_t offset = 0; offset < args.bytes; offset += StagingPool::kChunkBytes) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(StagingPool::kChunkBytes, args.bytes - offset));
        const PinnedBlock block = d.staging->acquire(n);
        auto* piece = new CopyOut{block.ptr, destination + offset, n};
        CUresult queued = cu().cuMemcpyDtoHAsync(block.ptr, src.ptr + args.device_offset + offset, n, d.stream);
        if (queued == CUDA_SUCCESS) queued = cu().cuLaunchHostFunc(d.stream, finish_copy_out, piece);
        if (queued != CUDA_SUCCESS) {
          cu().cuStreamSynchronize(d.stream);
          delete piece;
          cu().cuMemFreeHost(block.ptr);
          check_cu(queued, "cuMemcpyDtoHAsync/cuLaunchHostFunc");
        }
        done = std::make_shared<EventRecord>(d.context, d.stream, false);
        d.staging->release_after(block, done);
      }
      args.event = wrap_event(std::move(done));
    }
    sdk::write_args(raw, args);
  });
}

kiln_error* copy_device_to_device(kiln_copy_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "copy_device_to_device");
    Buffer& dst = checked_buffer(args.device_buffer, d, "copy_device_to_device", "destination");
    Buffer& src = checked_buffer(args.src_buffer, d, "copy_device_to_device", "source");
    sdk::check_device_copy(args, dst.bytes, src.bytes);
    args.event = nullptr;
    if (args.bytes != 0) {
      ContextScope scope(d.context);
      check_cu(cu().cuMemcpyDtoDAsync(dst.ptr + args.device_offset, src.ptr + args.src_offset, args.bytes, d.stream),
               "cuMemcpyDtoDAsync");
      args.event = wrap_event(std::make_shared<EventRecord>(d.context, d.stream, false));
    }
    sdk::write_args(raw, args);
  });
}

kiln_error* event_wait(kiln_event* event) {
  return sdk::guard([&] {
    if (event != nullptr) as_event(event)->done->wait();
  });
}

void event_release(kiln_event* event) { delete as_event(event); }

const sdk::PoolFunctions kPoolFunctions = {
    .memory_info = memory_info,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    .buffer_host_pointer = nullptr,  // device memory is not host memory
    .copy_to_device = copy_to_device,
    .copy_to_host = copy_to_host,
    .copy_device_to_device = copy_device_to_device,
    .event_wait = event_wait,
    .event_release = event_release,
    .event_query = nullptr /* not yet: waiting is the only way to learn of completion */,
};

}  // namespace kiln::cuda
