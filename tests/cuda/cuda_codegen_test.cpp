// Emitted CUDA C++ compiles with NVRTC for sm_90 (the H200) for a suite of
// kernels covering every op kind, every op on every dtype (f32, f16, bf16,
// f64, integers, bool), casts, vectors, LOCAL storage with barriers and
// REGISTER storage. Needs NVRTC, not a GPU.
#include <gtest/gtest.h>

#include "cuda_source.hpp"
#include "nvrtc_compiler.hpp"
#include "support/kernel_suite.hpp"

#include <kiln/passes/device_presets.hpp>
#include <kiln/sdk/c_emitter.hpp>
#include "kiln/ir/text.hpp"
#include "kiln/passes/bounds.hpp"
#include <kiln/sdk/plugin_support.hpp>

#include <set>

using namespace kiln::cuda;

namespace {

kiln_device_info cuda_capabilities() {
  kiln_device_info info = kiln::test::full_capabilities(
      [](unsigned dt) { return kiln::sdk::c_family_dtype_ops(kiln::sdk::cuda_dialect(), dt); },
      kiln::sdk::c_family_vector_widths(kiln::sdk::cuda_dialect()));
  kiln::sdk::set_unaligned_vector_loads(info);  // as set_cuda_caps claims: the suite's loads at any index
  return info;
}

}  // namespace

TEST(CudaCodegen, TheDialectOffersEveryDtypeAndVectors) {
  const kiln_device_info info = cuda_capabilities();
  for (unsigned dt = KILN_DTYPE_BF16; dt < KILN_DTYPE_COUNT; ++dt) EXPECT_NE(info.dtype_ops[dt], 0u) << dt;
  EXPECT_TRUE(info.vector_widths & (1u << 4));
}

// What the plugin claims follows the compute capability (set_cuda_caps):
// mma.sync, cp.async and ldmatrix from sm_80, wgmma on sm_90 only, warp
// shuffles with 32-thread warps; preset:h200 claims what an sm_90 device does.
TEST(CudaCodegen, TheClaimsFollowTheComputeCapability) {
  const auto claims = [](int major, int minor, std::uint32_t warp) {
    kiln_device_info info{};
    kiln::sdk::set_cuda_caps(info, major, minor, warp);
    return info;
  };
  const auto has_kind = [](const kiln_device_info& info, unsigned kind, unsigned dt) {
    return (info.op_kind_dtypes[kind] & KILN_DTYPE_BIT(dt)) != 0;
  };
  const kiln_device_info sm75 = claims(7, 5, 32), sm80 = claims(8, 0, 32), sm90 = claims(9, 0, 32), sm100 = claims(10, 0, 32);
  EXPECT_FALSE(has_kind(sm75, KILN_OP_MMA, KILN_DTYPE_F32));
  EXPECT_FALSE(has_kind(sm75, KILN_OP_COPY_ASYNC, KILN_DTYPE_F16));
  EXPECT_TRUE(has_kind(sm75, KILN_OP_SUBGROUP_REDUCE, KILN_DTYPE_F32));
  for (const kiln_device_info* info : {&sm80, &sm90, &sm100}) {
    EXPECT_TRUE(has_kind(*info, KILN_OP_MMA, KILN_DTYPE_F32));
    EXPECT_TRUE(has_kind(*info, KILN_OP_COPY_ASYNC, KILN_DTYPE_F16));
    EXPECT_TRUE(has_kind(*info, KILN_OP_LOAD_MATRIX, KILN_DTYPE_F16));
  }
  EXPECT_FALSE(has_kind(sm80, KILN_OP_WGMMA, KILN_DTYPE_F16));
  EXPECT_TRUE(has_kind(sm90, KILN_OP_WGMMA, KILN_DTYPE_F16));
  EXPECT_FALSE(has_kind(sm100, KILN_OP_WGMMA, KILN_DTYPE_F16));
  EXPECT_FALSE(has_kind(claims(9, 0, 64), KILN_OP_SUBGROUP_REDUCE, KILN_DTYPE_F32));

  const kiln::DeviceInfo h200 = kiln::passes::h200_preset();
  EXPECT_EQ(h200.id, "preset:h200");
  const kiln::DeviceInfo sm90_device = kiln::DeviceInfo::from_abi(sm90, "cuda", 0);
  EXPECT_EQ(h200.op_kind_dtypes, sm90_device.op_kind_dtypes);
  EXPECT_EQ(h200.unary_dtypes, sm90_device.unary_dtypes);
  EXPECT_EQ(h200.binary_dtypes, sm90_device.binary_dtypes);
  EXPECT_EQ(h200.features, sm90_device.features);
  EXPECT_EQ(h200.vector_width_mask, sm90_device.vector_width_mask);
}

