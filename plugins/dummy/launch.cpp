// Launches on the dummy: the reference interpreter runs the kernel on the
// buffers' host memory. A timed launch runs it once and reports simulated
// times from the timing model (timing_model.hpp), warm-ups and repeats
// included, each sample with its own deterministic noise.
#include <algorithm>
#include <cmath>

#include "dummy.hpp"
#include "kiln/sdk/host_memory.hpp"
#include "kiln/sdk/timing.hpp"
#include "timing_model.hpp"

namespace kiln::dummy {

namespace {

struct Ran {
  Program* program;
  sdk::ExecStats stats;
};

Ran run_launch(const kiln_launch_args& args) {
  Device& device = device_of(args.device);
  if (args.program == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch: program is NULL");
  Program& program = *reinterpret_cast<Program*>(args.program);
  if (program.device != &device) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch: the program was compiled for another device");
  if (args.n_args != 0 && args.args == nullptr) sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch: args is NULL");
  std::vector<kiln_arg> bound(args.args, args.args + args.n_args);
  for (kiln_arg& arg : bound)
    if (arg.kind == KILN_ARG_BUFFER && arg.host_pointer == nullptr && arg.buffer != nullptr) {
      // The host sets host_pointer for HOST_MEMORY devices; accept our own buffer handle too.
      arg.host_pointer = sdk::host_buffer_data(arg.buffer);
      arg.bytes = std::min(arg.bytes, sdk::host_buffer_size(arg.buffer));
    }
  const kiln_device_info& info = device.config.info;
  sdk::LaunchGrid grid;
  for (std::size_t axis = 0; axis < 3; ++axis) {
    if (args.groups[axis] > info.max_grid_dims[axis])
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "launch: " + std::to_string(args.groups[axis]) + " groups on axis " +
                                                  std::to_string(axis) + " exceed max_grid_dims " +
                                                  std::to_string(info.max_grid_dims[axis]));
    grid.groups[axis] = args.groups[axis];
    grid.local[axis] = args.local[axis];
  }
  sdk::RunOptions options;
  options.warp_size = info.warp_size;
  options.sector_bytes = device.config.model.sector_bytes;
  options.max_ops = state().max_ops;
  return {&program, program.interpreted.run(bound, grid, options)};
}


kiln_error* launch(kiln_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    run_launch(args);
    args.event = nullptr;  // done
    sdk::write_args(raw, args);
  });
}

kiln_error* launch_timed(kiln_timed_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    const Ran ran = run_launch(sdk::timed_launch_of(args));
    const Device& device = *ran.program->device;
    const double base_ns = model_time(ran.stats, device.config).total_ns;
    const PluginState& plugin = state();
    std::uint64_t run = ran.program->simulated_runs.fetch_add(std::uint64_t{args.warmups} + args.repeats);
    const sdk::TimingResult result = sdk::time_runs(args.warmups, args.repeats, args.abort_ns, [&] {
      const double ns = base_ns * noise_factor(plugin.noise, plugin.seed, ran.program->kernel_hash, run++);
      return static_cast<std::uint64_t>(std::max(1.0, std::round(ns)));
    });
    sdk::store_timing(args, result, KILN_TIMER_MODEL);
    sdk::write_args(raw, args);
  });
}

}  // namespace

const sdk::LaunchFunctions kLaunchFunctions = {launch, launch_timed};

}  // namespace kiln::dummy
