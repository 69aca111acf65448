// kiln_program_launch / kiln_program_launch_timed: C launch arguments to
// kiln::LaunchArg, then the device's launch.
#include "capi/handles.hpp"

#include <kiln/runtime/launch.hpp>

#include <algorithm>
#include <cstring>

using kiln::capi::guard;
using kiln::capi::make_status;
using kiln::capi::null_argument;

namespace {

// The same bound as `kiln run --repeats`: a typo must not run for hours.
constexpr uint32_t kMaxRuns = 10000;

kiln_status_t* to_launch_args(const char* function, const kiln_launch_arg_t* args, size_t n_args,
                              std::vector<kiln::LaunchArg>& out) {
  if (args == nullptr && n_args > 0) return null_argument(function, "args");
  out.reserve(n_args);
  for (size_t slot = 0; slot < n_args; ++slot) {
    const kiln_launch_arg_t& a = args[slot];
    if (a.buffer != nullptr) {
      out.push_back(kiln::LaunchArg::buffer(a.buffer->buffer));
      continue;
    }
    if (a.dtype == KILN_DTYPE_INVALID || a.dtype >= KILN_DTYPE_COUNT)
      return make_status(KILN_CODE_INVALID_ARGUMENT, std::string(function) + ": argument " + std::to_string(slot) +
                                                         " has no buffer and dtype " + std::to_string(a.dtype) +
                                                         " is not a kiln_dtype (a scalar needs its dtype)");
    out.push_back(kiln::LaunchArg::scalar(static_cast<kiln::ir::DType>(a.dtype), a.bits));
  }
  return nullptr;
}

}  // namespace

extern "C" {

kiln_status_t* kiln_program_launch(const kiln_program_t* program, const kiln_launch_arg_t* args, size_t n_args) {
  constexpr const char* f = "kiln_program_launch";
  return guard(f, [&]() -> kiln_status_t* {
    if (program == nullptr) return null_argument(f, "program");
    std::vector<kiln::LaunchArg> launch_args;
    if (kiln_status_t* s = to_launch_args(f, args, n_args, launch_args)) return s;
    kiln::Result<kiln::Event> done = program->device.launch(program->program, launch_args);
    if (!done) return make_status(done.error());
    return kiln::capi::status_of(done->wait());
  });
}

kiln_status_t* kiln_program_launch_timed(const kiln_program_t* program, const kiln_launch_arg_t* args, size_t n_args,
                                         uint32_t warmups, uint32_t repeats, kiln_timing_t* timing) {
  constexpr const char* f = "kiln_program_launch_timed";
  return guard(f, [&]() -> kiln_status_t* {
    if (program == nullptr) return null_argument(f, "program");
    if (kiln_status_t* s = kiln::capi::check_struct(f, timing, timing ? timing->struct_size : 0,
                                                    KILN_STRUCT_SIZE(kiln_timing_t, median_ns)))
      return s;
    if (repeats == 0 || repeats > kMaxRuns || warmups > kMaxRuns)
      return make_status(KILN_CODE_INVALID_ARGUMENT, std::string(f) + ": repeats must be 1.." +
                                                         std::to_string(kMaxRuns) + " and warmups 0.." +
                                                         std::to_string(kMaxRuns) + " (got repeats " +
                                                         std::to_string(repeats) + ", warmups " +
                                                         std::to_string(warmups) + ")");
    std::vector<kiln::LaunchArg> launch_args;
    if (kiln_status_t* s = to_launch_args(f, args, n_args, launch_args)) return s;
    kiln::TimedLaunchOptions options;
    options.warmups = warmups;
    options.repeats = repeats;
    kiln::Result<kiln::Timing> measured = program->device.timed_launch(program->program, launch_args, options);
    if (!measured) return make_status(measured.error());
    kiln_timing_t full{};
    full.struct_size = timing->struct_size;
    full.min_ns = measured->min_ns;
    full.median_ns = measured->median_ns;
    full.runs = measured->runs;
    full.timer = static_cast<uint32_t>(measured->timer);
    std::memcpy(timing, &full, std::min(timing->struct_size, sizeof full));
    return nullptr;
  });
}

}  // extern "C"
