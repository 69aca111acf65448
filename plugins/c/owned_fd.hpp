// An owned file descriptor, closed when it goes (the compiler subprocess
// and the isolated-launch worker both hand fds to children).
#pragma once

#include <unistd.h>

namespace kiln::cplugin {

class OwnedFd {
 public:
  explicit OwnedFd(int fd) : fd_(fd) {}
  ~OwnedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace kiln::cplugin
