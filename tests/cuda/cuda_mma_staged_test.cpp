// mma_staged's kernels in the CUDA dialect: the matmul rewritten with LOCAL
// staging (the tuner's recipe, one stage, edges, tf32) emits shared arrays,
// whole 16-byte copies of f16 bits (no per-element conversions) and mma.sync,
// and compiles with NVRTC for sm_80 and sm_90 (no GPU needed).
#include <gtest/gtest.h>

#include "cuda_source.hpp"
#include "nvrtc_compiler.hpp"

#include <kiln/ir/dtype.hpp>
#include <kiln/kernels/library.hpp>
#include <kiln/passes/device_presets.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <regex>

using namespace kiln::cuda;

namespace {

// The GPU preset claiming the MMA op as an sm_80+ CUDA device does.
kiln::DeviceInfo mma_device() {
  kiln::DeviceInfo d = kiln::passes::gpu_preset();
  d.op_kind_dtypes[KILN_OP_MMA] |= 1u << KILN_DTYPE_F32;
  for (unsigned f : {KILN_FEATURE_MMA_M16N8K16_F16, KILN_FEATURE_MMA_M16N8K16_BF16, KILN_FEATURE_MMA_M16N8K8_TF32})
    d.features[KILN_FEATURE_WORD(f)] |= KILN_FEATURE_MASK(f);
  d.vector_width_mask |= 1u << 8;
  return d;
}

// The standard matmul of `dtype` and `size` rewritten by `step` for `device`.
kiln::Result<kiln::ir::Kernel> staged_matmul(kiln::ir::DType dtype, const kiln::kernels::KernelSize& size,
                                             const char* step, const kiln::DeviceInfo& device) {
  kiln::Result<kiln::kernels::StandardKernel> kernel = kiln::kernels::make_standard_kernel("matmul", size, dtype);
  if (!kernel) return std::move(kernel).error();
  return kiln::passes::optimize(kernel->kernel, kiln::passes::parse_sequence(step).value(), device);
}

}  // namespace

