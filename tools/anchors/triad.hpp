// triad.hpp - STREAM's triad, a[i] = b[i] + s * c[i] over floats on a few
// threads: this machine's memory bandwidth as a program can use it, the
// anchor of the memory-bound kernels on CPU devices.
#pragma once

#include <cstddef>
#include <vector>

namespace kiln::anchors {

class Triad {
 public:
  // The arrays are allocated and touched once here (first touch), so the
  // timed runs measure bandwidth, not page faults.
  Triad(std::size_t elements, unsigned threads);

  // One pass over the arrays; its wall-clock seconds.
  double run_seconds();

  // Bytes one pass moves: 12 per element (two reads, one write;
  // write-allocate traffic not counted, as STREAM does).
  double bytes() const { return 12.0 * static_cast<double>(a_.size()); }

  // The best (highest) GB/s of `repeats` passes.
  double best_gbps(unsigned repeats);

 private:
  void run();
  std::vector<float> a_, b_, c_;
  unsigned threads_;
};

}  // namespace kiln::anchors
