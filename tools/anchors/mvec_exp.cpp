#include "mvec_exp.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <dlfcn.h>

namespace kiln::anchors {

MvecExp::MvecExp(std::size_t elements_per_thread, unsigned threads, unsigned passes_per_run)
    : passes_(std::max(1u, passes_per_run)) {
  if (!__builtin_cpu_supports("avx512f")) {
    unavailable_ = "the CPU has no AVX-512F (_ZGVeN16v_expf needs it)";
    return;
  }
  // Never closed: the handle lives as long as the process, as glibc's libm does.
  void* library = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
  expf16_ = library != nullptr ? dlsym(library, "_ZGVeN16v_expf") : nullptr;
  if (expf16_ == nullptr) {
    unavailable_ = library == nullptr ? "libmvec.so.1 does not load: " + std::string(dlerror())
                                      : "libmvec.so.1 has no _ZGVeN16v_expf";
    return;
  }
  const std::size_t n = (elements_per_thread + 15) / 16 * 16;
  for (unsigned t = 0; t < std::max(1u, threads); ++t) {
    std::vector<float>& in = in_.emplace_back(n);
    // exp-chain's inputs lie in [-1, 1]; a spread of values, no special cases.
    for (std::size_t i = 0; i < n; ++i) in[i] = -1.0f + 2.0f * static_cast<float>(i % 1021) / 1021.0f;
    out_.emplace_back(n);
  }
  run_seconds();  // first touch, and the library's first call
}

double MvecExp::elements() const {
  return in_.empty() ? 0.0 : static_cast<double>(in_.size() * in_[0].size()) * static_cast<double>(passes_);
}

double MvecExp::run_seconds() {
  if (!unavailable_.empty()) return 0;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < in_.size(); ++t)
    pool.emplace_back([this, t] {
      for (unsigned p = 0; p < passes_; ++p) detail::mvec_expf_pass(expf16_, in_[t].data(), out_[t].data(), in_[t].size());
    });
  for (std::thread& thread : pool) thread.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double MvecExp::best_gbps(unsigned repeats) {
  double best = 0;
  for (unsigned r = 0; r < std::max(1u, repeats); ++r) best = std::max(best, bytes() / run_seconds() * 1e-9);
  return best;
}

}  // namespace kiln::anchors
