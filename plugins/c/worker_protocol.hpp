// The isolated launch's wire format, shared by the C plugin
// (isolated_launch.cpp) and its worker (worker/launch_worker_main.cpp).
// Both are built together and installed side by side, so the layout is
// private to them: no versioning beyond the magic number.
//
//   fd 0: Request, then the object's path (path_bytes), then n_slots Slots
//   fd 3: the buffers, one shared memfd (buffer_bytes; each at its offset)
//   fd 4: the worker writes a Response, then `runs` samples (uint64 ns)
#pragma once

#include <cstdint>

namespace kiln::cplugin::worker {

inline constexpr std::uint32_t kRequestMagic = 0x6b6c6e31;   // "kln1"
inline constexpr std::uint32_t kResponseMagic = 0x6b6c6e32;  // "kln2"
inline constexpr int kBuffersFd = 3;
inline constexpr int kResponseFd = 4;

struct Request {
  std::uint32_t magic = kRequestMagic;
  std::uint32_t n_slots = 0;
  std::uint32_t warmups = 0;
  std::uint32_t repeats = 1;
  std::uint64_t abort_ns = 0;
  std::uint32_t flush = 0;  // KILN_TIMED_FLUSH_CACHE
  std::uint32_t path_bytes = 0;
  std::int64_t groups[3] = {1, 1, 1};
  std::uint64_t buffer_bytes = 0;
};

struct Slot {
  std::uint32_t is_buffer = 0;
  std::uint32_t reserved = 0;
  std::uint64_t offset_or_bits = 0;  // buffer: offset in the shared memory; scalar: its value bits
  std::uint64_t bytes = 0;           // buffer: its size
};

struct Response {
  std::uint32_t magic = kResponseMagic;
  std::uint32_t runs = 0;
  std::uint32_t aborted = 0;
  std::uint32_t reserved = 0;
  std::uint64_t min_ns = 0;
  std::uint64_t median_ns = 0;
};

}  // namespace kiln::cplugin::worker
