// The shared memory an isolated launch copies its buffers into for the
// worker, kept from one launch to the next.
//
// Why: a fresh memfd per launch made the kernel allocate and zero every page
// of it on the copy in and free them all when the launch ended. Tuning
// softmax-rows 4096 x 16384 f32 on c:0 (512 MiB of buffers, a 20 ms kernel)
// took about 0.9 s a candidate, so a 10 s budget measured 7 of its 24
// candidates, once each (docs/autotune.md, "Faulty candidates"). Kept,
// the pages are allocated once; a launch copies into memory already mapped.
//
// One launch uses the area at a time; a launch that finds it in use takes a
// fresh memfd as before (launches from several threads at once still run).
// The area is as large as the launches' buffers (in 2 MiB steps): grown
// for a larger launch, made again smaller for one that needs under a
// quarter of it, and freed when the plugin shuts down (State owns it): as
// much shared memory as the launch's buffers hold on the host already.
#pragma once

#include <cstdint>
#include <mutex>

namespace kiln::cplugin {

// A memfd named `name`, closed on exec (the worker gets it by dup2); throws
// (sdk::fail) INTERNAL when none can be made.
int memfd(const char* name);

class SharedArea {
 public:
  SharedArea() = default;
  ~SharedArea();
  SharedArea(const SharedArea&) = delete;
  SharedArea& operator=(const SharedArea&) = delete;

  // Shared memory: a memfd and its mapping (none: fd -1).
  struct Area {
    int fd = -1;
    char* data = nullptr;
    std::uint64_t bytes = 0;
  };

  // Memory of at least `bytes` (> 0) for one launch: the kept area when it
  // is free, else a fresh one that goes with the lease. Throws (sdk::fail)
  // OUT_OF_MEMORY or INTERNAL when the memory cannot be made.
  class Lease {
   public:
    int fd() const { return area_.fd; }
    char* data() const { return area_.data; }
    ~Lease();
    Lease(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;

   private:
    friend class SharedArea;
    Lease() = default;
    std::unique_lock<std::mutex> lock_;  // held: the kept area; empty: an own area
    Area area_;
  };
  Lease lease(std::uint64_t bytes);

 private:
  std::mutex mutex_;
  Area kept_;
};

}  // namespace kiln::cplugin
