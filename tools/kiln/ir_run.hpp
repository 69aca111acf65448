// `kiln ir --run`: the kernel on the SDK's reference interpreter with random
// inputs (kernels::args_of + make_input_buffers), and a summary of each
// output buffer.
#pragma once

#include <kiln/ir/kernel.hpp>
#include <kiln/kernels/library.hpp>
#include <kiln/plugin.h>
#include <kiln/result.hpp>

#include <boost/json/object.hpp>

#include <span>
#include <string>
#include <vector>

namespace kiln::cli {

// The reference interpreter's arguments for `args` in slot order: scalars by
// value, inputs and outputs as host buffers taken in order from `inputs` and
// `outputs` (which must outlive the run).
std::vector<kiln_arg> interpreter_args(std::span<const kernels::ArgSpec> args, std::span<kernels::HostBuffer> inputs,
                                       std::span<kernels::HostBuffer> outputs);

struct OutputSummary {
  std::string name;            // "%1"
  std::uint32_t slot = 0;
  ir::DType dtype = ir::DType::Invalid;
  std::uint64_t elements = 0;
  double min = 0, max = 0, mean = 0;
  std::uint64_t unwritten = 0;  // still the NaN / 0x5a pattern make_output_buffers fills in
  std::vector<double> first;    // up to 8 leading values
};

// Errors: the arguments (a missing element count, wrong number of scalars)
// or the interpreter's report of a kernel fault.
// `bounds_checks`: accesses proved with the scalars and buffer sizes before
// the run (passes::BoundedKernel::launch_checks).
Result<std::vector<OutputSummary>> run_with_random_inputs(const ir::Kernel& kernel, const std::vector<double>& scalars,
                                                          std::span<const ir::ValueId> bounds_checks = {});

std::string describe(const OutputSummary& summary);
boost::json::object summary_json(const OutputSummary& summary);

}  // namespace kiln::cli
