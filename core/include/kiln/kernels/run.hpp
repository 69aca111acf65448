// kiln/kernels/run.hpp - a standard kernel end to end on one device, as a
// user runs it: compile, random inputs, launch, read back, check against the
// C++ reference, time. `kiln run`, the conformance tests and the benchmarks
// are thin layers over these functions; a host app can call them too.
//
//   auto kernel = make_standard_kernel("matmul", {.m = 256, .n = 256, .k = 256}).value();
//   auto device = runtime.device("c:0").value();
//   RunReport report = run_standard_kernel(device, kernel).value();
//   if (!report.ok) ...   // wrong results are a report, not an error
#pragma once

#include "kiln/kernels/library.hpp"
#include "kiln/result.hpp"
#include "kiln/runtime/device.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::kernels {

struct RunOptions {
  std::uint64_t seed = 1;     // of the random inputs (make_inputs)
  bool check = true;          // compare with the C++ reference
  bool time = true;           // timed launches after the checked one
  TimedLaunchOptions timing;  // warm-ups and repeats of the timed launches
};

// Which of KernelSize's dimensions a standard kernel depends on: those
// that change the size of one of its buffers.
struct KernelDims {
  bool m = false, n = false, k = false;
};
struct RunReport {
  std::string kernel;          // "matmul"
  std::string device;          // "c:0"
  ir::DType dtype = ir::DType::F32;
  KernelSize size;
  KernelDims dims;             // the dimensions of `size` the kernel uses
  bool checked = false;        // the reference was computed and compared
  bool ok = false;             // checked and within tolerance (true when not checked)
  double max_rel_err = 0;      // the largest compare() error over the outputs
  double tolerance = 0;        // StandardKernel::tolerance
  std::string worst_output;    // the output with that error ("c")
  std::uint64_t compile_ns = 0;  // Device::compile, host clock
  std::optional<Timing> timing;  // when timed
  double gflops = 0;           // flops / median time (0 when untimed or no flops)
  double gbps = 0;             // minimal bytes / median time

  std::uint64_t time_ns() const { return timing ? timing->median_ns : 0; }
};

// Refuses (ErrorCode::OutOfMemory, the sizes named) buffers that do not fit
// before anything is allocated: their bytes (summed with checked
// arithmetic) `host_copies` times within the host's available memory, and
// once within `device`'s free memory when a device is given. `what` names
// the kernel. kiln run, kiln ir --run, kiln tune and the tuner call it.
Result<void> check_buffers_fit(std::span<const ArgSpec> args, const std::string& what, unsigned host_copies,
                               const Device* device);

// The device buffers and launch arguments of one kernel, in slot order:
// inputs uploaded, outputs allocated (and filled like make_outputs, so an
// element the kernel fails to write does not pass by luck).
class DeviceArguments {
 public:
  static Result<DeviceArguments> upload(const Device& device, std::span<const ArgSpec> args,
                                        std::span<const HostBuffer> inputs);

  std::span<const LaunchArg> launch_args() const { return launch_args_; }
  // The Output buffers read back, in slot order.
  Result<std::vector<HostBuffer>> read_outputs() const;

 private:
  std::vector<ArgSpec> specs_;
  std::vector<Buffer> buffers_;  // one per slot; scalars hold an empty Buffer
  std::vector<LaunchArg> launch_args_;
};

// Launches `program` once on `inputs` (make_inputs order) and returns the
// outputs (make_outputs order).
Result<std::vector<HostBuffer>> execute(const Device& device, const Program& program, std::span<const ArgSpec> args,
                                        std::span<const HostBuffer> inputs);

// The largest compare() error of `actual` against the reference's outputs
// for `inputs`; `worst` names the output it came from.
double check_against_reference(const StandardKernel& kernel, std::span<const HostBuffer> inputs,
                               std::span<const HostBuffer> actual, std::string* worst = nullptr);

// The whole path: Device::compile (Heuristic), execute, check, then timed
// launches.
// Errors: whatever compile or a launch reports (a FIXED_FUNCTION device
// refusing a kernel is ErrorCode::Unsupported with Error::op). A result
// outside the tolerance is not an error: RunReport::ok is false.
Result<RunReport> run_standard_kernel(const Device& device, const StandardKernel& kernel,
                                      const RunOptions& options = {});

// The same path for a program compiled elsewhere (a tuned one:
// Device::compile in Tuned mode): `program` must compute `kernel`;
// compile_ns is 0.
Result<RunReport> run_standard_kernel(const Device& device, const StandardKernel& kernel, const Program& program,
                                      const RunOptions& options = {});

// {"kernel", "device", "ok", "max_rel_err", "time_ns", "gflops", "gbps",
//  then "dtype", "size": {the dimensions the kernel uses of "m","n","k"},
//  "tolerance", "checked",
//  "compile_ns", and when timed "min_ns", "runs", "timer"; with `error`
//  also "error": its message}: one line, no newline. Numbers that are not
// finite (an infinite error) are null, and so is max_rel_err when unchecked.
std::string run_report_json(const RunReport& report, const Error* error = nullptr);

KernelDims kernel_dims(const StandardKernel& kernel);

// The sizes a standard kernel depends on, as "n=1000", "m=64 n=1000" or
// "m=7 n=5 k=3".
std::string size_text(const StandardKernel& kernel);

}  // namespace kiln::kernels
