// tools/anchors/sbgemm.hpp - OpenBLAS's cblas_sbgemm (bf16 inputs, f32
// accumulation and output), the anchor `kiln bench` sets kiln's bf16 matmul
// on host devices against. Debian 12's OpenBLAS is built without it, so it
// comes from a library scripts/build-sbgemm-anchor.sh builds from Debian's
// source, loaded at run time (RTLD_DEEPBIND: its symbols never mix with the
// cblas plugin's OpenBLAS in the same process).
#pragma once

#include <cstdint>
#include <string>

namespace kiln::anchors {

struct SbgemmTiming {
  double gflops = 0;    // best of the timed runs; 0 when absent
  std::string library;  // the file that ran it
  std::string error;    // why there is no figure (and how to get one)
};

// The library's path: $KILN_SBGEMM_LIBRARY, else the script's output,
// $HOME/.cache/kiln/sbgemm-anchor/libopenblas.so.
std::string sbgemm_library_path();

// C[m,n] = A[m,k] B[k,n], row-major, on `threads` OpenBLAS threads, inputs
// random bf16 in [-1, 1); one warm-up then the best of `repeats` runs.
SbgemmTiming time_sbgemm(std::int64_t m, std::int64_t n, std::int64_t k, unsigned threads, unsigned repeats);

}  // namespace kiln::anchors
