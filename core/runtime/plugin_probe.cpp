#include "plugin_probe.hpp"

#include "install_paths.hpp"
#include "plugin_text.hpp"

#include <kiln/plugin.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace kiln::detail {

namespace fs = std::filesystem;

namespace {

std::mutex g_cache_mutex;
std::map<std::string, ProbeVerdict>& verdict_cache() {
  static auto* cache = new std::map<std::string, ProbeVerdict>;  // leaked: used until exit
  return *cache;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string read_memfd(int fd, std::size_t limit = 1 << 16) {
  std::string out;
  if (fd < 0 || ::lseek(fd, 0, SEEK_SET) < 0) return out;
  char buffer[4096];
  while (out.size() < limit) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

bool write_all(int fd, const std::string& text) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return ::lseek(fd, 0, SEEK_SET) == 0;
}

// The library file's identity: a rebuilt plugin at the same path is probed again.
std::string cache_key(const fs::path& library, const std::string& options_json, std::uint32_t host_minor) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(library, ec);
  const fs::path& path = ec ? library : canonical;
  const auto size = fs::file_size(path, ec);
  const auto mtime = fs::last_write_time(path, ec).time_since_epoch().count();
  return path.string() + '\n' + std::to_string(ec ? 0 : size) + '\n' + std::to_string(ec ? 0 : mtime) + '\n' +
         std::to_string(host_minor) + '\n' + options_json;
}

// "in init", "in device_info of device 2", "while loading the library (dlopen)"
std::string stage_words(const std::string& stage) {
  if (stage.empty() || stage == "dlopen")
    return "while the library was loading (dlopen: a damaged or truncated file, or its static constructors)";
  if (stage == "query") return "in " KILN_PLUGIN_QUERY_SYMBOL;
  if (stage.starts_with("device_info ")) return "in device_info of device " + stage.substr(12);
  return "in " + stage;
}

std::string signal_words(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  const char* description = ::sigdescr_np(sig);
  return "signal " + std::to_string(sig) + (abbrev != nullptr ? " (SIG" + std::string(abbrev) : std::string(" (?")) +
         (description != nullptr ? ": " + std::string(description) + ")" : std::string(")"));
}

// The last non-empty line the plugin wrote to stderr, clipped: often the
// assertion or the abort message that explains a crash.
std::string last_words(const std::string& stderr_text) {
  std::size_t end = stderr_text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  const std::size_t begin = stderr_text.rfind('\n', end);
  std::string line = stderr_text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return "; its last line on stderr: \"" + sanitize_plugin_text(line, TextKind::Line) + "\"";
}

// Waits for `pid` until `deadline`; true when it ended (status filled).
bool wait_until(pid_t pid, std::chrono::steady_clock::time_point deadline, int& status) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      status = 0;
      break;  // not our child any more (a host that reaps every child): nothing to learn
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      if (pidfd >= 0) ::close(pidfd);
      return false;
    }
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      (void)::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min<std::int64_t>(left.count(), 5)));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return true;
}

class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
};

}  // namespace

ProbeSettings probe_settings(std::string& problem) {
  ProbeSettings settings;
  if (const char* raw = std::getenv("KILN_PLUGIN_PROBE"); raw != nullptr && *raw != '\0') {
    const std::string value = raw;
    if (value == "0" || value == "off" || value == "false") settings.enabled = false;
    else if (value != "1" && value != "on" && value != "true")
      problem = "KILN_PLUGIN_PROBE=\"" + value + "\" is not 0/off/false or 1/on/true; the probe stays on";
  }
  if (const char* raw = std::getenv("KILN_PLUGIN_PROBE_TIMEOUT"); raw != nullptr && *raw != '\0') {
    const std::string value = raw;
    double seconds = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(seconds) || seconds <= 0 ||
        seconds > 86400)
      problem = "KILN_PLUGIN_PROBE_TIMEOUT=\"" + value + "\" is not a number of seconds in (0, 86400]; using " +
                std::to_string(settings.timeout.count() / 1000) + " s";
    else
      settings.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000)));
  }
  const fs::path executable = libkiln_path().parent_path() / "kiln" / "kiln-plugin-probe";
  if (::access(executable.c_str(), X_OK) == 0) settings.executable = executable;
  return settings;
}

