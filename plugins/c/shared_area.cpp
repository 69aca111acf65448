#include "shared_area.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace kiln::cplugin {

int memfd(const char* name) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) sdk::fail(KILN_STATUS_INTERNAL, std::string("c: isolated launch: memfd_create: ") + std::strerror(errno));
  return fd;
}

namespace {

using Area = SharedArea::Area;

void release(Area& area) {
  if (area.data != nullptr) ::munmap(area.data, area.bytes);
  if (area.fd >= 0) ::close(area.fd);
  area = Area{};
}

Area make_area(std::uint64_t bytes) {
  Area area;
  area.fd = memfd("kiln-c-buffers");
  if (::ftruncate(area.fd, static_cast<off_t>(bytes)) != 0) {
    const int error = errno;
    release(area);
    sdk::fail(KILN_STATUS_OUT_OF_MEMORY, "c: isolated launch: cannot make " + std::to_string(bytes) +
                                             " bytes of shared memory: " + std::strerror(error));
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, area.fd, 0);
  if (p == MAP_FAILED) {
    const int error = errno;
    release(area);
    sdk::fail(KILN_STATUS_OUT_OF_MEMORY, std::string("c: isolated launch: mmap: ") + std::strerror(error));
  }
  area.data = static_cast<char*>(p);
  area.bytes = bytes;
  return area;
}

}  // namespace

SharedArea::~SharedArea() { release(kept_); }

SharedArea::Lease::~Lease() {
  if (!lock_.owns_lock()) release(area_);
}

SharedArea::Lease::Lease(Lease&& other) noexcept : lock_(std::move(other.lock_)), area_(other.area_) {
  other.area_ = Area{};
}

SharedArea::Lease SharedArea::lease(std::uint64_t bytes) {
  Lease lease;
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) {  // another launch holds the kept area
    lease.area_ = make_area(bytes);
    return lease;
  }
  // Sized in 2 MiB steps, so that slightly larger launches reuse it too;
  // made again when too small, or more than four times what a launch needs
  // (a large tuning's area is not kept through the small ones after it).
  constexpr std::uint64_t kStep = std::uint64_t{2} << 20;
  const std::uint64_t wanted = (bytes + kStep - 1) / kStep * kStep;
  if (kept_.bytes < bytes || kept_.bytes / 4 > wanted) {
    release(kept_);  // first: the old pages may be what the new ones need
    kept_ = make_area(wanted);
  }
  lease.lock_ = std::move(lock);
  lease.area_ = kept_;
  return lease;
}

}  // namespace kiln::cplugin