TEST(CudaMmaStaged, TheStagedKernelsCompileForSm80AndSm90) {
  struct Case {
    const char* dtype;
    kiln::kernels::KernelSize size;
    const char* step;
  };
  const Case cases[] = {
      {"f16", {.m = 256, .n = 256, .k = 256}, "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=2)"},
      {"bf16", {.m = 128, .n = 128, .k = 64}, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,stages=1)"},
      {"f16", {.m = 1000, .n = 999, .k = 1001}, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,stages=2)"},  // guards, scalar copies
      {"f32", {.m = 128, .n = 128, .k = 64}, "mma_staged(bm=64,bn=64,bk=32,wm=2,wn=2,tf32=1)"},
  };
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.dtype) + " " + c.step);
    const auto dtype = kiln::ir::dtype_from_name(c.dtype);
    ASSERT_TRUE(dtype);
    const auto optimized = staged_matmul(*dtype, c.size, c.step, mma_device());
    ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
    try {
      const std::string source = generate_cuda_source(optimized->to_wire());
      EXPECT_NE(source.find("__shared__"), std::string::npos) << source;
      EXPECT_NE(source.find("mma.sync.aligned"), std::string::npos) << source;
      if (std::string(c.dtype) == "f16" && c.size.k % 8 == 0) {
        // 16-byte copies of the bits, global to registers to shared.
        EXPECT_NE(source.find("= *(const kiln_u16x8*)"), std::string::npos) << source;
        EXPECT_FALSE(std::regex_search(source, std::regex(R"(kiln_f16_to_f32\(v[0-9]+\[)")))
            << "no loaded element is converted:\n" << source;
      }
      for (int major : {8, 9}) {
        const DeviceCode code = compile_cuda(nvrtc, source, major, 0, options);
        EXPECT_TRUE(code.is_cubin) << major;
      }
    } catch (const kiln::sdk::PluginError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

// With asynchronous copies and matrix loads (claimed as the plugin does on
// sm_80+) and the opt-in shared memory of an sm_90 (227 KiB): cp.async
// copies, commit and wait groups, the zero-filling form at the edges,
// ldmatrix (x4, x4.trans), and dynamic shared memory once the tiles pass
// 48 KiB; NVRTC compiles each for sm_80 and sm_90.
TEST(CudaMmaStaged, AsyncCopiesAndDynamicSharedMemoryCompileForSm80AndSm90) {
  kiln::DeviceInfo device = mma_device();
  for (unsigned dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16, KILN_DTYPE_F32}) device.op_kind_dtypes[KILN_OP_COPY_ASYNC] |= 1u << dt;
  for (unsigned dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16}) device.op_kind_dtypes[KILN_OP_LOAD_MATRIX] |= 1u << dt;
  device.local_memory_bytes = 227 * 1024;
  struct Case {
    const char* dtype;
    kiln::kernels::KernelSize size;
    const char* step;
    bool dynamic;  // LOCAL storage past 48 KiB
  };
  const Case cases[] = {
      {"f16", {.m = 256, .n = 256, .k = 256}, "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=2)", false},
      {"f16", {.m = 256, .n = 512, .k = 256}, "mma_staged(bm=128,bn=256,bk=32,wm=2,wn=4,stages=3)", true},
      {"bf16", {.m = 256, .n = 256, .k = 256}, "mma_staged(bm=128,bn=128,bk=64,wm=2,wn=2,stages=3)", true},
      {"f16", {.m = 1000, .n = 1000, .k = 1000}, "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=4)", true},  // zero fill
      {"f32", {.m = 256, .n = 256, .k = 256}, "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=4,stages=3,tf32=1)", true},
  };
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.dtype) + " " + c.step);
    const auto dtype = kiln::ir::dtype_from_name(c.dtype);
    ASSERT_TRUE(dtype);
    const auto optimized = staged_matmul(*dtype, c.size, c.step, device);
    ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
    try {
      const CudaSource source = emit_cuda(optimized->to_wire());
      EXPECT_NE(source.text.find("cp.async.cg.shared.global"), std::string::npos) << source.text;
      EXPECT_NE(source.text.find("cp.async.commit_group"), std::string::npos) << source.text;
      EXPECT_NE(source.text.find("cp.async.wait_group"), std::string::npos) << source.text;
      if (c.size.m % 128 != 0) {
        EXPECT_NE(source.text.find(" ? 16 : 0)"), std::string::npos) << source.text;
      }
      EXPECT_EQ(source.text.find("extern __shared__") != std::string::npos, c.dynamic) << source.text;
      // Shared addresses reach cp.async and ldmatrix as 32-bit operands
      // converted outside the asm, so the compiler folds their offsets.
      EXPECT_EQ(source.text.find("cvta.to.shared.u64"), std::string::npos) << source.text;
      EXPECT_NE(source.text.find("cp.async.cg.shared.global [%0], [%1], 16"), std::string::npos) << source.text;
      EXPECT_NE(source.text.find("\"r\"((unsigned int)__cvta_generic_to_shared("), std::string::npos) << source.text;
      if (std::string(c.dtype) != "f32") {  // fragments by ldmatrix (b16 only)
        EXPECT_NE(source.text.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16"), std::string::npos) << source.text;
        EXPECT_NE(source.text.find("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), std::string::npos) << source.text;
      }
      EXPECT_EQ(source.dynamic_shared_bytes > 48 * 1024, c.dynamic) << source.dynamic_shared_bytes;
      for (int major : {8, 9}) {
        const DeviceCode code = compile_cuda(nvrtc, source.text, major, 0, options);
        EXPECT_TRUE(code.is_cubin) << major;
      }
    } catch (const kiln::sdk::PluginError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

// A kernel whose shared memory admits at most G groups per SM (sm_90: 228
// KiB) is bounded to G groups where that leaves 255 registers per thread
// (threads x G <= 256): 105 KiB at 128 threads gives (128, 2); 80 KiB at 256
// threads would cap registers at 128 and keeps the plain bound, as do
// kernels of static shared memory.
TEST(CudaMmaStaged, SharedMemoryBoundKernelsTellPtxasTheirOccupancy) {
  kiln::DeviceInfo device = mma_device();
  for (unsigned dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    device.op_kind_dtypes[KILN_OP_COPY_ASYNC] |= 1u << dt;
    device.op_kind_dtypes[KILN_OP_LOAD_MATRIX] |= 1u << dt;
  }
  device.local_memory_bytes = 227 * 1024;
  struct Case {
    const char* step;
    const char* bounds;
  };
  const Case cases[] = {
      {"mma_staged(bm=128,bn=128,bk=64,wm=2,wn=2,stages=3)", "__launch_bounds__(128, 2) "},  // 105 KiB
      {"mma_staged(bm=128,bn=128,bk=64,wm=2,wn=2,stages=4)", "__launch_bounds__(128, 1) "},  // 140 KiB
      {"mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=4)", "__launch_bounds__(128) "},     // 74 KiB: 3 groups
      {"mma_staged(bm=128,bn=256,bk=32,wm=2,wn=4,stages=3)", "__launch_bounds__(256) "},     // 80 KiB, 256 threads
      {"mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=2)", "__launch_bounds__(128) "},     // static shared memory
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.step);
    const auto optimized = staged_matmul(kiln::ir::DType::F16, {.m = 256, .n = 256, .k = 256}, c.step, device);
    ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
    const std::string source = generate_cuda_source(optimized->to_wire());
    EXPECT_NE(source.find(c.bounds), std::string::npos) << source.substr(0, 4000);
  }
}

// Register staging with ldmatrix reads (stages=1): the tiles' stores into
// shared memory stay (dead-code elimination once dropped stores into LOCAL
// storage that only LOAD_MATRIX read: the H200 then multiplied garbage).
TEST(CudaMmaStaged, LdmatrixReadTilesAreStillWritten) {
  kiln::DeviceInfo device = mma_device();
  for (unsigned dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16}) device.op_kind_dtypes[KILN_OP_LOAD_MATRIX] |= 1u << dt;
  const auto optimized = staged_matmul(kiln::ir::DType::F16, {.m = 256, .n = 256, .k = 256},
                                       "mma_staged(bm=128,bn=128,bk=32,wm=2,wn=2,stages=1)", device);
  ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
  const std::string source = generate_cuda_source(optimized->to_wire());
  EXPECT_NE(source.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16"), std::string::npos) << source;
  // A's two 16-byte chunks per thread and B's pair-interleaved pieces, stored into the shared tiles.
  std::size_t stores = 0;
  for (std::size_t at = source.find("*(kiln_u16x8*)("); at != std::string::npos; at = source.find("*(kiln_u16x8*)(", at + 1)) ++stores;
  EXPECT_GE(stores, 4u) << source;
}
