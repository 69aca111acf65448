// Report: totals, the exit code convention, the one-line summary.
#include <kiln/conformance/report.hpp>

namespace kiln::conformance {

std::string_view status_name(CaseStatus status) {
  switch (status) {
    case CaseStatus::passed: return "passed";
    case CaseStatus::failed: return "failed";
    case CaseStatus::unsupported: return "unsupported";
  }
  return "?";
}

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::tested: return "tested";
    case Outcome::not_loaded: return "not-loaded";
    case Outcome::bad_table: return "bad-table";
    case Outcome::init_failed: return "init-failed";
    case Outcome::unavailable: return "unavailable";
    case Outcome::no_devices: return "no-devices";
  }
  return "?";
}

Totals Report::totals() const {
  Totals t;
  for (const CaseResult& c : cases) {
    switch (c.status) {
      case CaseStatus::passed: ++t.passed; break;
      case CaseStatus::failed: ++t.failed; break;
      case CaseStatus::unsupported: ++t.unsupported; break;
    }
  }
  return t;
}

int Report::exit_code() const {
  const Totals t = totals();
  if (t.failed > 0) return kExitFailed;
  if (outcome != Outcome::tested || t.passed == 0) return kExitNotTested;
  return kExitPassed;
}

std::string Report::summary() const {
  const Totals t = totals();
  std::string line = "passed " + std::to_string(t.passed) + ", failed " + std::to_string(t.failed) + ", unsupported " +
                     std::to_string(t.unsupported);
  if (t.failed > 0) return line + ": FAILED";
  if (outcome != Outcome::tested) return line + ": nothing tested, " + std::string(outcome_name(outcome)) + ": " + reason;
  if (t.passed == 0)
    return line + ": nothing tested: no case passed" + (cases.empty() ? " (no case ran)" : " (every case was unsupported)");
  return line + ": ok";
}

}  // namespace kiln::conformance
