// core/capi/compile.hpp - the one place the C API turns a kernel into a
// program: heuristic (the always-on pipeline), tuned from the database, or
// tuned now. When kiln::CompileOptions and Device::compile(kernel, options)
// land, compile_kernel switches to them here and nowhere else.
#pragma once

#include "capi/handles.hpp"

#include <kiln/tune/tuner.hpp>

#include <optional>
#include <string>

namespace kiln::capi {

enum class CompileMode {
  Heuristic,     // the always-on passes for the device
  FromDatabase,  // the database's entry, else Heuristic's program
  TuneNow,       // the database's entry, else tune within the budget and store
  Frozen,        // the kernel as given, verified
};

struct CompileRequest {
  CompileMode mode = CompileMode::Heuristic;
  std::string tuning_db;           // empty: the config's
  // TuneNow only:
  double budget_s = 0;             // <= 0: the config's
  std::optional<std::uint64_t> seed;
  bool force = false;
  std::vector<double> scalars;
  std::string kernel_name;
};

// A program handle for `kernel` on `device`, as the request says.
Result<kiln_program_t*> compile_kernel(const kiln_device_t& device, const ir::Kernel& kernel,
                                       const CompileRequest& request);

}  // namespace kiln::capi
