// Buffers (clCreateBuffer), non-blocking copies on the device's in-order
// queue, and the events that track them.
//
// Host memory contract: copy_to_device and copy_to_host enqueue
// non-blocking transfers, so the OpenCL driver reads (or writes) the
// caller's host memory at any time until the returned event completes, and
// never after. The caller keeps it alive and unchanged until then, as
// plugin.h requires; this plugin keeps no pointer to it afterwards.
#include "opencl.hpp"

#include <kiln/sdk/handles.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <string>

namespace kiln::opencl {

namespace {

Buffer& checked_buffer(kiln_buffer* buffer, const Device& device, const char* function, const char* role) {
  return sdk::checked_buffer<Buffer>(buffer, device, function, role);
}

void check_range(const Buffer& b, std::uint64_t offset, std::uint64_t bytes, const char* function, const char* role) {
  sdk::check_buffer_range(function, role, offset, bytes, b.bytes);
}

}  // namespace

kiln_event* wrap_event(cl_event event) {
  if (event == nullptr) return nullptr;
  try {
    return reinterpret_cast<kiln_event*>(new Event{event});
  } catch (...) {
    // No handle for the host: wait here instead, so the command is complete.
    cl().clWaitForEvents(1, &event);
    cl().clReleaseEvent(event);
    throw;
  }
}

kiln_error* memory_info(kiln_memory_info_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "memory_info");
    // OpenCL has no free-memory query: report what this plugin has not allocated.
    args.total_bytes = d.info.memory_bytes;
    const std::uint64_t used = d.allocated_bytes.load();
    args.free_bytes = used < args.total_bytes ? args.total_bytes - used : 0;
    sdk::write_args(raw, args);
  });
}

kiln_error* buffer_alloc(kiln_buffer_alloc_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "buffer_alloc");
    if (args.bytes == 0) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "buffer_alloc: size is 0");
    cl_int err = CL_SUCCESS;
    cl_mem mem = cl().clCreateBuffer(d.context, CL_MEM_READ_WRITE, args.bytes, nullptr, &err);
    if (err == CL_INVALID_BUFFER_SIZE)
      sdk::fail(KILN_STATUS_OUT_OF_MEMORY, "buffer_alloc: " + std::to_string(args.bytes) +
                                               " bytes exceed the device's largest allocation (CL_INVALID_BUFFER_SIZE)");
    check_cl(err, "clCreateBuffer", KILN_STATUS_OUT_OF_MEMORY);
    try {
      args.buffer = reinterpret_cast<kiln_buffer*>(new Buffer{&d, mem, args.bytes});
    } catch (...) {
      cl().clReleaseMemObject(mem);
      throw;
    }
    d.allocated_bytes += args.bytes;
    sdk::write_args(raw, args);
  });
}

void buffer_free(kiln_device*, kiln_buffer* buffer) {
  if (buffer == nullptr) return;
  Buffer* b = as_buffer(buffer);
  cl().clReleaseMemObject(b->mem);
  b->device->allocated_bytes -= b->bytes;
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
      cl_event event = nullptr;
      check_cl(cl().clEnqueueWriteBuffer(d.queue, dst.mem, CL_FALSE, args.device_offset, args.bytes, args.host, 0,
                                         nullptr, &event),
               "clEnqueueWriteBuffer");
      args.event = wrap_event(event);
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
      cl_event event = nullptr;
      check_cl(cl().clEnqueueReadBuffer(d.queue, src.mem, CL_FALSE, args.device_offset, args.bytes, args.host, 0,
                                        nullptr, &event),
               "clEnqueueReadBuffer");
      args.event = wrap_event(event);
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
      cl_event event = nullptr;
      check_cl(cl().clEnqueueCopyBuffer(d.queue, src.mem, dst.mem, args.src_offset, args.device_offset, args.bytes, 0,
                                        nullptr, &event),
               "clEnqueueCopyBuffer");
      args.event = wrap_event(event);
    }
    sdk::write_args(raw, args);
  });
}

// The command's execution status: CL_COMPLETE, a positive stage (queued,
// submitted, running), or the failed command's own (negative) error code.
cl_int command_status(cl_event event) {
  cl_int status = CL_COMPLETE;
  check_cl(cl().clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr),
           "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)");
  return status;
}

void wait_for_command(cl_event event, const char* what) {
  const cl_int err = cl().clWaitForEvents(1, &event);
  const cl_int status = command_status(event);
  check_cl(status < 0 ? status : err, what, KILN_STATUS_LAUNCH_FAILED);
}

kiln_error* event_wait(kiln_event* event) {
  return sdk::guard([&] {
    if (event != nullptr) wait_for_command(as_event(event)->event, "event_wait");
  });
}

kiln_error* event_query(kiln_event_query_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    if (args.event == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "event_query: event is NULL");
    const cl_event event = as_event(args.event)->event;
    const cl_int status = command_status(event);
    if (status > CL_COMPLETE) {
      // Still queued: without a flush an OpenCL queue need never start the
      // command (clWaitForEvents flushes; a query does not), so polling
      // alone could wait forever.
      cl_command_queue queue = nullptr;
      check_cl(cl().clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof(queue), &queue, nullptr),
               "clGetEventInfo(CL_EVENT_COMMAND_QUEUE)");
      if (queue != nullptr) check_cl(cl().clFlush(queue), "clFlush");
    }
    if (status < 0) check_cl(status, "event_query", KILN_STATUS_LAUNCH_FAILED);
    args.complete = status == CL_COMPLETE ? 1 : 0;
    sdk::write_args(raw, args);
  });
}

void event_release(kiln_event* event) {
  if (event == nullptr) return;
  Event* e = as_event(event);
  cl().clReleaseEvent(e->event);
  delete e;
}

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
    .event_query = event_query,
};

}  // namespace kiln::opencl
