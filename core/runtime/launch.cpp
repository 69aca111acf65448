// Device::launch and Device::timed_launch: the host's side of a launch.
// Checks the arguments against the kernel's params, binds host-memory
// buffers by pointer, computes the grid from the kernel and checks it
// against the device limits, then calls the plugin.
#include "kiln/runtime/device.hpp"

#include "device_state.hpp"

#include <kiln/sdk/grid.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/wire.hpp>

namespace kiln {

namespace detail {

// Reaches the private parts of Buffer and Program for launches.
struct LaunchAccess {
  static const std::shared_ptr<DeviceState>& device(const Buffer& b) { return b.device_; }
  static kiln_buffer* handle(const Buffer& b) { return b.buffer_; }
  static const std::shared_ptr<DeviceState>& device(const Program& p) { return p.device_; }
  static kiln_program* handle(const Program& p) { return p.program_; }
  static const std::vector<std::uint32_t>& bounds_checks(const Program& p) { return p.bounds_checks_; }
};

}  // namespace detail

namespace {

using detail::DeviceState;
using detail::LaunchAccess;

struct PreparedLaunch {
  std::vector<kiln_arg> args;
  kiln::sdk::LaunchGrid grid;
  bool uses_other_device = false;  // a host-memory buffer of another device
};

Error launch_error(const DeviceState& device, const char* function, std::string message, std::int64_t op = -1) {
  Error e = make_error(ErrorCode::InvalidArgument, device.info().id + ": " + std::move(message));
  e.plugin = device.plugin();
  e.function = function;
  e.op = op;
  return e;
}

std::string describe_param(const kiln_op& param) {
  return std::string(kiln::sdk::param_kind_name(param.code)) + " " + std::string(kiln::sdk::dtype_name(param.dtype));
}

Result<PreparedLaunch> prepare(const DeviceState& device, const Program& program, std::span<const LaunchArg> args,
                               const char* function) {
  if (!program.valid()) return launch_error(device, function, "empty Program");
  if (LaunchAccess::device(program).get() != &device)
    return launch_error(device, function, "the program was compiled for " + program.device_id());

  const std::vector<kiln_op>& ops = program.wire();
  std::vector<const kiln_op*> params;
  for (const kiln_op& op : ops) {
    if (op.kind != KILN_OP_PARAM) continue;
    if (params.size() <= op.attr) params.resize(op.attr + 1, nullptr);
    params[op.attr] = &op;
  }
  if (args.size() != params.size())
    return launch_error(device, function, "the kernel has " + std::to_string(params.size()) + " params, got " +
                                              std::to_string(args.size()) + " arguments");

  PreparedLaunch prepared;
  prepared.args.resize(args.size());
  const bool host_memory = device.info().host_memory();
  for (std::size_t slot = 0; slot < args.size(); ++slot) {
    const kiln_op* param = params[slot];
    const std::string where = "argument " + std::to_string(slot);
    if (param == nullptr) return launch_error(device, function, "the kernel has no param for slot " + std::to_string(slot));
    kiln_arg& out = prepared.args[slot];
    const LaunchArg& arg = args[slot];
    if (param->code == KILN_PARAM_VARIABLE) {
      if (arg.is_buffer())
        return launch_error(device, function, where + ": the param is a " + describe_param(*param) + ", got a buffer");
      if (static_cast<unsigned>(arg.dtype()) != param->dtype)
        return launch_error(device, function, where + ": the param is a " + describe_param(*param) + ", got a " +
                                                  std::string(kiln::sdk::dtype_name(static_cast<unsigned>(arg.dtype()))));
      out.kind = KILN_ARG_SCALAR;
      out.dtype = param->dtype;
      out.scalar_bits = arg.bits();
      continue;
    }
    if (!arg.is_buffer() || !arg.buffer_ref()->valid())
      return launch_error(device, function, where + ": the param is a " + describe_param(*param) + " buffer, got " +
                                                (arg.is_buffer() ? "an empty Buffer" : "a scalar"));
    const Buffer& buffer = *arg.buffer_ref();
    const DeviceState& owner = *LaunchAccess::device(buffer);
    const std::uint64_t needed = param->imm * kiln::sdk::dtype_bytes(param->dtype);
    if (buffer.size() < needed)
      return launch_error(device, function, where + ": the buffer has " + std::to_string(buffer.size()) +
                                                " bytes, the param needs " + std::to_string(param->imm) + " " +
                                                std::string(kiln::sdk::dtype_name(param->dtype)) + " (" +
                                                std::to_string(needed) + " bytes)");
    out.kind = KILN_ARG_BUFFER;
    out.bytes = buffer.size();
    if (&owner == &device) {
      out.buffer = LaunchAccess::handle(buffer);
      if (host_memory) out.host_pointer = buffer.host_pointer();
    } else if (host_memory && owner.info().host_memory()) {
      out.host_pointer = buffer.host_pointer();  // shared without a copy; `buffer` stays NULL
      prepared.uses_other_device = true;
    } else {
      return launch_error(device, function, where + ": the buffer belongs to " + owner.info().id +
                                                ", not to " + device.info().id +
                                                " (only host-memory devices share buffers)");
    }
  }

  // A buffer a kernel writes may be bound to one param only (kernel_ir.h):
  // passes reorder and merge accesses of different params freely.
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_buffer()) continue;
    for (std::size_t j = i + 1; j < args.size(); ++j) {
      if (!args[j].is_buffer()) continue;
      const bool written = params[i]->code == KILN_PARAM_GLOBAL_MUT || params[j]->code == KILN_PARAM_GLOBAL_MUT;
      const bool same = (prepared.args[i].buffer != nullptr && prepared.args[i].buffer == prepared.args[j].buffer) ||
                        (prepared.args[i].host_pointer != nullptr &&
                         prepared.args[i].host_pointer == prepared.args[j].host_pointer);
      if (written && same)
        return launch_error(device, function, "arguments " + std::to_string(i) + " and " + std::to_string(j) +
                                                  " are the same buffer and the kernel writes it: a written "
                                                  "(global_mut) buffer may be bound to one param only");
    }
  }

