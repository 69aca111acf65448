// kiln/conformance/report.hpp - what a conformance run found: one result per
// case and device, why nothing was tested when nothing was, and the exit
// code `kiln conformance` derives from it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::conformance {

enum class CaseStatus {
  passed,
  failed,
  unsupported,  // not run: the device lacks what the case needs, or the plugin answered UNSUPPORTED
};
std::string_view status_name(CaseStatus status);  // "passed", "failed", "unsupported"

struct CaseResult {
  std::string name;                    // "device info", "suite: ops f32", ...
  std::optional<std::uint32_t> device;  // nullopt: a check of the plugin itself (its table)
  CaseStatus status = CaseStatus::passed;
  std::string reason;                   // failed / unsupported: why; passed: empty
};

struct DeviceReport {
  std::uint32_t index = 0;
  std::string name;
  std::string kind;  // "cpu", "gpu", ...
  std::uint32_t max_local_threads = 0;
};

// How far the run got. Anything but `tested` means no device case ran.
enum class Outcome {
  tested,
  not_loaded,   // dlopen failed, no kiln_plugin_query, it returned NULL, or another ABI major
  bad_table,    // the plugin table is unusable (a failed "plugin table" case says why)
  init_failed,  // init returned an error other than UNAVAILABLE (bad options, ...)
  unavailable,  // init returned UNAVAILABLE: no driver, no device
  no_devices,   // init succeeded with device_count 0
};
std::string_view outcome_name(Outcome outcome);  // "tested", "not-loaded", ...

struct Totals {
  std::size_t passed = 0, failed = 0, unsupported = 0;
};

// Exit codes of `kiln conformance` (documented in its --help and in
// docs/plugin-guide.md).
inline constexpr int kExitPassed = 0;      // every case that ran passed, and at least one did
inline constexpr int kExitFailed = 1;      // a case failed
inline constexpr int kExitNotTested = 2;   // usage error, not loaded, unavailable, or 0 cases passed

struct Report {
  std::string library;  // the path given
  std::string plugin;   // the table's name, version and description (empty when not loaded)
  std::string version;
  std::string description;
  Outcome outcome = Outcome::tested;
  std::string reason;  // outcome != tested: why; tested with 0 passed: said by summary()
  std::vector<DeviceReport> devices;
  std::vector<CaseResult> cases;

  Totals totals() const;
  // kExitFailed when a case failed, else kExitNotTested when nothing was
  // tested (outcome, or 0 passed), else kExitPassed.
  int exit_code() const;
  // One line: "passed 12, failed 0, unsupported 3" plus, when the exit code
  // is not 0, what it means ("nothing tested: ...").
  std::string summary() const;
};

}  // namespace kiln::conformance
