// A standard kernel end to end on a device (kiln/kernels/run.hpp).
#include "kiln/kernels/run.hpp"

#include "kiln/ir/dtype.hpp"

#include <kiln/sdk/host_memory.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace kiln::kernels {

namespace {

// Names the step an error came from when the runtime did not (the device's
// own code and op are kept).
Error in_step(Error error, const std::string& step) {
  if (error.function.empty()) error.function = step;
  return error;
}

Result<void> check_memory(const Device& device, const StandardKernel& kernel) {
  // On the host the buffers are held up to three times (inputs, outputs read
  // back, the reference's outputs), on the device once.
  return check_buffers_fit(kernel.args, kernel.name, 3, &device);
}

}  // namespace

Result<DeviceArguments> DeviceArguments::upload(const Device& device, std::span<const ArgSpec> args,
                                                std::span<const HostBuffer> inputs) {
  DeviceArguments out;
  out.specs_.assign(args.begin(), args.end());
  out.buffers_.resize(args.size());
  const std::vector<HostBuffer> poisoned = make_output_buffers(args);
  std::size_t next_input = 0, next_output = 0;
  for (std::size_t slot = 0; slot < args.size(); ++slot) {
    const ArgSpec& spec = args[slot];
    if (spec.role == ArgRole::Scalar) continue;
    const HostBuffer* contents = nullptr;
    if (spec.role == ArgRole::Input) {
      if (next_input >= inputs.size())
        return make_error(ErrorCode::InvalidArgument, "argument '" + spec.name + "' (slot " + std::to_string(slot) +
                                                          "): " + std::to_string(inputs.size()) + " input buffers given");
      contents = &inputs[next_input++];
    } else {
      contents = &poisoned[next_output++];
    }
    if (contents->dtype() != spec.dtype || contents->size() != spec.elements)
      return make_error(ErrorCode::InvalidArgument,
                        "argument '" + spec.name + "' (slot " + std::to_string(slot) + "): a buffer of " +
                            std::to_string(contents->size()) + " " + std::string(ir::dtype_name(contents->dtype())) +
                            " for " + std::to_string(spec.elements) + " " + std::string(ir::dtype_name(spec.dtype)));
    Result<Buffer> buffer = device.allocate(contents->bytes());
    if (!buffer) return in_step(std::move(buffer).error(), "buffer_alloc");
    if (Result<void> written = buffer->write(contents->data()); !written)
      return in_step(std::move(written).error(), "copy_to_device");
    out.buffers_[slot] = std::move(buffer).value();
  }
  if (next_input != inputs.size())
    return make_error(ErrorCode::InvalidArgument, std::to_string(inputs.size()) + " input buffers for " +
                                                      std::to_string(next_input) + " inputs");
  // After every Buffer has its final address: LaunchArg refers to them.
  for (std::size_t slot = 0; slot < args.size(); ++slot)
    out.launch_args_.push_back(args[slot].role == ArgRole::Scalar
                                   ? LaunchArg::scalar(args[slot].dtype, args[slot].scalar_bits)
                                   : LaunchArg::buffer(out.buffers_[slot]));
  return out;
}

Result<std::vector<HostBuffer>> DeviceArguments::read_outputs() const {
  std::vector<HostBuffer> outputs;
  for (std::size_t slot = 0; slot < specs_.size(); ++slot) {
    if (specs_[slot].role != ArgRole::Output) continue;
    HostBuffer& out = outputs.emplace_back(specs_[slot].dtype, specs_[slot].elements);
    if (Result<void> read = buffers_[slot].read(out.data()); !read) return in_step(std::move(read).error(), "copy_to_host");
  }
  return outputs;
}

