// mvec_exp.hpp - glibc libmvec's 16-lane expf (_ZGVeN16v_expf, the function
// the C plugin's vectorized exp calls when it targets AVX-512) over buffers
// that stay in each core's L2, on a few threads: the throughput a kernel whose
// limit is exp, not memory, can reach. The anchor of exp-chain at sizes that
// fit in the caches (issue 16).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kiln::anchors {

class MvecExp {
 public:
  // Finds _ZGVeN16v_expf in libmvec.so.1 (dlopen: nothing to link, and a
  // machine without it says so) and checks that the CPU has AVX-512F;
  // allocates and fills each thread's buffers.
  MvecExp(std::size_t elements_per_thread, unsigned threads, unsigned passes_per_run);

  // Empty when the anchor can run; otherwise why not.
  const std::string& unavailable() const { return unavailable_; }

  // `passes_per_run` passes of every thread over its buffer, out = exp(in);
  // the wall-clock seconds.
  double run_seconds();

  // Elements one run converts, and the bytes exp-chain would count for them
  // (4 read and 4 written each): GB/s comparable with a kernel's.
  double elements() const;
  double bytes() const { return 8.0 * elements(); }

  // The best (highest) GB/s of `repeats` runs.
  double best_gbps(unsigned repeats);

 private:
  void* expf16_ = nullptr;  // __m512 (*)(__m512)
  std::string unavailable_;
  std::vector<std::vector<float>> in_, out_;
  unsigned passes_;
};

namespace detail {
// out[i] = expf16(in[i..i+15]) for n a multiple of 16 (mvec_exp_avx512.cpp,
// the one file built with -mavx512f; called only when the CPU has it).
void mvec_expf_pass(void* expf16, const float* in, float* out, std::size_t n);
}  // namespace detail

}  // namespace kiln::anchors