TEST(CudaCodegen, EmittedSuiteCompilesForSm90) {
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  const auto suite = kiln::test::kernel_suite(cuda_capabilities(), 1000);
  std::set<unsigned> kinds;
  int any_index_loads = 0;
  for (const auto& kernel : suite) {
    SCOPED_TRACE(kernel.name);
    for (const kiln_op& op : kernel.ops) kinds.insert(op.kind);
    try {
      const std::string source = generate_cuda_source(kernel.ops);
      EXPECT_NE(source.find("extern \"C\" __global__ void "), std::string::npos);
      EXPECT_NE(source.find(" kiln_kernel("), std::string::npos);
      const DeviceCode code = compile_cuda(nvrtc, source, 9, 0, options);
      EXPECT_TRUE(code.is_cubin);
      EXPECT_GT(code.image.size(), 1000u);
      if (kernel.name.starts_with("unaligned vector loads")) {  // KILN_FEATURE_UNALIGNED_VECTOR_LOADS: shifted words
        EXPECT_NE(source.find("= kiln_load_any<"), std::string::npos) << source;
        ++any_index_loads;
      }
      if (kernel.name.starts_with("local")) {
        EXPECT_NE(source.find("__shared__"), std::string::npos) << source;
        EXPECT_NE(source.find("__syncthreads();"), std::string::npos) << source;
        EXPECT_NE(source.find("threadIdx.x"), std::string::npos) << source;
        EXPECT_NE(source.find("__launch_bounds__("), std::string::npos) << source;  // the block size ptxas plans for
      }
    } catch (const kiln::sdk::PluginError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_EQ(any_index_loads, 8);  // f32 and f16, 2 to 16 lanes
  for (unsigned kind = KILN_OP_CONST; kind < KILN_OP_KIND_COUNT; ++kind)
    // Warp-level and the copies: cuda_mma_test.cpp, cuda_subgroup_test.cpp, cuda_mma_staged_test.cpp; the
    // warp-group MMA: cuda_wgmma_test.cpp; the bf16 pair dot-accumulate is x86's (C dialect only).
    if (kind != KILN_OP_MMA && kind != KILN_OP_SUBGROUP_REDUCE && kind != KILN_OP_COPY_ASYNC && kind != KILN_OP_COPY_COMMIT &&
        kind != KILN_OP_COPY_WAIT && kind != KILN_OP_LOAD_MATRIX && kind != KILN_OP_BF16_PAIR && kind != KILN_OP_DOT_BF16 &&
        kind < KILN_OP_WGMMA) {
      EXPECT_TRUE(kinds.contains(kind)) << "the suite never uses op kind " << kiln::sdk::op_kind_name(kind);
    }
}

TEST(CudaCodegen, AKernelTheDialectCannotWriteIsUnsupportedNamingTheOp) {
  kiln::test::WireBuilder w;
  auto a = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F32, 0, 64);
  auto b = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 1, 64);
  auto zero = w.const_i64(0);
  auto v = w.load(KILN_DTYPE_F32, a, zero, 5);
  w.store(KILN_DTYPE_F32, b, zero, v, 5);
  try {
    generate_cuda_source(w.ops);
    FAIL() << "emitted";
  } catch (const kiln::sdk::PluginError& e) {
    EXPECT_EQ(e.status(), KILN_STATUS_UNSUPPORTED);
    EXPECT_EQ(e.failed_op(), static_cast<std::int64_t>(v));
  }
}

// The bounds guard (kiln/passes/bounds.hpp) is one IR rewrite in front of
// every plugin: the guarded forms of a data-dependent scatter and gather
// (a STORE under an IF, a LOAD at a clamped index) emit and compile for
// sm_90 like any kernel. Needs NVRTC, not a GPU.
TEST(CudaCodegen, GuardedKernelsCompileForSm90) {
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  const kiln::ir::Kernel scatter = kiln::ir::parse(R"(
%0 = param 0 global i64[64]
%1 = param 1 global f32[64]
%2 = param 2 global_mut f32[64]
%3 = const i64 64
%4 = index group 0 %3
%5 = load i64 %0[%4]
%6 = const i64 100000000
%7 = mul i64 %5, %6
%8 = load f32x4 %1[%7]
store f32x4 %2[%7], %8
)").value();
  kiln::Result<kiln::passes::BoundedKernel> guarded = kiln::passes::apply_bounds_policy(scatter, kiln::passes::BoundsPolicy::Guard);
  ASSERT_TRUE(guarded.ok()) << guarded.error().to_string();
  EXPECT_EQ(guarded->guarded, 2u);
  try {
    const std::string source = generate_cuda_source(guarded->kernel.to_wire());
    EXPECT_NE(source.find("if ("), std::string::npos) << source;
    const DeviceCode code = compile_cuda(nvrtc, source, 9, 0, options);
    EXPECT_TRUE(code.is_cubin);
  } catch (const kiln::sdk::PluginError& e) {
    ADD_FAILURE() << e.what();
  }
}