PluginProbe PluginProbe::start(const ProbeSettings& settings, const fs::path& library, const std::string& options_json,
                               std::uint32_t host_minor, const CompileProbeRequest* compile) {
  PluginProbe probe;
  probe.timeout_ = settings.timeout;
  probe.compile_ = compile != nullptr;
  if (!probe.compile_) probe.cache_key_ = cache_key(library, options_json, host_minor);
  if (!probe.compile_) {
    std::lock_guard lock(g_cache_mutex);
    if (auto it = verdict_cache().find(probe.cache_key_); it != verdict_cache().end()) {
      probe.known_ = it->second;
      return probe;
    }
  }
  // A probe that cannot start says nothing about the plugin: it then loads
  // as without a probe. Not cached, so a later Runtime tries again.
  probe.known_ = ProbeVerdict();
  int options_fd = ::memfd_create("kiln-probe-options", MFD_CLOEXEC);
  int kernel_fd = probe.compile_ ? ::memfd_create("kiln-probe-kernel", MFD_CLOEXEC) : -1;
  probe.report_fd_ = ::memfd_create("kiln-probe-report", MFD_CLOEXEC);
  probe.stderr_fd_ = ::memfd_create("kiln-probe-stderr", MFD_CLOEXEC);
  const bool written =
      options_fd >= 0 && probe.report_fd_ >= 0 && probe.stderr_fd_ >= 0 && write_all(options_fd, options_json) &&
      (!probe.compile_ ||
       (kernel_fd >= 0 && write_all(kernel_fd, std::string(reinterpret_cast<const char*>(compile->ops->data()),
                                                            compile->ops->size() * sizeof(kiln_op)))));
  if (!written) {
    close_fd(options_fd);
    close_fd(kernel_fd);
    return probe;
  }
  // Each source moves above every target first (a host with stdin closed
  // may have a memfd at 0..4), so that no dup2 overwrites a later source.
  int high[4] = {::fcntl(options_fd, F_DUPFD_CLOEXEC, 16), ::fcntl(probe.stderr_fd_, F_DUPFD_CLOEXEC, 16),
                 ::fcntl(probe.report_fd_, F_DUPFD_CLOEXEC, 16),
                 probe.compile_ ? ::fcntl(kernel_fd, F_DUPFD_CLOEXEC, 16) : -1};
  close_fd(options_fd);
  close_fd(kernel_fd);
  struct HighFds {
    int* fds;
    ~HighFds() {
      for (int i = 0; i < 4; ++i) close_fd(fds[i]);
    }
  } high_fds{high};
  if (high[0] < 0 || high[1] < 0 || high[2] < 0 || (probe.compile_ && high[3] < 0)) return probe;
  SpawnSetup setup;
  posix_spawn_file_actions_adddup2(&setup.actions, high[0], 0);
  posix_spawn_file_actions_addopen(&setup.actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&setup.actions, high[1], 2);
  posix_spawn_file_actions_adddup2(&setup.actions, high[2], 3);
  if (probe.compile_) posix_spawn_file_actions_adddup2(&setup.actions, high[3], 4);
  // Its own process group, so that a timeout also kills what the plugin
  // started (compilers, driver helpers); default signal dispositions and an
  // empty mask, whatever the host set for itself.
  sigset_t all;
  sigset_t none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setflags(&setup.attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&setup.attributes, 0);
  posix_spawnattr_setsigdefault(&setup.attributes, &all);
  posix_spawnattr_setsigmask(&setup.attributes, &none);

  const std::string minor = std::to_string(host_minor);
  const std::string index = compile != nullptr ? std::to_string(compile->device_index) : std::string();
  std::vector<char*> argv{const_cast<char*>(settings.executable.c_str()), const_cast<char*>(library.c_str()),
                          const_cast<char*>(minor.c_str())};
  if (probe.compile_) {
    argv.push_back(const_cast<char*>("compile"));
    argv.push_back(const_cast<char*>(index.c_str()));
  }
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, settings.executable.c_str(), &setup.actions, &setup.attributes, argv.data(), environ);
  if (rc != 0) return probe;
  probe.pid_ = pid;
  probe.deadline_ = std::chrono::steady_clock::now() + settings.timeout;
  probe.known_.reset();
  return probe;
}

PluginProbe::PluginProbe(PluginProbe&& other) noexcept
    : cache_key_(std::move(other.cache_key_)),
      compile_(other.compile_),
      known_(std::move(other.known_)),
      pid_(std::exchange(other.pid_, -1)),
      report_fd_(std::exchange(other.report_fd_, -1)),
      stderr_fd_(std::exchange(other.stderr_fd_, -1)),
      deadline_(other.deadline_),
      timeout_(other.timeout_) {}

PluginProbe::~PluginProbe() {
  if (pid_ > 0) {  // never asked for its verdict: do not leave it running
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  close_fd(report_fd_);
  close_fd(stderr_fd_);
}

ProbeVerdict PluginProbe::verdict() {
  if (!known_) {
    known_ = finish();
    if (!cache_key_.empty()) {
      std::lock_guard lock(g_cache_mutex);
      verdict_cache()[cache_key_] = *known_;
    }
  }
  return *known_;
}

ProbeVerdict PluginProbe::finish() {
  int status = 0;
  const bool ended = wait_until(pid_, deadline_, status);
  if (!ended) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  const std::string report = read_memfd(report_fd_);
  const std::string stderr_text = read_memfd(stderr_fd_);
  close_fd(report_fd_);
  close_fd(stderr_fd_);

  std::string stage;
  bool finished = false;
  std::size_t at = 0;
  while (at < report.size()) {
    const std::size_t end = report.find('\n', at);
    if (end == std::string::npos) break;  // a line cut by the crash
    const std::string line = report.substr(at, end - at);
    if (line.starts_with("stage ")) stage = line.substr(6);
    else if (line == "done" || line.starts_with("stop ")) finished = true;
    at = end + 1;
  }
  const std::string seconds = std::to_string(timeout_.count() / 1000) +
                              (timeout_.count() % 1000 != 0 ? "." + std::to_string(timeout_.count() % 1000 / 100) : "");
  const std::string where = compile_ ? "the compile probe (isolate_compile), a separate process"
                                     : "the plugin probe, a separate process";
  const std::string spared = compile_ ? "this one was spared" : "not loaded into this one";
  if (!ended)
    return "hung " + stage_words(stage) + ": no answer within " + seconds + " s (seen in " + where +
           ", which was killed; KILN_PLUGIN_PROBE_TIMEOUT sets the limit)";
  if (WIFSIGNALED(status))
    return "crashed " + stage_words(stage) + ": killed by " + signal_words(WTERMSIG(status)) + " (seen in " + where +
           "; " + spared + ")" + last_words(stderr_text);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (finished && code == 0) return std::nullopt;
  if (report.empty()) return std::nullopt;  // the probe itself did not run (exec failed): no verdict
  return "exited the process with status " + std::to_string(code) + " " + stage_words(stage) + " (seen in " + where +
         "; " + spared + ")" + last_words(stderr_text);
}

}  // namespace kiln::detail
