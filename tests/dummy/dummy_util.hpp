// Helpers for the dummy plugin tests: the plugin loaded through the ABI test
// host, device buffers holding host vectors, launches and timed launches.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "support/kernel_runner.hpp"
#include "support/wire_builder.hpp"

namespace kiln::test {

inline std::unique_ptr<AbiPlugin> load_dummy(const std::string& options = "{}") {
  return std::make_unique<AbiPlugin>(plugin_path("dummy"), options);
}

// Expects `body` to throw AbiError with `status` and a message containing `fragment`.
template <class Body>
void expect_abi_error(Body&& body, kiln_status status, const std::string& fragment) {
  try {
    body();
    ADD_FAILURE() << "expected an error containing '" << fragment << "'";
  } catch (const AbiError& e) {
    EXPECT_EQ(e.status, status) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}

// A device buffer holding a copy of a host vector.
struct DeviceBuffer {
  const AbiPlugin* plugin;
  kiln_device* device;
  kiln_buffer* buffer;
  std::uint64_t bytes;

  template <class T>
  DeviceBuffer(const AbiPlugin& p, kiln_device* d, const std::vector<T>& data)
      : plugin(&p), device(d), buffer(p.alloc(d, data.size() * sizeof(T))), bytes(data.size() * sizeof(T)) {
    p.write(d, buffer, data.data(), bytes);
  }
  ~DeviceBuffer() { plugin->api().buffer_free(device, buffer); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  kiln_arg arg() const {
    kiln_arg a{};
    a.kind = KILN_ARG_BUFFER;
    a.buffer = buffer;
    a.host_pointer = plugin->host_pointer(device, buffer);
    a.bytes = bytes;
    return a;
  }
  template <class T>
  std::vector<T> read() const {
    std::vector<T> out(bytes / sizeof(T));
    plugin->read(device, buffer, out.data(), bytes);
    return out;
  }
};

inline void launch(const AbiPlugin& p, kiln_device* device, kiln_program* program, const std::vector<kiln_op>& ops,
                   const std::vector<kiln_arg>& args) {
  launch_and_wait(p, ops, device, program, args);
}

struct Timed {
  std::uint64_t min_ns;
  std::uint64_t median_ns;
  std::uint32_t runs;
  std::uint32_t timer;
  std::vector<std::uint64_t> samples;
};

inline Timed launch_timed(const AbiPlugin& p, kiln_device* device, kiln_program* program, const std::vector<kiln_op>& ops,
                          const std::vector<kiln_arg>& args, std::uint32_t warmups = 1, std::uint32_t repeats = 5) {
  kiln_timed_launch_args a{};
  a.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  const kiln_launch_args launch = launch_args(ops, device, program, args);
  a.launch = kiln::sdk::launch_args_1_0(launch);
  a.launch_args = &launch;
  a.warmups = warmups;
  a.repeats = repeats;
  std::vector<std::uint64_t> samples(repeats);
  a.samples_ns = samples.data();
  check(p.api().launch_timed(&a));
  samples.resize(a.runs);
  return {a.min_ns, a.median_ns, a.runs, a.timer, samples};
}

// Compiles, runs once with the given buffers (timed), and returns the median.
inline std::uint64_t simulated_ns(const AbiPlugin& p, kiln_device* device, const std::vector<kiln_op>& ops,
                                  const std::vector<kiln_arg>& args) {
  kiln_program* program = p.compile(device, ops);
  const Timed t = launch_timed(p, device, program, ops, args);
  p.api().program_release(program);
  return t.median_ns;
}

}  // namespace kiln::test
