#include "ir_run.hpp"

#include <kiln/ir/dtype.hpp>
#include <kiln/kernels/library.hpp>
#include <kiln/kernels/run.hpp>
#include <kiln/passes/bounds.hpp>

#include <kiln/sdk/interpreter.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace kiln::cli {

std::vector<kiln_arg> interpreter_args(std::span<const kernels::ArgSpec> args, std::span<kernels::HostBuffer> inputs,
                                       std::span<kernels::HostBuffer> outputs) {
  std::vector<kiln_arg> wire_args;
  std::size_t next_input = 0, next_output = 0;
  for (const kernels::ArgSpec& arg : args) {
    if (arg.role == kernels::ArgRole::Scalar) {
      wire_args.push_back(sdk::scalar_arg(static_cast<kiln_dtype>(arg.dtype), arg.scalar_bits));
      continue;
    }
    kernels::HostBuffer& buffer = arg.role == kernels::ArgRole::Input ? inputs[next_input++] : outputs[next_output++];
    wire_args.push_back(sdk::host_buffer_arg(buffer.data().data(), buffer.bytes()));
  }
  return wire_args;
}

namespace {

constexpr std::uint64_t kSeed = 1;
constexpr std::size_t kShown = 8;

bool unwritten(const kernels::HostBuffer& buffer, std::size_t i) {
  if (ir::is_float(buffer.dtype())) return std::isnan(buffer.get(i));
  const auto bytes = buffer.data().subspan(i * ir::dtype_bytes(buffer.dtype()), ir::dtype_bytes(buffer.dtype()));
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0x5a}; });
}

OutputSummary summarize(const kernels::ArgSpec& arg, std::uint32_t slot, const kernels::HostBuffer& buffer) {
  OutputSummary s;
  s.name = arg.name;
  s.slot = slot;
  s.dtype = arg.dtype;
  s.elements = buffer.size();
  double sum = 0;
  std::uint64_t written = 0;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -s.min;
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    const double v = buffer.get(i);
    if (s.first.size() < kShown) s.first.push_back(v);
    if (unwritten(buffer, i)) {
      ++s.unwritten;
      continue;
    }
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    sum += v;
    ++written;
  }
  s.mean = written > 0 ? sum / static_cast<double>(written) : 0;
  if (written == 0) s.min = s.max = 0;
  return s;
}

}  // namespace

Result<std::vector<OutputSummary>> run_with_random_inputs(const ir::Kernel& kernel, const std::vector<double>& scalars,
                                                          std::span<const ir::ValueId> bounds_checks) {
  KILN_TRY_ASSIGN(const std::vector<kernels::ArgSpec> args, kernels::args_of(kernel, scalars));
  // Inputs and outputs, once each, on the host.
  KILN_TRY(kernels::check_buffers_fit(args, "the kernel", 2, nullptr));
  if (!bounds_checks.empty()) {
    std::vector<std::uint64_t> scalar_bits(args.size()), elements(args.size());
    for (std::size_t slot = 0; slot < args.size(); ++slot) {
      if (args[slot].role == kernels::ArgRole::Scalar) scalar_bits[slot] = args[slot].scalar_bits;
      else elements[slot] = args[slot].elements;
    }
    KILN_TRY(passes::check_launch_bounds(kernel, bounds_checks, scalar_bits, elements));
  }
  std::vector<kernels::HostBuffer> inputs = kernels::make_input_buffers(args, kSeed);
  std::vector<kernels::HostBuffer> outputs = kernels::make_output_buffers(args);
  const std::vector<kiln_arg> wire_args = interpreter_args(args, inputs, outputs);
  try {
    const std::vector<kiln_op> wire = kernel.to_wire();
    const sdk::InterpretedProgram program(wire);
    program.run(wire_args);
  } catch (const sdk::PluginError& e) {
    Error error = make_error(ErrorCode::LaunchFailed, e.what());
    error.function = "interpreter";
    error.op = e.failed_op();
    return error;
  }
  std::vector<OutputSummary> summaries;
  std::size_t next_output = 0;
  for (std::uint32_t slot = 0; slot < args.size(); ++slot)
    if (args[slot].role == kernels::ArgRole::Output) summaries.push_back(summarize(args[slot], slot, outputs[next_output++]));
  return summaries;
}

std::string describe(const OutputSummary& s) {
  std::string first;
  for (double v : s.first) first += (first.empty() ? "" : " ") + fmt::format("{:.6g}", v);
  std::string text = fmt::format("{} (slot {}) {}[{}]: min {:.6g}, max {:.6g}, mean {:.6g}; first: {}{}", s.name, s.slot,
                                 ir::dtype_name(s.dtype), s.elements, s.min, s.max, s.mean, first,
                                 s.elements > s.first.size() ? " ..." : "");
  if (s.unwritten > 0) text += fmt::format(" ({} elements not written)", s.unwritten);
  return text;
}

boost::json::object summary_json(const OutputSummary& s) {
  boost::json::array first;
  for (double v : s.first) first.emplace_back(v);
  return {{"name", s.name},  {"slot", s.slot}, {"dtype", ir::dtype_name(s.dtype)}, {"elements", s.elements},
          {"min", s.min},    {"max", s.max},   {"mean", s.mean},                    {"unwritten", s.unwritten},
          {"first", std::move(first)}};
}

}  // namespace kiln::cli
