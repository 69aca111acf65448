// kiln/conformance/kit.hpp - the plugin conformance kit: loads one plugin
// library through the ABI alone (no config, no libkiln loader), checks its
// table, inits it, and on every device runs the ABI cases (device info,
// buffers, half floats, integer wrap, vectors) and the shared kernel suite
// (kernel_suite.hpp), each compared with the SDK's reference interpreter.
//
// Used by `kiln conformance` (tools/kiln/conformance_command.cpp) and by the
// GoogleTest wrapper tests/plugins/abi_conformance_test.cpp: one set of cases.
#pragma once

#include <kiln/conformance/report.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace kiln::conformance {

struct Options {
  std::string options_json = "{}";  // handed to the plugin's init
  // ECMAScript regex searched in each case name ("device info", "suite: ops
  // f32"); cases it does not match are left out of the report. Empty: all.
  std::string cases;
  // The kernel suite on f32 and i32 only (every kernel shape, not every
  // dtype): for slow compilers (PoCL, lavapipe) in CI.
  bool quick = false;
  unsigned seed = 5;  // of the suite's random inputs
  // Called after each case (progress on slow devices); may be empty.
  std::function<void(const CaseResult&)> on_case;
  // Called before each case of a device runs (its name and device); may be
  // empty. `kiln conformance` runs the kit in a child process and names the
  // case a crash happened in from these.
  std::function<void(const std::string& name, std::uint32_t device)> on_case_start;
};

// Runs every case on every device of the plugin at `library`. Never throws
// for what the plugin does (every problem is a case result or the outcome);
// throws std::regex_error for a bad Options::cases.
Report run_conformance(const std::string& library, const Options& options = {});

}  // namespace kiln::conformance
