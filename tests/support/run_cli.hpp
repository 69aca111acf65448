// tests/support/run_cli.hpp - runs the real `kiln` executable (the test
// target defines KILN_CLI as its path) and collects what it did.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace kiln::test {

struct CliOutput {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;
  std::string err;
};

// Runs `kiln <args>` through the shell (args are not quoted); stderr goes
// through a file in `scratch`.
inline CliOutput run_cli(const std::filesystem::path& scratch, const std::string& args) {
  const std::string err_file = (scratch / "stderr.txt").string();
  const std::string command = std::string(KILN_CLI) + " " + args + " 2>" + err_file;
  CliOutput result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> chunk{};
  std::size_t n = 0;
  while ((n = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0) result.out.append(chunk.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  result.err.assign(std::istreambuf_iterator<char>(in), {});
  return result;
}

}  // namespace kiln::test
