// kernel_runner.hpp - compile a wire kernel on the Vulkan plugin, bind
// buffers and scalars by slot, launch, and read every buffer back.
#pragma once

#include "support/abi_host.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kiln::test {

struct TestArg {
  bool is_buffer = true;
  std::vector<std::uint8_t> bytes;  // buffer contents (in and out)
  std::uint8_t dtype = 0;           // scalar
  std::uint64_t bits = 0;           // scalar

  template <class T>
  static TestArg buffer(const std::vector<T>& values) {
    TestArg a;
    a.bytes.resize(values.size() * sizeof(T));
    std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
    return a;
  }
  static TestArg scalar(std::uint8_t dtype, std::uint64_t bits) {
    TestArg a;
    a.is_buffer = false;
    a.dtype = dtype;
    a.bits = bits;
    return a;
  }
  template <class T>
  std::vector<T> as() const {
    std::vector<T> values(bytes.size() / sizeof(T));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
    return values;
  }
};

struct LaunchShape {
  std::array<std::uint64_t, 3> groups{1, 1, 1};
  std::array<std::uint32_t, 3> local{1, 1, 1};
};

// Throws AbiError on any failure (compile errors included).
inline void run_kernel(const AbiPlugin& plugin, kiln_device* device, const std::vector<kiln_op>& ops,
                       std::vector<TestArg>& args, const LaunchShape& shape, std::string* source = nullptr) {
  kiln_program* program = plugin.compile(device, ops);
  if (source != nullptr) *source = plugin.source(program);
  std::vector<kiln_buffer*> buffers(args.size(), nullptr);
  std::vector<kiln_arg> abi_args(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    kiln_arg& a = abi_args[i];
    if (args[i].is_buffer) {
      buffers[i] = plugin.alloc(device, args[i].bytes.size());
      plugin.write(device, buffers[i], args[i].bytes.data(), args[i].bytes.size());
      a.kind = KILN_ARG_BUFFER;
      a.buffer = buffers[i];
      a.bytes = args[i].bytes.size();
    } else {
      a.kind = KILN_ARG_SCALAR;
      a.dtype = args[i].dtype;
      a.scalar_bits = args[i].bits;
    }
  }
  kiln_launch_args launch{};
  launch.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  launch.device = device;
  launch.program = program;
  launch.args = abi_args.data();
  launch.n_args = abi_args.size();
  for (int axis = 0; axis < 3; ++axis) {
    launch.groups[axis] = shape.groups[axis];
    launch.local[axis] = shape.local[axis];
  }
  check(plugin.api().launch(&launch));
  for (std::size_t i = 0; i < args.size(); ++i)
    if (buffers[i] != nullptr) plugin.read(device, buffers[i], args[i].bytes.data(), args[i].bytes.size());
  plugin.wait(launch.event);
  for (auto* b : buffers) plugin.api().buffer_free(device, b);
  plugin.api().program_release(program);
}

}  // namespace kiln::test
