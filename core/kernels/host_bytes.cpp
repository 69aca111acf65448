#include "kiln/kernels/host_bytes.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace kiln::kernels {

namespace {

// Below this, calloc (malloc's own pools are cheaper than a mapping each).
constexpr std::size_t kMappedBytes = std::size_t{4} << 20;
// Transparent huge pages come in 2 MiB on x86-64; a mapping rounded up to
// whole ones lets the kernel use them for all of it.
constexpr std::size_t kHugePage = std::size_t{2} << 20;

}  // namespace

HostBytes::HostBytes(std::size_t size) : size_(size) {
  if (size == 0) return;
  if (size >= kMappedBytes) {
    const std::size_t length = (size + kHugePage - 1) / kHugePage * kHugePage;
    void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      // Advice only: where THP is off, the pages stay 4 KiB and nothing fails.
      (void)madvise(p, length, MADV_HUGEPAGE);
      data_ = static_cast<std::byte*>(p);
      mapped_ = true;
      return;
    }
  }
  data_ = static_cast<std::byte*>(std::calloc(size, 1));
  if (data_ == nullptr) throw std::bad_alloc();
}

HostBytes::HostBytes(const HostBytes& other) : HostBytes(other.size_) {
  if (size_ != 0) std::memcpy(data_, other.data_, size_);
}

HostBytes& HostBytes::operator=(const HostBytes& other) {
  if (this != &other) {
    HostBytes copy(other);
    *this = std::move(copy);
  }
  return *this;
}

HostBytes::HostBytes(HostBytes&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, false)) {}

HostBytes& HostBytes::operator=(HostBytes&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, false);
  }
  return *this;
}

HostBytes::~HostBytes() { release(); }

void HostBytes::release() noexcept {
  if (data_ == nullptr) return;
  if (mapped_) munmap(data_, (size_ + kHugePage - 1) / kHugePage * kHugePage);
  else std::free(data_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace kiln::kernels