Result<std::vector<HostBuffer>> execute(const Device& device, const Program& program, std::span<const ArgSpec> args,
                                        std::span<const HostBuffer> inputs) {
  KILN_TRY_ASSIGN(const DeviceArguments arguments, DeviceArguments::upload(device, args, inputs));
  KILN_TRY_ASSIGN(Event done, device.launch(program, arguments.launch_args()));
  KILN_TRY(done.wait());
  return arguments.read_outputs();
}

double check_against_reference(const StandardKernel& kernel, std::span<const HostBuffer> inputs,
                               std::span<const HostBuffer> actual, std::string* worst) {
  std::vector<HostBuffer> expected = kernel.make_outputs();
  kernel.reference(inputs, expected);
  if (actual.size() != expected.size()) return std::numeric_limits<double>::infinity();
  std::vector<std::string> output_names;
  for (const ArgSpec& arg : kernel.args)
    if (arg.role == ArgRole::Output) output_names.push_back(arg.name);
  double max_error = -1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double error = compare(actual[i], expected[i]);
    // NaN never compares greater: count it as the worst.
    if (error > max_error || std::isnan(error)) {
      max_error = std::isnan(error) ? std::numeric_limits<double>::infinity() : error;
      if (worst != nullptr) *worst = output_names[i];
    }
  }
  return std::max(max_error, 0.0);
}

namespace {

// Launch, check, time: the part both entry points share. The caller has
// checked that the kernel's buffers fit the device.
Result<RunReport> run_program(const Device& device, const StandardKernel& kernel, const Program& program,
                              const RunOptions& options) {
  RunReport report;
  report.kernel = kernel.name;
  report.device = device.id();
  report.dtype = kernel.dtype;
  report.size = kernel.size;
  report.dims = kernel_dims(kernel);
  report.tolerance = kernel.tolerance;
  const std::vector<HostBuffer> inputs = kernel.make_inputs(options.seed);
  KILN_TRY_ASSIGN(const DeviceArguments arguments, DeviceArguments::upload(device, kernel.args, inputs));
  {
    KILN_TRY_ASSIGN(Event done, device.launch(program, arguments.launch_args()));
    KILN_TRY(done.wait());
  }
  report.ok = true;
  if (options.check) {
    KILN_TRY_ASSIGN(const std::vector<HostBuffer> outputs, arguments.read_outputs());
    report.checked = true;
    report.max_rel_err = check_against_reference(kernel, inputs, outputs, &report.worst_output);
    report.ok = report.max_rel_err <= kernel.tolerance;
  }
  if (options.time) {
    KILN_TRY_ASSIGN(report.timing, device.timed_launch(program, arguments.launch_args(), options.timing));
    const double ns = static_cast<double>(report.timing->median_ns);
    if (ns > 0) {
      report.gflops = kernel.flops / ns;
      report.gbps = kernel.bytes / ns;
    }
  }
  return report;
}

}  // namespace

Result<RunReport> run_standard_kernel(const Device& device, const StandardKernel& kernel, const RunOptions& options) {
  KILN_TRY(check_memory(device, kernel));  // before compiling: a kernel that cannot run is not compiled
  const auto compile_start = std::chrono::steady_clock::now();
  KILN_TRY_ASSIGN(const Program program, device.compile(kernel.kernel));
  const auto compile_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - compile_start).count());
  KILN_TRY_ASSIGN(RunReport report, run_program(device, kernel, program, options));
  report.compile_ns = compile_ns;
  return report;
}

Result<RunReport> run_standard_kernel(const Device& device, const StandardKernel& kernel, const Program& program,
                                      const RunOptions& options) {
  KILN_TRY(check_memory(device, kernel));
  return run_program(device, kernel, program, options);
}

