#include "subprocess.hpp"
#include "owned_fd.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>

extern char** environ;

namespace kiln::cplugin {

namespace {

// Above every fd a child is handed at (0..4).
constexpr int kHighFd = 16;

// Tries after a spawn that failed with EFAULT (run_process says why).
constexpr int kSpawnRetries = 3;

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

class SpawnAttributes {
 public:
  SpawnAttributes() { posix_spawnattr_init(&attributes_); }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attributes_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  posix_spawnattr_t* get() { return &attributes_; }

 private:
  posix_spawnattr_t attributes_;
};

// Waits for `pid` until `deadline` (none when `forever`); false at the deadline.
bool wait_for(pid_t pid, bool forever, std::chrono::steady_clock::time_point deadline, int& status) {
  const int pidfd = forever ? -1 : static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  bool ended = true;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, forever ? 0 : WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      if (pidfd >= 0) ::close(pidfd);
      sdk::fail(KILN_STATUS_INTERNAL, std::string("waitpid: ") + std::strerror(errno));
    }
    if (forever || done < 0) continue;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ended = false;
      break;
    }
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      (void)::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min<std::int64_t>(left.count(), 5)));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return ended;
}

}  // namespace

std::string ProcessResult::how_it_ended() const {
  if (timed_out) return "no answer within the time allowed (option 'compile_timeout'); killed";
  if (signal != 0) {
    const char* abbrev = ::sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) + (abbrev != nullptr ? " (SIG" + std::string(abbrev) + ")" : "");
  }
  return "exit " + std::to_string(exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::vector<ChildFd>& fds) {
  if (argv.empty()) sdk::fail(KILN_STATUS_INTERNAL, "run_process: empty argv");
  OwnedFd out(::memfd_create("kiln-c-stdout", MFD_CLOEXEC));
  OwnedFd err(::memfd_create("kiln-c-stderr", MFD_CLOEXEC));
  if (out.get() < 0 || err.get() < 0)
    sdk::fail(KILN_STATUS_INTERNAL, std::string("memfd_create: ") + std::strerror(errno));

  FileActions actions;
  // Every source first moves above every target, so that no dup2 of the
  // file actions overwrites a source a later one still needs.
  std::vector<ChildFd> moves = fds;
  moves.push_back({out.get(), 1});
  moves.push_back({err.get(), 2});
  std::vector<std::unique_ptr<OwnedFd>> high;
  bool own_stdin = false;
  for (ChildFd& move : moves) {
    high.push_back(std::make_unique<OwnedFd>(::fcntl(move.parent, F_DUPFD_CLOEXEC, kHighFd)));
    if (high.back()->get() < 0) sdk::fail(KILN_STATUS_INTERNAL, std::string("fcntl(F_DUPFD): ") + std::strerror(errno));
    move.parent = high.back()->get();
    own_stdin = own_stdin || move.child == 0;
  }
  if (!own_stdin) posix_spawn_file_actions_addopen(actions.get(), 0, "/dev/null", O_RDONLY, 0);
  for (const ChildFd& move : moves) posix_spawn_file_actions_adddup2(actions.get(), move.parent, move.child);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  SpawnAttributes attributes;
  posix_spawnattr_setflags(attributes.get(), POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(attributes.get(), 0);

  // Every pointer handed to posix_spawn below is valid until it returns, so
  // EFAULT ("Bad address") is the kernel failing to read them, not a fault
  // of ours: seen once in CI, spawning the compiler while other threads of
  // the process ran launches and a tuning (a 2-core VM under load). The
  // same call succeeds when made again; a few tries are made, each logged.
  pid_t pid = 0;
  int rc = 0;
  for (int retry = 0;; ++retry) {
    rc = ::posix_spawn(&pid, argv[0].c_str(), actions.get(), attributes.get(), args.data(), environ);
    if (rc != EFAULT || retry == kSpawnRetries) break;
    sdk::Host::log(KILN_LOG_WARNING, "c: starting " + argv[0] + " failed (Bad address); trying again (" +
                                         std::to_string(retry + 1) + " of " + std::to_string(kSpawnRetries) + ")");
  }
  if (rc != 0) sdk::fail(KILN_STATUS_INTERNAL, "cannot run " + argv[0] + ": " + std::strerror(rc));

  int status = 0;
  ProcessResult result;
  if (!wait_for(pid, timeout.count() <= 0, std::chrono::steady_clock::now() + timeout, status)) {
    result.timed_out = true;
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_code = 128 + (result.signal = WTERMSIG(status));
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
