// Launch and timed launch. OpenCL sizes an NDRange in work-items, not in
// work-groups: global = groups * local on each axis (zyx got this wrong).
#include "opencl.hpp"

#include <kiln/sdk/deadline.hpp>
#include <kiln/sdk/handles.hpp>

#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/timing.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <span>
#include <string>

namespace kiln::opencl {

namespace {

Program& checked_program(kiln_program* program, const Device& device, const char* function) {
  return sdk::checked_program<Program>(program, device, function);
}

// Sets every kernel argument. Arguments are copied by clSetKernelArg, so the
// host's kiln_arg array is not needed after this.
void bind_arguments(const Device& d, Program& p, std::span<const kiln_arg> args) {
  sdk::check_launch_args(p.params, args);
  for (std::size_t slot = 0; slot < args.size(); ++slot) {
    const kiln_arg& a = args[slot];
    const sdk::ParamSlot& param = p.params[slot];
    const std::string call = "clSetKernelArg(" + std::to_string(slot) + ")";
    if (param.is_buffer()) {
      const Buffer& b = *as_buffer(a.buffer);
      if (b.device != &d)
        sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch argument " + std::to_string(slot) + ": buffer belongs to another device");
      if (a.bytes > b.bytes)
        sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch argument " + std::to_string(slot) + ": " + std::to_string(a.bytes) +
                                                    " bytes bound to a buffer of " + std::to_string(b.bytes));
      check_cl(cl().clSetKernelArg(p.kernel, static_cast<cl_uint>(slot), sizeof(cl_mem), &b.mem), call,
               KILN_STATUS_INVALID_ARGUMENT);
    } else {
      unsigned char bytes[8];
      const unsigned n = sdk::scalar_bytes(a, param.dtype, bytes);
      check_cl(cl().clSetKernelArg(p.kernel, static_cast<cl_uint>(slot), n, bytes), call, KILN_STATUS_INVALID_ARGUMENT);
    }
  }
}

struct NDRange {
  std::array<std::size_t, 3> global{};
  std::array<std::size_t, 3> local{};
};

NDRange nd_range(const kiln_launch_args& args) {
  NDRange range;
  for (int axis = 0; axis < 3; ++axis) {
    const std::uint64_t groups = args.groups[axis];
    const std::uint32_t local = args.local[axis];
    if (groups == 0 || local == 0)
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch: groups and local sizes must be >= 1 (axis " + std::to_string(axis) + ")");
    if (groups > SIZE_MAX / local)
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch: " + std::to_string(groups) + " groups of " + std::to_string(local) +
                                                  " work-items overflow the global size on axis " + std::to_string(axis));
    range.global[axis] = static_cast<std::size_t>(groups) * local;
    range.local[axis] = local;
  }
  return range;
}

cl_event enqueue(Device& d, Program& p, const NDRange& range) {
  cl_event event = nullptr;
  check_cl(cl().clEnqueueNDRangeKernel(d.queue, p.kernel, 3, nullptr, range.global.data(), range.local.data(), 0, nullptr,
                                       &event),
           "clEnqueueNDRangeKernel", KILN_STATUS_LAUNCH_FAILED);
  return event;
}

// The device time of a completed kernel, from its profiling timestamps.
std::uint64_t kernel_ns(cl_event event) {
  cl_ulong start = 0;
  cl_ulong end = 0;
  check_cl(cl().clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr),
           "clGetEventProfilingInfo(CL_PROFILING_COMMAND_START)");
  check_cl(cl().clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr),
           "clGetEventProfilingInfo(CL_PROFILING_COMMAND_END)");
  return end > start ? end - start : 0;
}

