// tools/kiln/bench_anchors.hpp - what `kiln bench` divides a kernel's rate
// by: a yardstick measured in the same run, on the same machine, so that a
// ratio survives a loaded machine better than a bare figure does.
//
//   memory kernels on host-memory devices (c, cblas): the two-thread triad
//   matmul on host-memory devices: OpenBLAS sgemm through cblas:0, same shape;
//   bf16 matmul there: OpenBLAS's cblas_sbgemm from a library built by
//   scripts/build-sbgemm-anchor.sh (tools/anchors/sbgemm.hpp), or a row
//   saying it is missing and how to build it
//   memory kernels on other devices: a device-to-device Buffer::copy_from,
//     the fastest of the devices on the same PCI bus id (one GPU reached
//     through CUDA, OpenCL and Vulkan has one memory bandwidth)
//   matmul on cuda devices: cuBLAS (sgemm, or gemmEx for f16/bf16 with f32
//   accumulation), loaded at run time (tools/anchors/cublas_gemm.hpp)
//   matmul on other GPU devices: none yet (no vendor BLAS is loaded)
#pragma once

#include <kiln/kernels/library.hpp>
#include <kiln/runtime.hpp>

#include <map>
#include <memory>
#include <set>
#include <string>

namespace kiln::anchors {
class Triad;
}

namespace kiln::cli {

// An anchor's rate (GB/s or GFLOP/s, the kernel's unit), or why there is none.
struct AnchorRate {
  std::string name;           // "triad", "cblas:0 sgemm", "copy"; empty when absent
  double rate = 0;
  std::string absent_reason;  // set when there is no anchor
};

class BenchAnchors {
 public:
  // quick: smaller anchor arrays (the CTest run); repeats: best of this many.
  BenchAnchors(const kiln::Runtime& runtime, bool quick, unsigned repeats);
  ~BenchAnchors();

  // The anchor of `kernel` (is_matmul: GFLOP/s, else GB/s) on `device`;
  // measured on first use and kept for the run.
  AnchorRate anchor_for(const kiln::Device& device, const kiln::kernels::StandardKernel& kernel, bool is_matmul);

 private:
  AnchorRate triad();
  AnchorRate cblas_matmul(const kiln::kernels::StandardKernel& kernel);
  AnchorRate sbgemm_matmul(const kiln::kernels::StandardKernel& kernel);
  AnchorRate cublas_matmul(const kiln::Device& device, const kiln::kernels::StandardKernel& kernel);
  AnchorRate device_copy(const kiln::Device& device);
  AnchorRate api_copy(const kiln::Device& device);  // this device's own copy_from

  const kiln::Runtime& runtime_;
  bool quick_;
  unsigned repeats_;
  std::unique_ptr<kiln::anchors::Triad> triad_;
  double triad_gbps_ = 0;
  std::map<std::string, AnchorRate> measured_;  // by device id or matmul shape
  std::set<std::string> copy_peers_printed_;    // PCI bus ids whose copies were compared
};

}  // namespace kiln::cli