  // Accesses that depend on VARIABLE params or on buffers of unknown length
  // are proved here, with this launch's values, before the plugin runs them.
  if (const auto& checks = LaunchAccess::bounds_checks(program); !checks.empty()) {
    std::vector<std::uint64_t> scalars(args.size()), elements(args.size());
    for (std::size_t slot = 0; slot < args.size(); ++slot) {
      const unsigned bytes = kiln::sdk::dtype_bytes(params[slot]->dtype);
      if (params[slot]->code == KILN_PARAM_VARIABLE) scalars[slot] = prepared.args[slot].scalar_bits;
      else if (bytes != 0) elements[slot] = prepared.args[slot].bytes / bytes;
    }
    if (Result<void> proved = passes::check_launch_bounds(ir::Kernel::from_wire(ops), checks, scalars, elements);
        !proved.ok()) {
      Error e = std::move(proved).error();
      return launch_error(device, function, e.message, e.op);
    }
  }

  try {
    prepared.grid = kiln::sdk::compute_grid(ops, prepared.args);
  } catch (const kiln::sdk::PluginError& e) {
    return launch_error(device, function, std::string("launch grid: ") + e.what(), e.failed_op());
  }
  const DeviceInfo& info = device.info();
  std::uint64_t threads = 1;
  for (int axis = 0; axis < 3; ++axis) {
    const std::string axis_name = "axis " + std::to_string(axis);
    if (info.max_grid_dims[axis] != 0 && prepared.grid.groups[axis] > info.max_grid_dims[axis])
      return launch_error(device, function, "launch grid: " + std::to_string(prepared.grid.groups[axis]) +
                                                " work-groups on " + axis_name + ", the device allows " +
                                                std::to_string(info.max_grid_dims[axis]));
    if (info.max_local_dims[axis] != 0 && prepared.grid.local[axis] > info.max_local_dims[axis])
      return launch_error(device, function, "launch grid: " + std::to_string(prepared.grid.local[axis]) +
                                                " threads per group on " + axis_name + ", the device allows " +
                                                std::to_string(info.max_local_dims[axis]));
    threads *= prepared.grid.local[axis];
  }
  if (info.max_local_threads != 0 && threads > info.max_local_threads)
    return launch_error(device, function, "launch grid: " + std::to_string(threads) +
                                              " threads per group, the device allows " +
                                              std::to_string(info.max_local_threads));
  return prepared;
}

