// The pipe between `kiln conformance` and the child process that runs the
// kit (conformance_command.cpp): the child writes a JSON line as each case
// starts and ends; the parent reads them, so when the child dies (a plugin
// that crashes) or hangs it still knows every case that ended and the one
// that was running.
#pragma once

#include <kiln/conformance/report.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {

// The child's side: one record a call, written whole before returning.
class CaseStream {
 public:
  explicit CaseStream(int fd) : fd_(fd) {}
  void started(const std::string& name, std::uint32_t device) const;
  void ended(const conformance::CaseResult& c) const;

 private:
  void send(const std::string& line) const;
  int fd_;
};

// The parent's side: what the child streamed before it ended, died or was
// stopped.
struct StreamedCases {
  std::vector<conformance::CaseResult> ended;
  std::optional<conformance::CaseResult> running;  // started, not ended
  bool timed_out = false;                          // no record for the case timeout
};

// Reads the child's records until it closes the pipe, or until no record
// has come for `timeout_s` seconds (0: no limit).
StreamedCases read_cases(int fd, double timeout_s);

}  // namespace kiln::cli
