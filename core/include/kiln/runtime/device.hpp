// kiln/runtime/device.hpp - an open device: memory, compile, launch.
//
// Threads (tests/runtime/threads_test.cpp runs all of this at once, also
// under ThreadSanitizer):
// - Every method of Device is const and may be called from any number of
//   threads at once, on one Device object or on copies of it.
// - compile() and cache_key() run concurrently with each other and with
//   everything else (the ABI's [any thread]): several threads compiling on
//   one device compile side by side.
// - Calls that use the device's queue (copies, launch, timed_launch,
//   synchronize, freeing a Buffer or Program that work may still use) are
//   serialised per device: the ABI's [per device] rule is the host's job,
//   never the caller's. Their order across threads is the order they take
//   the device; within a thread, submission order.
// - Different devices, of one plugin or of several, run fully in parallel.
// - allocate() and memory_info() may run on any thread, concurrently.
// Buffers, Programs and Events made from a Device follow their headers;
// none of them may be moved, assigned or destroyed while another thread
// uses that same object.
#pragma once

#include <kiln/compile_options.hpp>
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
#include <vector>

namespace kiln {

struct MemoryInfo {
  std::uint64_t free_bytes = 0;
  std::uint64_t total_bytes = 0;
};

class Device {
 public:
  Device() = default;

  bool valid() const { return state_ != nullptr; }
  const DeviceInfo& info() const;
  const std::string& id() const { return info().id; }

  Result<MemoryInfo> memory_info() const;
  // Memory of `bytes` (> 0) bytes; contents undefined.
  Result<Buffer> allocate(std::uint64_t bytes) const;
  // Waits for everything submitted to the device.
  Result<void> synchronize() const;

  // The one way to compile a kernel (kiln/compile_options.hpp): Heuristic
  // (the default) runs the always-on passes and the device's heuristic
  // schedule, Tuned replays the tuning database's record (or falls back, or
  // tunes now), Frozen compiles the kernel exactly as given. The Program's
  // compile_report() says what was done. Errors carry the op index at fault
  // (Error::op) in `kernel` as given, also when a pass moved or rewrote it.
  // Compiles may run concurrently (no queue lock).
  Result<Program> compile(const ir::Kernel& kernel, const CompileOptions& options = {}) const;
  // The bounds policy every compile of this device applies unless
  // CompileOptions::bounds names another: no kernel reaches the plugin with
  // a memory access the policy did not accept (kiln/passes/bounds.hpp,
  // docs/ir.md "Memory safety"): an access proved out of range is refused,
  // unknown ones are guarded (Guard) or refused (Prove), and accesses that
  // depend on VARIABLE params or unknown buffer lengths are proved at every
  // launch. The config's "bounds" for a device from Runtime::device, Guard
  // otherwise.
  passes::BoundsPolicy bounds_policy() const { return bounds_; }
  void set_bounds_policy(passes::BoundsPolicy bounds) { bounds_ = bounds; }
  // Compile in a child process first (the compile probe) when the
  // config's plugin entry sets "isolate_compile" (docs/config.md): a plugin
  // whose compile crashes or hangs there is reported and quarantined for the
  // process instead of taking it down. Costs a process start, the plugin's
  // init and the compile once more per compile.
  bool isolates_compile() const { return isolate_compile_; }
  void set_isolate_compile(bool isolate) { isolate_compile_ = isolate; }
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
  friend class Runtime;
  explicit Device(std::shared_ptr<detail::DeviceState> state) : state_(std::move(state)) {}
  // Verifies `kernel` and hands it to the plugin as it is (Frozen's work;
  // the other modes end here with the kernel their passes made).
  Result<Program> compile_exactly(const ir::Kernel& kernel, passes::BoundsPolicy bounds) const;

  // The compile probe's verdict on `wire`: an error (and the plugin
  // quarantined) when compile crashed or hung there.
  Result<void> compile_in_probe(const std::vector<kiln_op>& wire) const;

  std::shared_ptr<detail::DeviceState> state_;
  passes::BoundsPolicy bounds_ = passes::BoundsPolicy::Guard;
  bool isolate_compile_ = false;
};

}  // namespace kiln
