// Running the system compiler: a child process with stdin from /dev/null and
// stdout/stderr captured (memfd), waited for. No shell is involved, so paths
// and flags need no quoting.
#pragma once

#include <string>
#include <vector>

namespace kiln::cplugin {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number when the child was killed
  std::string output;  // stdout then stderr
};

// argv[0] is an absolute path. Throws PluginError(INTERNAL) when the child
// cannot be started at all.
ProcessResult run_process(const std::vector<std::string>& argv);

// The absolute path of `program`: itself when it holds a '/', else the first
// executable match on $PATH; "" when there is none.
std::string find_program(const std::string& program);

}  // namespace kiln::cplugin