// A buffer twice the last-level cache, rewritten before each timed run so
// the kernel starts with cold caches. Made on first use.
cl_mem flush_buffer(Device& d, std::size_t& bytes) {
  bytes = static_cast<std::size_t>(std::clamp<std::uint64_t>(2 * d.last_level_cache_bytes, 1u << 20, 1u << 30));
  std::lock_guard lock(d.mutex);
  if (d.flush_buffer == nullptr) {
    cl_int err = CL_SUCCESS;
    d.flush_buffer = cl().clCreateBuffer(d.context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    check_cl(err, "clCreateBuffer(cache flush buffer)", KILN_STATUS_OUT_OF_MEMORY);
  }
  return d.flush_buffer;
}

// Owns an event of a command this plugin waits for itself.
class ScopedEvent {
 public:
  explicit ScopedEvent(cl_event event) : event_(event) {}
  ~ScopedEvent() {
    if (event_ != nullptr) cl().clReleaseEvent(event_);
  }
  ScopedEvent(const ScopedEvent&) = delete;
  ScopedEvent& operator=(const ScopedEvent&) = delete;
  cl_event get() const { return event_; }

 private:
  cl_event event_;
};

// How long a timed kernel on PoCL may take to start, at least (see
// wait_for_start): builds of large kernels take tens of seconds on a loaded
// machine, but one that blows up LLVM's loop analyses ran for over 400 s
// (96 unrolled loops between barriers), and a tuning should not wait that out.
constexpr std::uint64_t kStartLimitNs = 60'000'000'000;

// PoCL builds a kernel's work-group function for its launch's sizes at the
// kernel's first launch, before it marks the command CL_RUNNING (PoCL 3.1's
// pthread device, pocl_pthread_prepare_kernel); for a large
// kernel that takes seconds (a chain of 1000 sines: 20 s on a loaded 2-core
// machine, where the kernel then ran in 0.2 ms). A timed run's limit is the
// kernel's, so on PoCL it counts from CL_RUNNING: waits for the start, at most
// max(timeout_ns, kStartLimitNs); past that the device is lost, as for a run
// past its limit (the kernel runs once PoCL has built it).
void wait_for_start(Device& d, cl_event event, std::uint64_t timeout_ns) {
  const std::uint64_t limit_ns = std::max(timeout_ns, kStartLimitNs);
  const auto begin = std::chrono::steady_clock::now();
  if (!sdk::poll_until_done(limit_ns, [&] { return command_status(event) <= CL_RUNNING; })) {
    d.lost = true;
    sdk::fail(KILN_STATUS_TIMEOUT, "opencl: a timed kernel did not start within " + sdk::timeout_text(limit_ns) +
                                       " (PoCL builds a kernel at its first launch); OpenCL cannot cancel an enqueued "
                                       "kernel, so the device is now lost for this process");
  }
  const auto waited = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - begin);
  if (waited >= std::chrono::seconds(1))
    sdk::Host::log(KILN_LOG_INFO, "opencl: a timed kernel started " + sdk::timeout_text(waited.count()) +
                                      " after its launch (PoCL builds a kernel at its first launch); its time limit "
                                      "counts from its start");
}

// Waits for a timed run until `timeout_ns`; past it the device is lost
// (OpenCL has no way to stop a running kernel).
void wait_with_deadline(Device& d, cl_event event, std::uint64_t timeout_ns) {
  check_cl(cl().clFlush(d.queue), "clFlush", KILN_STATUS_LAUNCH_FAILED);  // a query alone need not start it
  if (d.pocl) wait_for_start(d, event, timeout_ns);
  if (sdk::poll_until_done(timeout_ns, [&] { return command_status(event) <= CL_COMPLETE; })) return;
  d.lost = true;
  sdk::fail_timeout("opencl: a timed kernel", timeout_ns,
                    "OpenCL cannot cancel a running kernel, so the device is now lost for this process");
}

}  // namespace

kiln_error* launch(kiln_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "launch");
    Program& p = checked_program(args.program, d, "launch");
    const NDRange range = nd_range(args);
    bind_arguments(d, p, {args.args, args.n_args});
    cl_event event = enqueue(d, p, range);
    check_cl(cl().clFlush(d.queue), "clFlush", KILN_STATUS_LAUNCH_FAILED);  // start now, not at the next wait
    args.event = wrap_event(event);
    sdk::write_args(raw, args);
  });
}

kiln_error* launch_timed(kiln_timed_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    const kiln_launch_args l = sdk::timed_launch_of(args);
    Device& d = checked_device(l.device, "launch_timed");
    Program& p = checked_program(l.program, d, "launch_timed");
    const NDRange range = nd_range(l);
    bind_arguments(d, p, {l.args, l.n_args});
    const bool flush = (args.flags & KILN_TIMED_FLUSH_CACHE) != 0;
    std::size_t flush_bytes = 0;
    cl_mem scratch = flush ? flush_buffer(d, flush_bytes) : nullptr;
    std::uint32_t pattern = 0;

    const auto run_once = [&]() -> std::uint64_t {
      if (flush) {
        ++pattern;  // a new value each time, so no driver can skip the fill
        // No event: the in-order queue runs the fill before the kernel.
        check_cl(cl().clEnqueueFillBuffer(d.queue, scratch, &pattern, sizeof(pattern), 0, flush_bytes, 0, nullptr, nullptr),
                 "clEnqueueFillBuffer(cache flush)", KILN_STATUS_LAUNCH_FAILED);
      }
      const ScopedEvent event(enqueue(d, p, range));
      if (args.timeout_ns != 0) wait_with_deadline(d, event.get(), args.timeout_ns);
      wait_for_command(event.get(), "timed kernel");
      return kernel_ns(event.get());
    };
    const sdk::TimingResult result = sdk::time_runs(args.warmups, args.repeats, args.abort_ns, run_once);
    sdk::store_timing(args, result, KILN_TIMER_DEVICE);
    sdk::write_args(raw, args);
  });
}

const sdk::LaunchFunctions kLaunchFunctions = {launch, launch_timed};

}  // namespace kiln::opencl
