#include "staging.hpp"

#include <algorithm>
#include <bit>

namespace kiln::cuda {

EventRecord::EventRecord(CUcontext context, CUstream stream, bool timing) : context_(context) {
  check_cu(cu().cuEventCreate(&event_, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  const CUresult recorded = cu().cuEventRecord(event_, stream);
  if (recorded != CUDA_SUCCESS) {
    cu().cuEventDestroy(event_);
    check_cu(recorded, "cuEventRecord");
  }
}

EventRecord::~EventRecord() {
  if (event_ == nullptr || cu().cuCtxPushCurrent(context_) != CUDA_SUCCESS) return;
  cu().cuEventDestroy(event_);
  CUcontext popped = nullptr;
  cu().cuCtxPopCurrent(&popped);
}

bool EventRecord::completed() const { return cu().cuEventQuery(event_) != CUDA_ERROR_NOT_READY; }

void EventRecord::wait() const {
  ContextScope scope(context_);
  check_cu(cu().cuEventSynchronize(event_), "cuEventSynchronize", KILN_STATUS_LAUNCH_FAILED);
}

StagingPool::~StagingPool() {
  for (auto& [block, done] : pending_) {
    cu().cuEventSynchronize(done->get());
    free_block(block);
  }
  for (PinnedBlock block : idle_) free_block(block);
}

void StagingPool::free_block(PinnedBlock block) {
  if (block.ptr != nullptr) cu().cuMemFreeHost(block.ptr);
}

void StagingPool::reclaim_locked() {
  // Events complete in stream order, so the oldest pending blocks free first.
  while (!pending_.empty() && pending_.front().second->completed()) {
    pending_bytes_ -= pending_.front().first.bytes;
    idle_.push_back(pending_.front().first);
    pending_.pop_front();
  }
}

PinnedBlock StagingPool::acquire(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  reclaim_locked();
  while (pending_bytes_ > kMaxPendingBytes && !pending_.empty()) {
    pending_.front().second->wait();
    reclaim_locked();
  }
  // The smallest idle block that fits.
  auto best = idle_.end();
  for (auto it = idle_.begin(); it != idle_.end(); ++it)
    if (it->bytes >= bytes && (best == idle_.end() || it->bytes < best->bytes)) best = it;
  if (best != idle_.end()) {
    const PinnedBlock block = *best;
    idle_.erase(best);
    return block;
  }
  // Power-of-two sizes from 64 KiB keep blocks reusable across copy sizes.
  PinnedBlock block;
  block.bytes = std::max<std::size_t>(std::bit_ceil(bytes), std::size_t{64} << 10);
  check_cu(cu().cuMemHostAlloc(&block.ptr, block.bytes, 0), "cuMemHostAlloc(" + std::to_string(block.bytes) + " bytes)",
           KILN_STATUS_OUT_OF_MEMORY);
  return block;
}

void StagingPool::release_after(PinnedBlock block, SharedEvent done) {
  std::lock_guard lock(mutex_);
  pending_.emplace_back(block, std::move(done));
  pending_bytes_ += block.bytes;
  reclaim_locked();
  // Keep the idle set bounded: free the largest blocks first.
  std::size_t idle_bytes = 0;
  for (const PinnedBlock& b : idle_) idle_bytes += b.bytes;
  std::sort(idle_.begin(), idle_.end(), [](const PinnedBlock& a, const PinnedBlock& b) { return a.bytes < b.bytes; });
  while (idle_bytes > kMaxIdleBytes && !idle_.empty()) {
    idle_bytes -= idle_.back().bytes;
    free_block(idle_.back());
    idle_.pop_back();
  }
}

}  // namespace kiln::cuda
