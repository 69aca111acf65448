// kiln/runtime/device.hpp - an open device: memory, compile, launch.
//
// Thread safety: a Device (and Buffers, Programs, Events made from it) may be
// used from several threads. Calls that use the device's queue (copies,
// launches, synchronize) are serialised per device; compile runs
// concurrently.
#pragma once

#include <kiln/compile_options.hpp>
#include <kiln/ir/kernel.hpp>
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
  Result<Program> compile_exactly(const ir::Kernel& kernel) const;

  std::shared_ptr<detail::DeviceState> state_;
};

}  // namespace kiln
