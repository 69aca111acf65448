// kiln/kernels/host_bytes.hpp - zero-filled host memory for kernel buffers,
// cheap to create at gigabyte sizes.
//
// A std::vector<std::byte> of 1 GiB writes every byte before anyone uses
// it, and each 4 KiB page it touches first costs a page fault: on the
// development and GPU machines (virtual machines) that first touch took
// 0.6-0.7 s per GiB, against 0.13 s with 2 MiB pages, and a tuning of a
// 2^28-element kernel touched several such buffers (docs/autotune.md, "The
// budget"). HostBytes takes large blocks straight from mmap, whose pages
// the kernel hands out already zeroed, and asks for transparent huge pages
// on them (where the system allows it; elsewhere they stay 4 KiB pages).
#pragma once

#include <cstddef>
#include <span>

namespace kiln::kernels {

class HostBytes {
 public:
  HostBytes() = default;
  // `size` zero bytes.
  explicit HostBytes(std::size_t size);
  HostBytes(const HostBytes& other);
  HostBytes& operator=(const HostBytes& other);
  HostBytes(HostBytes&& other) noexcept;
  HostBytes& operator=(HostBytes&& other) noexcept;
  ~HostBytes();

  std::size_t size() const { return size_; }
  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  operator std::span<std::byte>() { return {data_, size_}; }
  operator std::span<const std::byte>() const { return {data_, size_}; }

 private:
  void release() noexcept;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;  // from mmap (else from calloc)
};

}  // namespace kiln::kernels
