// Completion events and pinned staging memory for host copies.
//
// Why staging: an asynchronous copy from pageable memory may read that
// memory after the call returns (zyx freed such memory under a running
// copy). Here copy_to_device copies the caller's bytes into a pinned block
// before it returns, and copy_to_host writes the caller's memory only from a
// stream callback that runs before the copy's event completes. Pinned blocks
// are reused once the event recorded after their copy has completed.
#pragma once

#include "driver_api.hpp"

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace kiln::cuda {

// A CUevent recorded on a stream; destroyed with its last owner. Makes its
// context current itself, so it may be waited for from any thread.
class EventRecord {
 public:
  // Records a new event on `stream` of `context` (current on this thread).
  // `timing`: usable with cuEventElapsedTime.
  EventRecord(CUcontext context, CUstream stream, bool timing);
  ~EventRecord();
  EventRecord(const EventRecord&) = delete;
  EventRecord& operator=(const EventRecord&) = delete;

  CUevent get() const { return event_; }
  bool completed() const;  // cuEventQuery; errors count as completed (they surface in wait)
  void wait() const;       // cuEventSynchronize; throws with the operation's error

 private:
  CUcontext context_;
  CUevent event_ = nullptr;
};
using SharedEvent = std::shared_ptr<EventRecord>;

struct PinnedBlock {
  void* ptr = nullptr;
  std::size_t bytes = 0;
};

// Pinned host blocks of the device's context. Used under that context.
class StagingPool {
 public:
  // Largest piece of one copy; bigger copies go through several blocks, so
  // a DMA overlaps the host memcpy of the next piece.
  static constexpr std::size_t kChunkBytes = std::size_t{32} << 20;

  StagingPool() = default;
  ~StagingPool();  // waits for pending copies, frees every block
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // A block of at least `bytes` (<= kChunkBytes), reused when one is free.
  PinnedBlock acquire(std::size_t bytes);
  // Gives `block` back once `done` has completed.
  void release_after(PinnedBlock block, SharedEvent done);

 private:
  void reclaim_locked();
  static void free_block(PinnedBlock block);

  // Pending blocks beyond this are waited for before more are allocated;
  // idle blocks beyond kMaxIdleBytes are freed.
  static constexpr std::size_t kMaxPendingBytes = std::size_t{512} << 20;
  static constexpr std::size_t kMaxIdleBytes = std::size_t{128} << 20;

  std::mutex mutex_;
  std::vector<PinnedBlock> idle_;
  std::deque<std::pair<PinnedBlock, SharedEvent>> pending_;
  std::size_t pending_bytes_ = 0;
};

}  // namespace kiln::cuda