kiln_launch_args launch_args(const DeviceState& device, const Program& program, const PreparedLaunch& prepared) {
  kiln_launch_args args{};
  args.struct_size = KILN_LAUNCH_ARGS_STRUCT_SIZE;
  args.device = device.handle();
  args.program = LaunchAccess::handle(program);
  args.args = prepared.args.data();
  args.n_args = prepared.args.size();
  for (int axis = 0; axis < 3; ++axis) {
    args.groups[axis] = prepared.grid.groups[axis];
    args.local[axis] = prepared.grid.local[axis];
  }
  return args;
}

}  // namespace

Result<Event> Device::launch(const Program& program, std::span<const LaunchArg> args) const {
  if (state_->api().launch == nullptr) return state_->missing("launch");
  KILN_TRY_ASSIGN(PreparedLaunch prepared, prepare(*state_, program, args, "launch"));
  kiln_launch_args call = launch_args(*state_, program, prepared);
  {
    std::lock_guard lock(state_->queue_mutex());
    if (kiln_error* err = state_->api().launch(&call)) return state_->error(err, "launch");
    if (call.event != nullptr) state_->mark_pending();
  }
  Event event(state_, call.event);
  if (prepared.uses_other_device) {
    // The other device's Buffer can be freed without waiting for this
    // device's queue, so the launch must be over before we return.
    KILN_TRY(event.wait());
  }
  return event;
}

Result<Timing> Device::timed_launch(const Program& program, std::span<const LaunchArg> args,
                                    const TimedLaunchOptions& options) const {
  if (state_->api().launch_timed == nullptr) return state_->missing("launch_timed");
  if (options.repeats == 0) return launch_error(*state_, "launch_timed", "repeats must be at least 1");
  KILN_TRY_ASSIGN(PreparedLaunch prepared, prepare(*state_, program, args, "launch_timed"));
  Timing timing;
  timing.samples_ns.assign(options.repeats, 0);
  kiln_timed_launch_args call{};
  call.struct_size = KILN_TIMED_LAUNCH_ARGS_STRUCT_SIZE;
  const kiln_launch_args launch = launch_args(*state_, program, prepared);
  call.launch = sdk::launch_args_1_0(launch);  // for plugins of minor 0
  call.launch_args = &launch;
  call.warmups = options.warmups;
  call.repeats = options.repeats;
  call.flags = options.flags;
  call.abort_ns = options.abort_ns;
  call.timeout_ns = options.timeout_ns;
  call.samples_ns = timing.samples_ns.data();
  {
    std::lock_guard lock(state_->queue_mutex());
    if (kiln_error* err = state_->api().launch_timed(&call)) return state_->error(err, "launch_timed");
  }
  if (call.runs == 0 || call.runs > options.repeats) {
    Error e = make_error(ErrorCode::Internal, state_->info().id + ": the plugin reported " + std::to_string(call.runs) +
                                                  " timed runs for " + std::to_string(options.repeats) + " requested");
    e.plugin = state_->plugin();
    e.function = "launch_timed";
    return e;
  }
  timing.min_ns = call.min_ns;
  timing.median_ns = call.median_ns;
  timing.runs = call.runs;
  timing.aborted = call.aborted != 0;
  timing.timer = static_cast<TimerKind>(call.timer);
  timing.samples_ns.resize(call.runs);
  return timing;
}

}  // namespace kiln
