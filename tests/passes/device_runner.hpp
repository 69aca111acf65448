// Runs a kernel on a runtime device (c:0 in the differential tests) with the
// same inputs run_on_interpreter makes, and reads the outputs back.
#pragma once

#include "passes/pass_test_support.hpp"

#include <kiln/runtime.hpp>

namespace kiln::passes::test {

inline RunOutcome run_on_device(const Device& device, const ir::Kernel& kernel, std::span<const kernels::ArgSpec> args,
                                std::uint64_t seed) {
  RunOutcome outcome;
  auto failed = [&](const Error& e) {
    outcome.error = "on " + device.id() + ": " + e.to_string();
    return outcome;
  };
  Result<Program> program = device.compile(kernel, {.mode = CompileMode::Frozen});
  if (!program.ok()) return failed(program.error());
  std::vector<kernels::HostBuffer> inputs = kernels::make_input_buffers(args, seed);
  outcome.outputs = kernels::make_output_buffers(args);
  std::vector<Buffer> buffers;  // one per buffer argument, in slot order
  std::vector<kernels::HostBuffer*> host;
  std::size_t next_input = 0, next_output = 0;
  for (const kernels::ArgSpec& arg : args) {
    if (arg.role == kernels::ArgRole::Scalar) continue;
    kernels::HostBuffer& data = arg.role == kernels::ArgRole::Input ? inputs[next_input++] : outcome.outputs[next_output++];
    Result<Buffer> buffer = device.allocate(std::max<std::uint64_t>(data.bytes(), 1));
    if (!buffer.ok()) return failed(buffer.error());
    if (Result<void> written = buffer->write(data.data()); !written.ok()) return failed(written.error());
    buffers.push_back(std::move(buffer).value());
    host.push_back(&data);
  }
  std::vector<LaunchArg> launch_args;
  std::size_t next_buffer = 0;
  for (const kernels::ArgSpec& arg : args)
    launch_args.push_back(arg.role == kernels::ArgRole::Scalar ? LaunchArg::scalar(arg.dtype, arg.scalar_bits)
                                                               : LaunchArg::buffer(buffers[next_buffer++]));
  Result<Event> done = device.launch(*program, launch_args);
  if (!done.ok()) return failed(done.error());
  if (Result<void> waited = done->wait(); !waited.ok()) return failed(waited.error());
  next_buffer = 0;
  for (const kernels::ArgSpec& arg : args) {
    if (arg.role == kernels::ArgRole::Scalar) continue;
    const std::size_t i = next_buffer++;
    if (arg.role != kernels::ArgRole::Output) continue;
    if (Result<void> read = buffers[i].read(host[i]->data()); !read.ok()) return failed(read.error());
  }
  return outcome;
}

}  // namespace kiln::passes::test