std::string run_report_json(const RunReport& report, const Error* error) {
  namespace json = boost::json;
  // Non-finite numbers are not JSON: an error that is NaN or infinite is null.
  auto number = [](double v) { return std::isfinite(v) ? json::value(v) : json::value(nullptr); };
  json::object o;
  o["kernel"] = report.kernel;
  o["device"] = report.device;
  o["ok"] = report.ok;
  o["max_rel_err"] = report.checked ? number(report.max_rel_err) : json::value(nullptr);
  o["time_ns"] = report.time_ns();
  o["gflops"] = number(report.gflops);
  o["gbps"] = number(report.gbps);
  o["dtype"] = ir::dtype_name(report.dtype);
  json::object size;
  if (report.dims.m) size["m"] = report.size.m;
  if (report.dims.n) size["n"] = report.size.n;
  if (report.dims.k) size["k"] = report.size.k;
  o["size"] = std::move(size);
  o["tolerance"] = number(report.tolerance);
  o["checked"] = report.checked;
  o["compile_ns"] = report.compile_ns;
  if (report.timing) {
    o["min_ns"] = report.timing->min_ns;
    o["runs"] = report.timing->runs;
    o["timer"] = timer_kind_name(report.timing->timer);
  }
  if (error != nullptr) o["error"] = error->to_string();
  return json::serialize(o);
}

KernelDims kernel_dims(const StandardKernel& kernel) {
  auto depends_on = [&](std::int64_t KernelSize::*dim) {
    KernelSize other = kernel.size;
    other.*dim += 1;
    Result<StandardKernel> changed = make_standard_kernel(kernel.name, other, kernel.dtype);
    if (!changed) return true;
    for (std::size_t slot = 0; slot < kernel.args.size(); ++slot)
      if (changed->args[slot].elements != kernel.args[slot].elements) return true;
    return false;
  };
  return {depends_on(&KernelSize::m), depends_on(&KernelSize::n), depends_on(&KernelSize::k)};
}

std::string size_text(const StandardKernel& kernel) {
  const KernelDims dims = kernel_dims(kernel);
  std::string text;
  auto add = [&](bool used, const char* name, std::int64_t value) {
    if (used) text += (text.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(value);
  };
  add(dims.m, "m", kernel.size.m);
  add(dims.n, "n", kernel.size.n);
  add(dims.k, "k", kernel.size.k);
  return text;
}


Result<void> check_buffers_fit(std::span<const ArgSpec> args, const std::string& what, unsigned host_copies,
                               const Device* device) {
  // Allocating and touching more than the machine has ends the process (the
  // OOM killer, or a heap overflow where a byte count wrapped), so refuse first.
  std::uint64_t bytes = 0;
  for (const ArgSpec& arg : args) {
    if (arg.role == ArgRole::Scalar) continue;
    std::uint64_t one = 0;
    if (__builtin_mul_overflow(arg.elements, std::uint64_t{ir::dtype_bytes(arg.dtype)}, &one) ||
        __builtin_add_overflow(bytes, one, &bytes))
      return make_error(ErrorCode::OutOfMemory, what + ": the byte count of " + arg.name + " (" +
                                                    std::to_string(arg.elements) + " " +
                                                    std::string(ir::dtype_name(arg.dtype)) + ") overflows 64 bits");
  }
  auto mib = [](std::uint64_t b) { return std::to_string(b >> 20) + " MiB (" + std::to_string(b) + " bytes)"; };
  const std::uint64_t host_free = sdk::host_available_bytes();
  if (host_free != 0 && host_copies != 0 && bytes > host_free / host_copies)
    return make_error(ErrorCode::OutOfMemory, what + ": its buffers take " + mib(bytes) + "; running and checking them needs " +
                                                  std::to_string(host_copies) + "x that of host memory, " + mib(host_free) +
                                                  " are available");
  if (device == nullptr) return {};
  if (Result<MemoryInfo> memory = device->memory_info(); memory.ok() && memory->free_bytes != 0 && bytes > memory->free_bytes)
    return make_error(ErrorCode::OutOfMemory, what + ": its buffers take " + mib(bytes) + ", " + device->id() + " has " +
                                                  mib(memory->free_bytes) + " free");
  return {};
}

}  // namespace kiln::kernels
