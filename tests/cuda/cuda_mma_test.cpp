// The MMA op in the CUDA dialect: a kernel using each shape and input dtype
// emits inline PTX mma.sync and compiles with NVRTC for sm_80 and sm_90 (no
// GPU needed); the other C-family dialects refuse it as UNSUPPORTED naming
// the op (C, which has no LOCAL threads, already at the LOCAL index).
#include <gtest/gtest.h>

#include "cuda_source.hpp"
#include "nvrtc_compiler.hpp"
#include "support/wire_builder.hpp"

#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include <kiln/sdk/wire.hpp>

using namespace kiln::cuda;
using kiln::test::WireBuilder;

namespace {

struct Case {
  unsigned shape, input;
  const char* ptx;
};
constexpr Case kCases[] = {
    {KILN_MMA_M16N8K16, KILN_DTYPE_F16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"},
    {KILN_MMA_M16N8K16, KILN_DTYPE_BF16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"},
    {KILN_MMA_M16N8K8, KILN_DTYPE_F32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"},
};

// One warp per group, fragments in fragment order; `mma_op` gets the MMA's id.
std::vector<kiln_op> mma_kernel(const Case& c, std::uint32_t* mma_op = nullptr) {
  const kiln::sdk::MmaShapeInfo info = kiln::sdk::mma_shape_info(c.shape);
  const auto in = static_cast<std::uint8_t>(c.input);
  WireBuilder w;
  const auto a = w.param(KILN_PARAM_GLOBAL, in, 0, 64 * info.a_lanes);
  const auto b = w.param(KILN_PARAM_GLOBAL, in, 1, 64 * info.b_lanes);
  const auto d = w.param(KILN_PARAM_GLOBAL_MUT, KILN_DTYPE_F32, 2, 64 * 4);
  const auto tid = w.local_index(0, w.const_i64(64));
  auto at = [&](unsigned lanes) { return w.binary(KILN_BINARY_MUL, KILN_DTYPE_I64, tid, w.const_i64(lanes)); };
  const auto fa = w.load(in, a, at(info.a_lanes), static_cast<std::uint8_t>(info.a_lanes));
  const auto fb = w.load(in, b, at(info.b_lanes), static_cast<std::uint8_t>(info.b_lanes));
  const auto fc = w.load(KILN_DTYPE_F32, d, at(4), 4);
  const auto r = w.op(KILN_OP_MMA, KILN_DTYPE_F32, static_cast<std::uint8_t>(c.shape), fa, fb, fc, c.input, 0, 4);
  // A second MMA of the same shape reuses the helper.
  const auto r2 = w.op(KILN_OP_MMA, KILN_DTYPE_F32, static_cast<std::uint8_t>(c.shape), fa, fb, r, c.input, 0, 4);
  w.store(KILN_DTYPE_F32, d, at(4), r2, 4);
  if (mma_op != nullptr) *mma_op = r;
  return w.ops;
}

}  // namespace

TEST(CudaMma, EveryShapeCompilesForSm80AndSm90) {
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.ptx);
    try {
      const std::string source = generate_cuda_source(mma_kernel(c));
      EXPECT_NE(source.find(c.ptx), std::string::npos) << source;
      if (c.input == KILN_DTYPE_F32) {
        EXPECT_NE(source.find("cvt.rna.tf32.f32"), std::string::npos) << source;
      }
      const std::string name = "kiln_mma_" + std::string(kiln::sdk::mma_shape_name(c.shape)) + "_";
      // f16/bf16 fragments that are only loaded stay bits (Dialect::raw_halves): the _bits helper.
      const std::string helper =
          name + std::string(kiln::sdk::mma_input_name(c.shape, c.input)) + (c.input == KILN_DTYPE_F32 ? "" : "_bits") + "(const";
      EXPECT_EQ(source.find(name), source.rfind(helper))
          << "the helper is defined once, before its calls:\n" << source;
      for (int major : {8, 9}) {
        const DeviceCode code = compile_cuda(nvrtc, source, major, 0, options);
        EXPECT_TRUE(code.is_cubin) << major;
        EXPECT_EQ(code.target, "sm_" + std::to_string(major) + "0");
      }
      // The PTX really holds the instruction (not optimized away).
      NvrtcOptions ptx_options = options;
      ptx_options.force_ptx = true;
      const DeviceCode ptx = compile_cuda(nvrtc, source, 8, 0, ptx_options);
      EXPECT_NE(std::string(ptx.image.data()).find(c.ptx), std::string::npos);
    } catch (const kiln::sdk::PluginError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(CudaMma, OtherDialectsRefuseTheOpNamingIt) {
  std::uint32_t id = 0;
  const auto ops = mma_kernel(kCases[2], &id);  // tf32: 2- and 4-lane fragments, which every dialect has
  for (const kiln::sdk::Dialect* d : {&kiln::sdk::c_dialect(), &kiln::sdk::opencl_dialect(), &kiln::sdk::glsl_dialect()}) {
    SCOPED_TRACE(std::string(d->name));
    try {
      kiln::sdk::emit_c_family(ops, *d, {});
      ADD_FAILURE() << "emitted";
    } catch (const kiln::sdk::PluginError& e) {
      EXPECT_EQ(e.status(), KILN_STATUS_UNSUPPORTED) << e.what();
      if (d->local_index == nullptr) continue;  // C: no LOCAL threads, refused at the index already
      EXPECT_EQ(e.failed_op(), static_cast<std::int64_t>(id)) << e.what();
      EXPECT_NE(std::string(e.what()).find("mma"), std::string::npos) << e.what();
    }
  }
}
