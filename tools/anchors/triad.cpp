#include "triad.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace kiln::anchors {

Triad::Triad(std::size_t elements, unsigned threads)
    : a_(elements), b_(elements, 1.0f), c_(elements, 2.0f), threads_(std::max(1u, threads)) {
  run();  // first touch
}

void Triad::run() {
  const std::size_t n = a_.size();
  float* a = a_.data();
  const float* b = b_.data();
  const float* c = c_.data();
  auto part = [=](std::size_t begin, std::size_t end) {
    const float s = 3.0f;
    for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads_; ++t) pool.emplace_back(part, n * t / threads_, n * (t + 1) / threads_);
  for (std::thread& thread : pool) thread.join();
}

double Triad::run_seconds() {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Triad::best_gbps(unsigned repeats) {
  double best = 0;
  for (unsigned r = 0; r < std::max(1u, repeats); ++r) best = std::max(best, bytes() / run_seconds() * 1e-9);
  return best;
}

}  // namespace kiln::anchors
