// Running the system compiler: a child process with stdin from /dev/null and
// stdout/stderr captured (memfd), waited for. No shell is involved, so paths
// and flags need no quoting.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace kiln::cplugin {

struct ProcessResult {
  int exit_code = -1;      // 128 + signal number when the child was killed
  int signal = 0;          // the signal that killed it, 0 if none
  bool timed_out = false;  // killed (SIGKILL, with its process group) at the timeout
  std::string output;      // stdout then stderr

  // "exit 1", "killed by signal 11 (SIGSEGV)", "no answer within 300 s; killed"
  std::string how_it_ended() const;
};

// argv[0] is an absolute path. The child runs in a process group of its own
// so that a timeout (0: none) also kills what it started (cc's cc1, as, ld).
// Throws PluginError(INTERNAL) when the child cannot be started at all.
// `fds` are handed to the child as (this process's fd, the child's fd); a
// child fd 0 among them replaces /dev/null as stdin.
struct ChildFd {
  int parent = -1;
  int child = -1;
};
ProcessResult run_process(const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                          const std::vector<ChildFd>& fds = {});

// The absolute path of `program`: itself when it holds a '/', else the first
// executable match on $PATH; "" when there is none.
std::string find_program(const std::string& program);

}  // namespace kiln::cplugin
