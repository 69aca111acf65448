// kiln/runtime/device.hpp - an open device: memory, compile, launch.
//
// Thread safety: a Device (and Buffers, Programs, Events made from it) may be
// used from several threads. Calls that use the device's queue (copies,
// launches, synchronize) are serialised per device; compile runs
// concurrently.
#pragma once

#include <kiln/ir/kernel.hpp>
#include <kiln/passes/bounds.hpp>
#include <kiln/result.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/device_info.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/launch.hpp>
#include <kiln/runtime/program.hpp>

#include <memory>
#include <span>
#include <string>

namespace kiln {

struct MemoryInfo {
  std::uint64_t free_bytes = 0;
  std::uint64_t total_bytes = 0;
};

class Device {
 public:
  Device() = default;
  explicit Device(std::shared_ptr<detail::DeviceState> state) : state_(std::move(state)) {}

  bool valid() const { return state_ != nullptr; }
  const DeviceInfo& info() const;
  const std::string& id() const { return info().id; }

  Result<MemoryInfo> memory_info() const;
  // Memory of `bytes` (> 0) bytes; contents undefined.
  Result<Buffer> allocate(std::uint64_t bytes) const;
  // Waits for everything submitted to the device.
  Result<void> synchronize() const;

  // Compiles a kernel (lowered with Kernel::to_wire). Errors carry the op
  // index at fault (Error::op) when the plugin names one. No kernel reaches
  // the plugin with a memory access the bounds policy did not accept
  // (kiln/passes/bounds.hpp, docs/ir.md "Memory safety"): an access proved
  // out of range is refused, unknown ones are guarded (Guard) or refused
  // (Prove), and accesses that depend on VARIABLE params or unknown buffer
  // lengths are proved at every launch.
  Result<Program> compile(const ir::Kernel& kernel) const;
  Result<Program> compile(const ir::Kernel& kernel, passes::BoundsPolicy bounds) const;
  // The policy compile(kernel) applies: the config's "bounds" for a device
  // from Runtime::device, Guard otherwise.
  passes::BoundsPolicy bounds_policy() const { return bounds_; }
  void set_bounds_policy(passes::BoundsPolicy bounds) { bounds_ = bounds; }
  // The plugin's identity of compile's output, for caching.
  Result<std::string> cache_key() const;

  // Enqueues one run. The grid comes from the kernel's INDEX ops and the
  // scalar arguments; it is checked against the device limits. Buffers must
  // belong to this device, or, when this is a host-memory device, to any
  // host-memory device (shared without a copy). A launch that uses another
  // device's buffer completes before launch returns.
  Result<Event> launch(const Program& program, std::span<const LaunchArg> args) const;
  // Runs the program warmups + repeats times, synchronously, and times it.
  Result<Timing> timed_launch(const Program& program, std::span<const LaunchArg> args,
                              const TimedLaunchOptions& options = {}) const;

 private:
  std::shared_ptr<detail::DeviceState> state_;
  passes::BoundsPolicy bounds_ = passes::BoundsPolicy::Guard;
};

}  // namespace kiln
