// The ABI 1.1 math ops (tanh erf sigmoid rsqrt log1p expm1) in the CUDA
// dialect: every op on f32, f64, f16 and bf16 (the half types computed in
// float), scalars and a 4-lane vector, is emitted with CUDA's math library
// (tanhf, erff, rsqrtf, log1pf, expm1f; sigmoid as a prelude helper) and
// compiles with NVRTC for sm_80 and sm_90. Needs NVRTC, not a GPU; the
// results are checked on a device by the differential tests where one is.
#include <gtest/gtest.h>

#include "cuda_source.hpp"
#include "nvrtc_compiler.hpp"
#include "support/wire_builder.hpp"

#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <string>

using namespace kiln::cuda;
using kiln::test::WireBuilder;

namespace {

constexpr std::uint8_t kOps[] = {KILN_UNARY_TANH,  KILN_UNARY_ERF,   KILN_UNARY_SIGMOID,
                                 KILN_UNARY_RSQRT, KILN_UNARY_LOG1P, KILN_UNARY_EXPM1};

// For each dtype d and op u: out_d[g] = u(x_d[g]) accumulated over the ops,
// and a 4-lane f32 vector of each op.
std::vector<kiln_op> math_kernel() {
  WireBuilder w;
  constexpr std::uint8_t kDtypes[] = {KILN_DTYPE_F32, KILN_DTYPE_F64, KILN_DTYPE_F16, KILN_DTYPE_BF16};
  std::vector<WireBuilder::Id> params;
  std::uint32_t slot = 0;
  for (std::uint8_t dt : kDtypes) {
    params.push_back(w.param(KILN_PARAM_GLOBAL, dt, slot++, 256));
    params.push_back(w.param(KILN_PARAM_GLOBAL_MUT, dt, slot++, 256));
  }
  const auto g = w.group_index(0, w.const_i64(64));
  for (std::size_t d = 0; d < std::size(kDtypes); ++d) {
    const std::uint8_t dt = kDtypes[d];
    const auto x = params[2 * d], out = params[2 * d + 1];
    const auto v = w.load(dt, x, g);
    auto sum = w.unary(kOps[0], dt, v);
    for (std::size_t k = 1; k < std::size(kOps); ++k) sum = w.binary(KILN_BINARY_ADD, dt, sum, w.unary(kOps[k], dt, v));
    w.store(dt, out, g, sum);
    if (dt == KILN_DTYPE_F32) {
      const auto four = w.const_i64(4);
      const auto at = w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, g, four);
      const auto vec = w.load(dt, x, at, 4);
      auto vsum = w.unary(kOps[0], dt, vec, 4);
      for (std::size_t k = 1; k < std::size(kOps); ++k)
        vsum = w.binary(KILN_BINARY_ADD, dt, vsum, w.unary(kOps[k], dt, vec, 4), 4);
      w.store(dt, out, at, vsum, 4);
    }
  }
  return w.ops;
}

bool has(const std::string& text, std::string_view what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST(CudaMath, EveryOpIsClaimedOnEveryFloatDtype) {
  kiln_device_info info{};
  for (unsigned dt : {KILN_DTYPE_F32, KILN_DTYPE_F64, KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    kiln::sdk::set_c_family_caps(info, kiln::sdk::cuda_dialect(), dt);
    for (unsigned u : kOps) EXPECT_TRUE(kiln::sdk::has_unary(info, dt, u)) << kiln::sdk::unary_name(u);
  }
  // None of them has a 1.0 bit: dtype_ops stays what 1.0 plugins know.
  kiln::sdk::normalize_capabilities(info);
  EXPECT_EQ(info.dtype_ops[KILN_DTYPE_F32], kiln::sdk::c_family_dtype_ops(kiln::sdk::cuda_dialect(), KILN_DTYPE_F32));
}

TEST(CudaMath, EmitsTheMathLibraryAndCompilesForSm80AndSm90) {
  const std::string source = generate_cuda_source(math_kernel());
  for (std::string_view fn : {"tanhf(", "erff(", "rsqrtf(", "log1pf(", "expm1f(", "kiln_sigmoid_f32(", "tanh(", "erf(",
                              "rsqrt(", "log1p(", "expm1(", "kiln_sigmoid_f64("})
    EXPECT_TRUE(has(source, fn)) << fn << "\n" << source;
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  for (int arch : {80, 90}) {
    SCOPED_TRACE(arch);
    try {
      const DeviceCode cubin = compile_cuda(nvrtc, source, arch / 10, arch % 10, options);
      EXPECT_TRUE(cubin.is_cubin);
      EXPECT_EQ(cubin.target, "sm_" + std::to_string(arch));
    } catch (const kiln::sdk::PluginError& e) {
      ADD_FAILURE() << e.what() << "\n" << source;
    }
  }
}
