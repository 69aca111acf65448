#include "subprocess.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

extern char** environ;

namespace kiln::cplugin {

namespace {

// An owned file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string read_all(int fd) {
  std::string out;
  if (::lseek(fd, 0, SEEK_SET) < 0) return out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

// posix_spawn file actions, released on every path.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv) {
  if (argv.empty()) sdk::fail(KILN_STATUS_INTERNAL, "run_process: empty argv");
  Fd out(::memfd_create("kiln-c-stdout", MFD_CLOEXEC));
  Fd err(::memfd_create("kiln-c-stderr", MFD_CLOEXEC));
  if (out.get() < 0 || err.get() < 0)
    sdk::fail(KILN_STATUS_INTERNAL, std::string("memfd_create: ") + std::strerror(errno));

  FileActions actions;
  posix_spawn_file_actions_addopen(actions.get(), 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(actions.get(), out.get(), 1);
  posix_spawn_file_actions_adddup2(actions.get(), err.get(), 2);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), actions.get(), nullptr, args.data(), environ);
  if (rc != 0) sdk::fail(KILN_STATUS_INTERNAL, "cannot run " + argv[0] + ": " + std::strerror(rc));

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) sdk::fail(KILN_STATUS_INTERNAL, std::string("waitpid: ") + std::strerror(errno));
  }
  ProcessResult result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  result.output = read_all(out.get()) + read_all(err.get());
  return result;
}

std::string find_program(const std::string& program) {
  namespace fs = std::filesystem;
  if (program.empty()) return "";
  if (program.find('/') != std::string::npos) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(program, ec);
    return !ec && ::access(absolute.c_str(), X_OK) == 0 ? absolute.string() : "";
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / program;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

}  // namespace kiln::cplugin
