// Launch (cuLaunchKernel: CUDA counts blocks, unlike OpenCL) and timed launch
// (cuEvent pairs around the kernel alone; optional L2 flush before each run).
#include "cuda.hpp"

#include <kiln/sdk/handles.hpp>

#include <kiln/sdk/deadline.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/timing.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <span>

namespace kiln::cuda {

namespace {

Program& checked_program(kiln_program* program, const Device& device, const char* function) {
  return sdk::checked_program<Program>(program, device, function);
}

// The kernel parameters as cuLaunchKernel takes them: one pointer per
// parameter to its value (a CUdeviceptr or the scalar's bytes).
class KernelParams {
 public:
  KernelParams(const Device& d, const Program& p, std::span<const kiln_arg> args) {
    sdk::check_launch_args(p.params, args);
    values_.resize(args.size());
    pointers_.resize(args.size());
    for (std::size_t slot = 0; slot < args.size(); ++slot) {
      const kiln_arg& a = args[slot];
      const sdk::ParamSlot& param = p.params[slot];
      if (param.is_buffer()) {
        const Buffer& b = *as_buffer(a.buffer);
        if (b.device != &d)
          sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch argument " + std::to_string(slot) + ": buffer belongs to another device");
        if (a.bytes > b.bytes)
          sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch argument " + std::to_string(slot) + ": " + std::to_string(a.bytes) +
                                                      " bytes bound to a buffer of " + std::to_string(b.bytes));
        static_assert(sizeof(CUdeviceptr) <= sizeof(Value));
        std::memcpy(values_[slot].bytes, &b.ptr, sizeof(b.ptr));
      } else {
        sdk::scalar_bytes(a, param.dtype, values_[slot].bytes);
      }
      pointers_[slot] = values_[slot].bytes;
    }
  }
  void** get() { return pointers_.empty() ? nullptr : pointers_.data(); }

 private:
  struct Value {
    alignas(8) unsigned char bytes[8];
  };
  std::vector<Value> values_;
  std::vector<void*> pointers_;
};

struct Grid {
  std::array<unsigned, 3> blocks{};
  std::array<unsigned, 3> threads{};
};

Grid grid_of(const kiln_launch_args& args) {
  Grid g;
  for (int axis = 0; axis < 3; ++axis) {
    if (args.groups[axis] == 0 || args.local[axis] == 0)
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch: groups and local sizes must be >= 1 (axis " + std::to_string(axis) + ")");
    if (args.groups[axis] > UINT32_MAX)
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch: " + std::to_string(args.groups[axis]) + " groups on axis " +
                                                  std::to_string(axis) + " exceed CUDA's grid");
    g.blocks[axis] = static_cast<unsigned>(args.groups[axis]);
    g.threads[axis] = args.local[axis];
  }
  return g;
}

void enqueue(const Device& d, const Program& p, const Grid& g, KernelParams& params) {
  check_cu(cu().cuLaunchKernel(p.function, g.blocks[0], g.blocks[1], g.blocks[2], g.threads[0], g.threads[1],
                               g.threads[2], p.dynamic_shared_bytes, d.stream, params.get(), nullptr),
           "cuLaunchKernel", KILN_STATUS_LAUNCH_FAILED);
}

// Twice the L2, rewritten before each timed run so the kernel starts cold.
CUdeviceptr flush_buffer(Device& d) {
  std::lock_guard lock(d.mutex);
  if (d.flush_buffer == 0) {
    d.flush_bytes = static_cast<std::size_t>(std::max<std::uint64_t>(2 * d.info.cache_bytes[1], std::uint64_t{8} << 20));
    check_cu(cu().cuMemAlloc(&d.flush_buffer, d.flush_bytes), "cuMemAlloc(L2 flush buffer)", KILN_STATUS_OUT_OF_MEMORY);
  }
  return d.flush_buffer;
}

}  // namespace

kiln_error* launch(kiln_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    Device& d = checked_device(args.device, "launch");
    Program& p = checked_program(args.program, d, "launch");
    const Grid g = grid_of(args);
    KernelParams params(d, p, {args.args, args.n_args});
    ContextScope scope(d.context);
    enqueue(d, p, g, params);
    args.event = wrap_event(std::make_shared<EventRecord>(d.context, d.stream, false));
    sdk::write_args(raw, args);
  });
}

kiln_error* launch_timed(kiln_timed_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    const kiln_launch_args l = sdk::timed_launch_of(args);
    Device& d = checked_device(l.device, "launch_timed");
    Program& p = checked_program(l.program, d, "launch_timed");
    const Grid g = grid_of(l);
    KernelParams params(d, p, {l.args, l.n_args});
    ContextScope scope(d.context);
    const bool flush = (args.flags & KILN_TIMED_FLUSH_CACHE) != 0;
    const CUdeviceptr scratch = flush ? flush_buffer(d) : 0;
    unsigned char pattern = 0;

    const auto run_once = [&]() -> std::uint64_t {
      if (flush)  // before the start event: the flush is not timed
        check_cu(cu().cuMemsetD8Async(scratch, ++pattern, d.flush_bytes, d.stream), "cuMemsetD8Async(L2 flush)",
                 KILN_STATUS_LAUNCH_FAILED);
      const EventRecord start(d.context, d.stream, true);
      enqueue(d, p, g, params);
      const EventRecord stop(d.context, d.stream, true);
      if (args.timeout_ns != 0 && !sdk::poll_until_done(args.timeout_ns, [&] { return stop.completed(); })) {
        d.lost = true;
        sdk::fail_timeout("cuda: a timed kernel", args.timeout_ns,
                          "CUDA cannot stop a running kernel without destroying the context, so the device is now "
                          "lost for this process");
      }
      stop.wait();
      float ms = 0;
      check_cu(cu().cuEventElapsedTime(&ms, start.get(), stop.get()), "cuEventElapsedTime");
      return static_cast<std::uint64_t>(std::llround(static_cast<double>(ms) * 1e6));
    };
    const sdk::TimingResult result = sdk::time_runs(args.warmups, args.repeats, args.abort_ns, run_once);
    sdk::store_timing(args, result, KILN_TIMER_DEVICE);
    sdk::write_args(raw, args);
  });
}

const sdk::LaunchFunctions kLaunchFunctions = {launch, launch_timed};

}  // namespace kiln::cuda
