#include "shared_area.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace kiln::cplugin {

namespace {

struct Area {
  int fd = -1;
  char* data = nullptr;
  std::uint64_t bytes = 0;
};

void release(Area area) {
  if (area.data != nullptr) ::munmap(area.data, area.bytes);
  if (area.fd >= 0) ::close(area.fd);
}

Area make_area(std::uint64_t bytes) {
  Area area;
  area.fd = ::memfd_create("kiln-c-buffers", MFD_CLOEXEC);
  if (area.fd < 0) sdk::fail(KILN_STATUS_INTERNAL, std::string("c: isolated launch: memfd_create: ") + std::strerror(errno));
  area.bytes = bytes;
  if (::ftruncate(area.fd, static_cast<off_t>(bytes)) != 0) {
    const int error = errno;
    release(area);
    sdk::fail(KILN_STATUS_OUT_OF_MEMORY, "c: isolated launch: cannot make " + std::to_string(bytes) +
                                             " bytes of shared memory: " + std::strerror(error));
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, area.fd, 0);
  if (p == MAP_FAILED) {
    const int error = errno;
    area.data = nullptr;
    release(area);
    sdk::fail(KILN_STATUS_OUT_OF_MEMORY, std::string("c: isolated launch: mmap: ") + std::strerror(error));
  }
  area.data = static_cast<char*>(p);
  return area;
}

}  // namespace

SharedArea::~SharedArea() { release({fd_, data_, bytes_}); }

SharedArea::Lease::~Lease() {
  if (!lock_.owns_lock()) release({fd_, data_, bytes_});
}

SharedArea::Lease::Lease(Lease&& other) noexcept
    : lock_(std::move(other.lock_)), fd_(other.fd_), data_(other.data_), bytes_(other.bytes_) {
  other.fd_ = -1;
  other.data_ = nullptr;
  other.bytes_ = 0;
}

SharedArea::Lease SharedArea::lease(std::uint64_t bytes) {
  Lease lease;
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) {  // another launch holds the kept area
    const Area own = make_area(bytes);
    lease.fd_ = own.fd;
    lease.data_ = own.data;
    lease.bytes_ = own.bytes;
    return lease;
  }
  // Sized in 2 MiB steps, so that slightly larger launches reuse it too;
  // made again when too small, or more than four times what a launch needs
  // (a large tuning's area is not kept through the small ones after it).
  constexpr std::uint64_t kStep = std::uint64_t{2} << 20;
  const std::uint64_t wanted = (bytes + kStep - 1) / kStep * kStep;
  if (bytes_ < bytes || bytes_ / 4 > wanted) {
    release({fd_, data_, bytes_});  // first: the old pages may be what the new ones need
    fd_ = -1;
    data_ = nullptr;
    bytes_ = 0;
    const Area grown = make_area(wanted);
    fd_ = grown.fd;
    data_ = grown.data;
    bytes_ = grown.bytes;
  }
  lease.lock_ = std::move(lock);
  lease.fd_ = fd_;
  lease.data_ = data_;
  lease.bytes_ = bytes_;
  return lease;
}

}  // namespace kiln::cplugin
