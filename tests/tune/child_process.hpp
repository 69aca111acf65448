// A child process for tests: started with arguments, its stdout read line by
// line, waited for or killed.
#pragma once

#include <csignal>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace kiln::test {

class ChildProcess {
 public:
  // `with_stderr`: its stderr goes into the same pipe as its stdout.
  explicit ChildProcess(const std::vector<std::string>& argv, bool with_stderr = false) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      if (with_stderr) dup2(fds[1], STDERR_FILENO);
      close(fds[0]);
      close(fds[1]);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(fds[1]);
    out_ = fdopen(fds[0], "r");
  }
  ~ChildProcess() {
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      wait();
    }
    if (out_ != nullptr) fclose(out_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0 && out_ != nullptr; }

  // The next line of its stdout without the newline; false at end of file.
  bool read_line(std::string& line) {
    line.clear();
    int c;
    while ((c = fgetc(out_)) != EOF) {
      if (c == '\n') return true;
      line.push_back(static_cast<char>(c));
    }
    return !line.empty();
  }

  // Everything left on its stdout.
  std::string read_all() {
    std::string text, line;
    while (read_line(line)) text += line + "\n";
    return text;
  }

  // Its exit status (128 + signal when killed by one).
  int wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    waited_ = true;
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
  }

  void kill_now() { kill(pid_, SIGKILL); }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  bool waited_ = false;
};

}  // namespace kiln::test
