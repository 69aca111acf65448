// Internal: work split into shares on threads (run_shares), and the C++
// references of the standard kernels row by row on every hardware thread
// (each_row). Each output row is computed alone, by the same loop in
// the same order, so the values do not depend on how many threads ran:
// `kiln run matmul --size 2048` spent 8.2 s of one core checking 2^33
// products in double.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace kiln::kernels::detail {

// Calls `share(t)` for every t in [0, shares): share 0 on the caller's
// thread, the others on threads of their own. An exception from any share
// is rethrown here once all have ended (the first share's first).
template <class Share>
void run_shares(std::size_t shares, Share&& share) {
  std::vector<std::exception_ptr> failed(shares);
  const auto guarded = [&](std::size_t t) {
    try {
      share(t);
    } catch (...) {
      failed[t] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < shares; ++t) pool.emplace_back(guarded, t);
  if (shares > 0) guarded(0);
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

// Calls `row(r)` for every r in [0, rows), in contiguous shares on up to one
// thread per hardware thread; on the caller's thread alone below about
// 2^20 units of `work_per_row` in all (threads cost more than they save).
template <class Row>
void each_row(std::int64_t rows, double work_per_row, Row&& row) {
  constexpr double kWorkPerThread = 1 << 20;
  const auto wanted = static_cast<std::int64_t>(static_cast<double>(rows) * work_per_row / kWorkPerThread);
  const std::int64_t threads =
      std::clamp<std::int64_t>(wanted, 1, std::min<std::int64_t>(rows, std::max(1u, std::thread::hardware_concurrency())));
  run_shares(static_cast<std::size_t>(std::max<std::int64_t>(threads, 0)), [&](std::size_t t) {
    const auto share = static_cast<std::int64_t>(t);
    for (std::int64_t r = rows * share / threads; r < rows * (share + 1) / threads; ++r) row(r);
  });
}

}  // namespace kiln::kernels::detail
