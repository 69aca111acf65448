// tools/anchors/cublas_gemm.hpp - cuBLAS's matrix product on a CUDA device,
// the anchor `kiln bench` sets kiln's matmul on cuda devices against. The
// driver (libcuda.so.1) and cuBLAS are loaded at run time, as the CUDA
// plugin loads the driver: the kiln binary links neither, and where either
// is missing the anchor is absent with the reason.
#pragma once

#include <cstdint>
#include <string>

namespace kiln::anchors {

enum class GemmType { F32, F16, BF16 };  // inputs and output; f32 accumulation

struct GemmTiming {
  double gflops = 0;    // best of the timed runs; 0 when absent
  std::string library;  // the cuBLAS library file that ran it
  std::string error;    // why there is no figure
};

// C[m,n] = A[m,k] B[k,n] (row-major, as kiln's matmul) on the CUDA device
// whose PCI bus id is `pci_bus_id` (else ordinal `ordinal`), its own buffers
// (inputs filled with 1.0), one warm-up then `repeats` runs each timed with
// CUDA events. f32 is exact f32 (cuBLAS's default math mode: no TF32).
GemmTiming time_cublas_gemm(const std::string& pci_bus_id, int ordinal, std::int64_t m, std::int64_t n,
                            std::int64_t k, GemmType type, unsigned repeats);

}  // namespace kiln::anchors
