// tests/support/kernel_runner.hpp - runs a hand-built wire kernel on a plugin
// through the ABI test host: compile, allocate and fill buffers, launch with
// the grid the host would compute, read the buffers back.
#pragma once

#include "support/abi_host.hpp"

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/wire.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace kiln::test {

// One launch argument with host-side contents. Buffers hold elements as
// little-endian bytes; element access goes through bit patterns (see
// reference_ops.hpp).
struct HostArg {
  std::uint8_t dtype = KILN_DTYPE_INVALID;
  bool scalar = false;
  std::uint64_t bits = 0;           // scalar value
  std::vector<std::uint8_t> bytes;  // buffer contents

  static HostArg buffer(std::uint8_t dtype, std::size_t count) {
    HostArg a;
    a.dtype = dtype;
    a.bytes.assign(count * sdk::dtype_bytes(dtype), 0);
    return a;
  }
  static HostArg value(std::uint8_t dtype, std::uint64_t bits) {
    HostArg a;
    a.dtype = dtype;
    a.scalar = true;
    a.bits = bits;
    return a;
  }
  std::size_t count() const { return bytes.size() / sdk::dtype_bytes(dtype); }
  std::uint64_t get(std::size_t i) const {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + i * sdk::dtype_bytes(dtype), sdk::dtype_bytes(dtype));
    return v;
  }
  void set(std::size_t i, std::uint64_t v) { std::memcpy(bytes.data() + i * sdk::dtype_bytes(dtype), &v, sdk::dtype_bytes(dtype)); }
  template <class T>
  T as(std::size_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
};

// A compiled program, released on destruction.
class ProgramHandle {
 public:
  ProgramHandle(const AbiPlugin& plugin, kiln_program* program) : plugin_(&plugin), program_(program) {}
  ~ProgramHandle() {
    if (program_ != nullptr) plugin_->api().program_release(program_);
  }
  ProgramHandle(const ProgramHandle&) = delete;
  ProgramHandle& operator=(const ProgramHandle&) = delete;
  kiln_program* get() const { return program_; }

 private:
  const AbiPlugin* plugin_;
  kiln_program* program_;
};

// Device buffers for a set of HostArgs, freed on destruction.
class DeviceArgs {
 public:
  DeviceArgs(const AbiPlugin& plugin, kiln_device* device, const std::vector<HostArg>& args)
      : plugin_(plugin), device_(device) {
    const bool host_memory = (plugin.info(0).flags & KILN_DEVICE_HOST_MEMORY) != 0;
    for (const HostArg& a : args) {
      kiln_arg arg{};
      arg.dtype = a.dtype;
      if (a.scalar) {
        arg.kind = KILN_ARG_SCALAR;
        arg.scalar_bits = a.bits;
      } else {
        arg.kind = KILN_ARG_BUFFER;
        arg.bytes = a.bytes.size();
        arg.buffer = plugin.alloc(device, std::max<std::uint64_t>(arg.bytes, 1));
        buffers_.push_back(arg.buffer);
        if (!a.bytes.empty()) plugin.write(device, arg.buffer, a.bytes.data(), a.bytes.size());
        if (host_memory) arg.host_pointer = plugin.host_pointer(device, arg.buffer);
      }
      abi_.push_back(arg);
    }
  }
  ~DeviceArgs() {
    for (kiln_buffer* b : buffers_) plugin_.api().buffer_free(device_, b);
  }
  DeviceArgs(const DeviceArgs&) = delete;
  DeviceArgs& operator=(const DeviceArgs&) = delete;

  const std::vector<kiln_arg>& abi() const { return abi_; }
  void read_back(std::vector<HostArg>& args) const {
    for (std::size_t i = 0; i < args.size(); ++i)
      if (!args[i].scalar && !args[i].bytes.empty()) plugin_.read(device_, abi_[i].buffer, args[i].bytes.data(), args[i].bytes.size());
  }

 private:
  const AbiPlugin& plugin_;
  kiln_device* device_;
  std::vector<kiln_arg> abi_;
  std::vector<kiln_buffer*> buffers_;
};

inline kiln_launch_args launch_args(const std::vector<kiln_op>& ops, kiln_device* device, kiln_program* program,
                                    const std::vector<kiln_arg>& args) {
  const sdk::LaunchGrid grid = sdk::compute_grid(ops, args);
  kiln_launch_args l{};
  l.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  l.device = device;
  l.program = program;
  l.args = args.data();
  l.n_args = args.size();
  for (int axis = 0; axis < 3; ++axis) {
    l.groups[axis] = grid.groups[axis];
    l.local[axis] = grid.local[axis];
  }
  return l;
}

// Compiles `ops`, runs them once on `args` and reads every buffer back.
// Returns the program's source (for failure messages). Throws AbiError.
inline std::string run_kernel(const AbiPlugin& plugin, kiln_device* device, const std::vector<kiln_op>& ops,
                              std::vector<HostArg>& args) {
  ProgramHandle program(plugin, plugin.compile(device, ops));
  DeviceArgs device_args(plugin, device, args);
  kiln_launch_args l = launch_args(ops, device, program.get(), device_args.abi());
  check(plugin.api().launch(&l));
  plugin.wait(l.event);
  device_args.read_back(args);
  return plugin.source(program.get());
}

}  // namespace kiln::test
