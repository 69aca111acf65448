// Internal: a fixed set of worker threads running jobs in submission order.
// The autotuner compiles candidates on it while it measures others.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace kiln::tune::detail {

class ThreadPool {
 public:
  explicit ThreadPool(unsigned threads);
  // Drops the jobs not started (their futures report a broken promise) and
  // waits for the running ones.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  template <class Job>
  std::future<std::invoke_result_t<Job>> submit(Job job) {
    using R = std::invoke_result_t<Job>;
    auto task = std::make_shared<std::packaged_task<R()>>(std::move(job));
    std::future<R> result = task->get_future();
    {
      std::lock_guard lock(mutex_);
      queue_.emplace_back([task] { (*task)(); });
    }
    wake_.notify_one();
    return result;
  }

  // Drops the jobs not started yet.
  void cancel_pending();

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kiln::tune::detail
