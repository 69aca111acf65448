// kiln/runtime/program.hpp - a kernel compiled for one device.
#pragma once

#include <kiln/plugin.h>
#include <kiln/result.hpp>

#include <memory>
#include <string>
#include <vector>

namespace kiln {

struct CompileReport;

namespace detail {
class DeviceState;
struct LaunchAccess;
}

struct ProgramSource {
  std::string language;  // "c", "cuda", "opencl-c", "glsl", "ptx", "blas-call", ...
  std::string text;
};

// Threads: one Program may be launched from several threads at once, on
// its device (launches serialise on the device's queue), and its source()
// read concurrently. Destroying it waits for launches already submitted, but
// it must not be destroyed or moved while another thread is still calling
// it.
class Program {
 public:
  Program() = default;
  ~Program();
  Program(Program&& other) noexcept;
  Program& operator=(Program&& other) noexcept;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  bool valid() const { return program_ != nullptr; }
  const std::string& device_id() const;
  // The generated source or assembly, for debugging.
  Result<ProgramSource> source() const;
  // The wire kernel it was compiled from (the launch grid is computed from it).
  const std::vector<kiln_op>& wire() const { return wire_; }
  // How Device::compile made it: the mode used, the kernel compiled, the
  // tuned sequence, a fallback's reason (kiln/compile_options.hpp).
  const CompileReport& compile_report() const;

 private:
  friend class Device;
  friend struct detail::LaunchAccess;
  std::shared_ptr<detail::DeviceState> device_;
  kiln_program* program_ = nullptr;
  std::vector<kiln_op> wire_;
  // Accesses the host proves at every launch (passes::check_launch_bounds).
  std::vector<std::uint32_t> bounds_checks_;
  std::shared_ptr<const CompileReport> report_;
};

}  // namespace kiln
