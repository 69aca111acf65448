// NVRTC alone: loading, targets, CUBIN/PTX output and the error log. Needs
// the toolkit's NVRTC, not a GPU.
#include <gtest/gtest.h>

#include "nvrtc_compiler.hpp"

#include <kiln/sdk/plugin_support.hpp>

#include <cstring>

using namespace kiln::cuda;

namespace {

const NvrtcApi& nvrtc() {
  static const NvrtcApi api = load_nvrtc(nvrtc_candidates(""));
  return api;
}

NvrtcOptions default_options() {
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  return options;
}

constexpr const char* kHalfKernel = R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void kiln_kernel(const __half* a, const __nv_bfloat16* b, float* c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  c[i] = __half2float(a[i]) + __bfloat162float(b[i]);
}
)";

}  // namespace

TEST(Nvrtc, LoadsAndKnowsHopper) {
  EXPECT_GE(nvrtc().major, 12);
  EXPECT_FALSE(nvrtc().library.empty());
  EXPECT_EQ(nvrtc_target(nvrtc(), 9, 0, false), "sm_90");
}

TEST(Nvrtc, CompilesCubinForSm90WithHalfTypes) {
  const DeviceCode code = compile_cuda(nvrtc(), kHalfKernel, 9, 0, default_options());
  EXPECT_TRUE(code.is_cubin);
  EXPECT_EQ(code.target, "sm_90");
  ASSERT_GT(code.image.size(), 4u);
  EXPECT_EQ(std::memcmp(code.image.data(), "\x7f" "ELF", 4), 0);
}

TEST(Nvrtc, ForcedPtxIsTextForTheComputeArch) {
  NvrtcOptions options = default_options();
  options.force_ptx = true;
  const DeviceCode code = compile_cuda(nvrtc(), kHalfKernel, 9, 0, options);
  EXPECT_FALSE(code.is_cubin);
  EXPECT_EQ(code.target, "compute_90");
  const std::string ptx(code.image.data());
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
  EXPECT_NE(ptx.find(".entry kiln_kernel"), std::string::npos);
}

TEST(Nvrtc, ADeviceNewerThanNvrtcGetsPtxOfTheNewestOlderArch) {
  // Compute capability 99.9 is unknown to any NVRTC: fall back to PTX + JIT.
  const std::string target = nvrtc_target(nvrtc(), 99, 9, false);
  EXPECT_TRUE(target.starts_with("compute_")) << target;
  EXPECT_FALSE(nvrtc().archs.empty());
  EXPECT_EQ(target, "compute_" + std::to_string(nvrtc().archs.back()));
}

TEST(Nvrtc, ACompileErrorCarriesTheLogAndFlags) {
  try {
    compile_cuda(nvrtc(), "extern \"C\" __global__ void kiln_kernel() { undeclared_thing = 1; }", 9, 0,
                 default_options());
    FAIL() << "compiled";
  } catch (const kiln::sdk::PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_COMPILE_FAILED);
    const std::string what = e.what();
    EXPECT_NE(what.find("undeclared_thing"), std::string::npos) << what;
    EXPECT_NE(what.find("--gpu-architecture=sm_90"), std::string::npos) << what;
  }
}

TEST(Nvrtc, MissingLibrariesAreListed) {
  const std::vector<std::string> candidates = {"/nowhere/libnvrtc.so.13", "libnvrtc-missing.so"};
  try {
    load_nvrtc(candidates);
    FAIL() << "loaded";
  } catch (const kiln::sdk::PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_UNAVAILABLE);
    EXPECT_NE(std::string(e.what()).find("/nowhere/libnvrtc.so.13"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("libnvrtc-missing.so"), std::string::npos);
  }
}
