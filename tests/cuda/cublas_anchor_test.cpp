// The cuBLAS anchor of `kiln bench` (tools/anchors/cublas_gemm.hpp): on a
// machine with a driver and a device it times a matrix product in each
// dtype it offers; without one it says why, and the test skips visibly.
#include <gtest/gtest.h>

#include "cublas_gemm.hpp"

namespace {

using kiln::anchors::GemmType;
using kiln::anchors::time_cublas_gemm;

TEST(CublasAnchor, TimesAMatmulInEachDtypeOrSaysWhyNot) {
  const kiln::anchors::GemmTiming f32 = time_cublas_gemm("", 0, 512, 256, 384, GemmType::F32, 3);
  if (!f32.error.empty()) {
    EXPECT_EQ(f32.gflops, 0);
    GTEST_SKIP() << "no cuBLAS anchor here: " << f32.error;
  }
  EXPECT_GT(f32.gflops, 0);
  EXPECT_FALSE(f32.library.empty());
  for (GemmType type : {GemmType::F16, GemmType::BF16}) {
    const kiln::anchors::GemmTiming t = time_cublas_gemm("", 0, 512, 256, 384, type, 3);
    EXPECT_EQ(t.error, "");
    EXPECT_GT(t.gflops, 0);
  }
  // A device that is not there: an error, not a crash.
  const kiln::anchors::GemmTiming none = time_cublas_gemm("", 4096, 64, 64, 64, GemmType::F32, 1);
  EXPECT_NE(none.error, "");
  EXPECT_EQ(none.gflops, 0);
}

}  // namespace
