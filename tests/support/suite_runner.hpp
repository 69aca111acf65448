// tests/support/suite_runner.hpp - runs a SuiteKernel on a device plugin
// through the ABI (compile, upload, launch with the kernel's grid, read
// back) and compares every checked output with the host reference.
#pragma once

#include "support/abi_host.hpp"
#include "support/kernel_suite.hpp"

#include <kiln/sdk/grid.hpp>

#include <string>
#include <vector>

namespace kiln::test {

// Launches a compiled program once and waits for it.
inline void launch_and_wait(const AbiPlugin& plugin, kiln_device* device, kiln_program* program,
                            const std::vector<kiln_arg>& args, const sdk::LaunchGrid& grid) {
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
  check(plugin.api().launch(&l));
  plugin.wait(l.event);
}

// Buffers for a kernel's arguments, freed on destruction.
class DeviceArgs {
 public:
  DeviceArgs(const AbiPlugin& plugin, kiln_device* device, const std::vector<SuiteArg>& args)
      : plugin_(plugin), device_(device) {
    for (const SuiteArg& a : args) {
      kiln_arg arg{};
      arg.dtype = a.dtype;
      if (a.scalar) {
        arg.kind = KILN_ARG_SCALAR;
        arg.scalar_bits = a.scalar_bits;
      } else {
        arg.kind = KILN_ARG_BUFFER;
        arg.bytes = a.data.bytes.size();
        arg.buffer = plugin.alloc(device, arg.bytes);
        buffers_.push_back(arg.buffer);
        plugin.write(device, arg.buffer, a.data.bytes.data(), arg.bytes);
      }
      args_.push_back(arg);
    }
  }
  ~DeviceArgs() {
    for (kiln_buffer* b : buffers_) plugin_.api().buffer_free(device_, b);
  }
  DeviceArgs(const DeviceArgs&) = delete;
  DeviceArgs& operator=(const DeviceArgs&) = delete;

  const std::vector<kiln_arg>& args() const { return args_; }

 private:
  const AbiPlugin& plugin_;
  kiln_device* device_;
  std::vector<kiln_arg> args_;
  std::vector<kiln_buffer*> buffers_;
};

// Runs `kernel` once; returns one line per mismatching output (at most a few
// elements each), empty when everything matches.
inline std::vector<std::string> run_suite_kernel(const AbiPlugin& plugin, kiln_device* device, const SuiteKernel& kernel) {
  kiln_program* program = plugin.compile(device, kernel.ops);
  DeviceArgs device_args(plugin, device, kernel.args);
  const sdk::LaunchGrid grid = sdk::compute_grid(kernel.ops, device_args.args());
  launch_and_wait(plugin, device, program, device_args.args(), grid);
  std::vector<std::string> problems;
  for (const SuiteCheck& c : kernel.checks) {
    HostArray got(c.expected.dtype, c.expected.size());
    plugin.read(device, device_args.args()[c.arg].buffer, got.bytes.data(), got.bytes.size());
    int shown = 0;
    std::size_t bad = 0;
    std::string line;
    for (std::size_t e = 0; e < got.size(); ++e) {
      if (close_enough(got.dtype, got.get(e), c.expected.get(e), c.rtol, c.atol)) continue;
      ++bad;
      if (shown++ < 3)
        line += " [" + std::to_string(e) + "] got " + show(got.dtype, got.get(e)) + " want " +
                show(got.dtype, c.expected.get(e)) + ";";
    }
    if (bad != 0)
      problems.push_back(kernel.name + ": " + c.what + ": " + std::to_string(bad) + " of " + std::to_string(got.size()) +
                         " wrong:" + line);
  }
  plugin.api().program_release(program);
  return problems;
}

}  // namespace kiln::test
