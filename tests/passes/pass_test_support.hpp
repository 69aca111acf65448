// Shared by the pass tests: run a pass on IR text (checking that input and
// output verify), and run kernels on the reference interpreter with random
// inputs to check that a rewrite kept the results.
#pragma once

#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"
#include "kiln/kernels/library.hpp"
#include "kiln/passes/device_presets.hpp"
#include "kiln/passes/pipeline.hpp"

#include <kiln/sdk/interpreter.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace kiln::passes::test {

// Parses and verifies `text`; a failure is a test failure (and an empty kernel).
inline ir::Kernel parse_valid(std::string_view text) {
  Result<ir::Kernel> kernel = ir::parse(text);
  if (!kernel.ok()) {
    ADD_FAILURE() << kernel.error().to_string() << "\n" << text;
    return {};
  }
  if (Result<void> valid = ir::verify(*kernel); !valid.ok()) {
    ADD_FAILURE() << "test kernel does not verify: " << valid.error().to_string() << "\n" << ir::print(*kernel);
    return {};
  }
  return std::move(kernel).value();
}

// Outputs of one run on the interpreter, or the error it reported.
struct RunOutcome {
  std::vector<kernels::HostBuffer> outputs;
  std::string error;  // "" when it ran
};

// Runs `kernel` with arguments `args` (inputs from make_input_buffers(seed)).
inline RunOutcome run_on_interpreter(const ir::Kernel& kernel, std::span<const kernels::ArgSpec> args,
                                     std::uint64_t seed) {
  RunOutcome outcome;
  std::vector<kernels::HostBuffer> inputs = kernels::make_input_buffers(args, seed);
  outcome.outputs = kernels::make_output_buffers(args);
  std::vector<kiln_arg> wire_args;
  std::size_t next_input = 0, next_output = 0;
  for (const kernels::ArgSpec& arg : args) {
    switch (arg.role) {
      case kernels::ArgRole::Input: {
        auto bytes = inputs[next_input++].data();
        wire_args.push_back(sdk::host_buffer_arg(bytes.data(), bytes.size()));
        break;
      }
      case kernels::ArgRole::Output: {
        auto bytes = outcome.outputs[next_output++].data();
        wire_args.push_back(sdk::host_buffer_arg(bytes.data(), bytes.size()));
        break;
      }
      case kernels::ArgRole::Scalar:
        wire_args.push_back(sdk::scalar_arg(static_cast<kiln_dtype>(arg.dtype), arg.scalar_bits));
        break;
    }
  }
  try {
    const std::vector<kiln_op> wire = kernel.to_wire();
    sdk::InterpretedProgram program(wire);
    program.run(wire_args);
  } catch (const sdk::PluginError& e) {
    outcome.error = e.what();
  }
  return outcome;
}

// The same with the arguments args_of derives from the kernel's params.
inline RunOutcome run_on_interpreter(const ir::Kernel& kernel, std::span<const double> scalars = {},
                                     std::uint64_t seed = 7) {
  Result<std::vector<kernels::ArgSpec>> args = kernels::args_of(kernel, scalars);
  if (!args.ok()) return RunOutcome{{}, args.error().to_string()};
  return run_on_interpreter(kernel, *args, seed);
}

// "" when two runs gave the same outputs (within `tolerance`), else what differs.
inline std::string compare_outcomes(const RunOutcome& want, const RunOutcome& got, double tolerance) {
  if (!want.error.empty()) return "the original kernel fails: " + want.error;
  if (!got.error.empty()) return "the rewritten kernel fails: " + got.error;
  for (std::size_t i = 0; i < want.outputs.size(); ++i) {
    const double error = kernels::compare(got.outputs[i], want.outputs[i]);
    if (!(error <= tolerance))
      return "output " + std::to_string(i) + " differs: relative error " + std::to_string(error);
  }
  return "";
}

// "" when `after` gives the outputs `before` gives (within `tolerance`, as
// kernels::compare measures), else what differs.
inline std::string compare_runs(const ir::Kernel& before, const ir::Kernel& after, std::span<const double> scalars = {},
                                double tolerance = 0, std::uint64_t seed = 7) {
  return compare_outcomes(run_on_interpreter(before, scalars, seed), run_on_interpreter(after, scalars, seed), tolerance);
}

// Runs the always-on pass `name` on `text` and returns the printed result.
// Checks that the input and the output verify and give the same results on
// the interpreter (exactly: `tolerance` 0 unless given).
inline std::string after_pass(std::string_view name, std::string_view text, const DeviceInfo& device = cpu_preset(),
                              std::span<const double> scalars = {}, double tolerance = 0) {
  const Pass* pass = find_pass(name);
  if (pass == nullptr) {
    ADD_FAILURE() << "no pass named " << name;
    return "";
  }
  const ir::Kernel before = parse_valid(text);
  if (before.ops.empty()) return "";
  const ir::Kernel after = pass->run(before, device);
  if (Result<void> valid = ir::verify(after); !valid.ok())
    ADD_FAILURE() << name << " produced an invalid kernel: " << valid.error().to_string() << "\n" << ir::print(after);
  else if (std::string diff = compare_runs(before, after, scalars, tolerance); !diff.empty())
    ADD_FAILURE() << name << " changed the results: " << diff << "\nbefore:\n" << ir::print(before) << "after:\n"
                  << ir::print(after);
  return ir::print(after);
}

}  // namespace kiln::passes::test
