// launch / launch_timed: the entry point runs synchronously on the calling
// thread (OpenMP spreads the group loops over the configured threads), so
// events are always NULL and a steady clock around the call times it.
#include "c.hpp"

#include <kiln/sdk/launch_args.hpp>
#include <kiln/sdk/handles.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/timing.hpp>

namespace kiln::cplugin {

namespace {

const Program& checked_program(const kiln_launch_args& launch) {
  const Program& program = sdk::checked_program<const Program>(launch.program, "c: launch");
  for (int axis = 0; axis < 3; ++axis)
    if (launch.local[axis] > 1)
      sdk::fail(KILN_STATUS_INVALID_ARGUMENT, "c: launch: local[" + std::to_string(axis) + "] is " +
                                                  std::to_string(launch.local[axis]) + " (max_local_threads is 1)");
  return program;
}

void run(const Program& program, const sdk::HostArguments& arguments) {
  program.entry(arguments.pointers.data(), arguments.groups.data());
}

kiln_error* launch(kiln_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    const Program& program = checked_program(args);
    const sdk::HostArguments arguments = sdk::host_arguments(args, program.params);
    run(program, arguments);
    args.event = nullptr;
    sdk::write_args(raw, args);
  });
}

kiln_error* launch_timed(kiln_timed_launch_args* raw) {
  return sdk::guard([&] {
    auto args = sdk::read_args(raw);
    const kiln_launch_args launch = sdk::timed_launch_of(args);
    const Program& program = checked_program(launch);
    const sdk::HostArguments arguments = sdk::host_arguments(launch, program.params);
    const bool flush = (args.flags & KILN_TIMED_FLUSH_CACHE) != 0;
    if ((args.flags & KILN_TIMED_ISOLATE) != 0 && can_isolate()) {
      sdk::store_timing(args, isolated_timed_launch(program, launch, arguments, args), KILN_TIMER_HOST);
      sdk::write_args(raw, args);
      return;
    }
    const sdk::TimingResult result = sdk::time_runs(args.warmups, args.repeats, args.abort_ns, [&] {
      if (flush) sdk::flush_host_caches(arguments, launch);
      return sdk::steady_ns([&] { run(program, arguments); });
    });
    sdk::store_timing(args, result, KILN_TIMER_HOST);
    sdk::write_args(raw, args);
  });
}

}  // namespace

const sdk::LaunchFunctions kLaunchFunctions = {launch, launch_timed};

}  // namespace kiln::cplugin
