// f16/bf16 conversions in the CUDA dialect: single PTX cvt instructions
// (cvt.f32.f16, cvt.rn.f16.f32; cvt.rn.bf16.f32 on sm_80+ only, older archs
// keep the software form), where the C, OpenCL and GLSL dialects keep the
// shared software conversions. Needs NVRTC, not a GPU; that the instructions
// give kiln/sdk/half.hpp's bits for every non-NaN value is checked on a
// device: CudaDevice.HalfConversionsMatchTheInterpreterBitForBit.
#include <gtest/gtest.h>

#include "cuda_source.hpp"
#include "nvrtc_compiler.hpp"
#include "support/wire_builder.hpp"

#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <string>

using namespace kiln::cuda;
using kiln::test::WireBuilder;

namespace {

// o16[g] = f16(x[g] + y[g]) (f16 arithmetic), ob[g] = bf16(f32(x[g]) * f32(y[g])):
// every conversion, in both directions.
std::vector<kiln_op> half_kernel() {
  WireBuilder w;
  const auto x = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_F16, 0, 256);
  const auto y = w.param(KILN_PARAM_GLOBAL, KILN_DTYPE_BF16, 1, 256);
  const auto o16 = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F16, 2, 256);
  const auto ob = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_BF16, 3, 256);
  const auto g = w.group_index(0, w.const_i64(256));
  const auto a = w.load(KILN_DTYPE_F16, x, g);
  const auto b = w.load(KILN_DTYPE_BF16, y, g);
  w.store(KILN_DTYPE_F16, o16, g, w.binary(KILN_BINARY_ADD, KILN_DTYPE_F16, a, w.cast(KILN_DTYPE_F16, b)));
  const auto p = w.binary(KILN_BINARY_MUL, KILN_DTYPE_F32, w.cast(KILN_DTYPE_F32, a), w.cast(KILN_DTYPE_F32, b));
  w.store(KILN_DTYPE_BF16, ob, g, w.cast(KILN_DTYPE_BF16, p));
  return w.ops;
}

bool has(const std::string& text, std::string_view what) { return text.find(what) != std::string::npos; }

// The software forms' signatures (c_prelude.cpp).
constexpr std::string_view kSoftwareF32ToF16 = "0x477ff000u";        // the overflow bound
constexpr std::string_view kSoftwareF16ToF32 = "5.9604644775390625e-8f";  // 2^-24, subnormals
constexpr std::string_view kSoftwareF32ToBf16 = "0x7fffu + ((x >> 16) & 1u)";

constexpr std::string_view kSm80 = "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n";

}  // namespace

TEST(CudaHalf, ConversionsAreCvtInstructions) {
  const std::string s = generate_cuda_source(half_kernel());
  EXPECT_TRUE(has(s, R"(asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h));)")) << s;
  EXPECT_TRUE(has(s, R"(asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(v));)")) << s;
  EXPECT_FALSE(has(s, kSoftwareF32ToF16)) << s;
  EXPECT_FALSE(has(s, kSoftwareF16ToF32)) << s;
  // bf16 stores: the instruction on sm_80+, the software form before.
  const std::size_t at = s.find(kSm80), other = s.find("#else\n", at), end = s.find("#endif\n", other);
  ASSERT_NE(at, std::string::npos) << s;
  ASSERT_NE(other, std::string::npos) << s;
  ASSERT_NE(end, std::string::npos) << s;
  const std::string hardware = s.substr(at, other - at), software = s.substr(other, end - other);
  EXPECT_TRUE(has(hardware, R"(asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(v));)")) << s;
  EXPECT_TRUE(has(software, kSoftwareF32ToBf16)) << s;
  EXPECT_EQ(s.find("kiln_f32_to_bf16(float v)"), s.find("kiln_f32_to_bf16(float v)", at)) << s;
  // Each conversion is defined once (the #if / #else pair aside).
  for (std::string_view name : {"kiln_f16_to_f32(unsigned", "kiln_f32_to_f16(float", "kiln_bf16_to_f32(unsigned"})
    EXPECT_EQ(s.find(name), s.rfind(name)) << name << "\n" << s;
}

TEST(CudaHalf, Bf16CvtOnlyFromSm80AndThePtxHoldsTheInstructions) {
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  const std::string source = generate_cuda_source(half_kernel());
  ASSERT_FALSE(nvrtc.archs.empty());
  std::vector<int> archs = {80, 90};
  if (nvrtc.archs.front() < 80) archs.push_back(nvrtc.archs.front());  // sm_75 for NVRTC 12/13
  for (int arch : archs) {
    SCOPED_TRACE(arch);
    try {
      const DeviceCode cubin = compile_cuda(nvrtc, source, arch / 10, arch % 10, options);
      EXPECT_TRUE(cubin.is_cubin);
      NvrtcOptions ptx_options = options;
      ptx_options.force_ptx = true;
      const std::string ptx(compile_cuda(nvrtc, source, arch / 10, arch % 10, ptx_options).image.data());
      EXPECT_TRUE(has(ptx, "cvt.f32.f16")) << ptx;
      EXPECT_TRUE(has(ptx, "cvt.rn.f16.f32")) << ptx;
      EXPECT_EQ(has(ptx, "cvt.rn.bf16.f32"), arch >= 80) << ptx;
    } catch (const kiln::sdk::PluginError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(CudaHalf, OtherDialectsKeepTheSoftwareConversions) {
  for (const kiln::sdk::Dialect* d :
       {&kiln::sdk::c_dialect(), &kiln::sdk::opencl_dialect(), &kiln::sdk::glsl_dialect()}) {
    SCOPED_TRACE(d->name);
    const std::string s = kiln::sdk::emit_c_family(half_kernel(), *d).source;
    // The C dialect's own are F16C's where the compiler targets it, the
    // software form otherwise (kiln_c_half_tests checks both, bit for bit).
    const bool c = d == &kiln::sdk::c_dialect();
    EXPECT_EQ(d->half_conversion != nullptr, c);
    EXPECT_EQ(has(s, "#if defined(__F16C__)\n#include <immintrin.h>\nstatic inline float kiln_f16_to_f32"), c) << s;
    EXPECT_TRUE(has(s, kSoftwareF32ToF16)) << s;
    EXPECT_TRUE(has(s, kSoftwareF16ToF32)) << s;
    EXPECT_TRUE(has(s, kSoftwareF32ToBf16)) << s;
    EXPECT_FALSE(has(s, "cvt.")) << s;
    EXPECT_FALSE(has(s, "__CUDA_ARCH__")) << s;
  }
}
