// WGMMA in the CUDA dialect: wgmma_staged's kernels emit wgmma.mma_async on
// two shared-memory descriptors, the fence, commit and wait, 1024-byte
// aligned tiles, and compile with NVRTC for sm_90a (no GPU needed). On an
// sm_90 device (CudaWgmmaDevice, skipped elsewhere) one warp group's WGMMA
// gives the interpreter's bits: the inputs are small integers, so every
// product and sum is exact in any order the tensor cores take.
#include <gtest/gtest.h>

#include "cuda_plugin_fixture.hpp"
#include "cuda_source.hpp"
#include "matmul_untuned_bits.hpp"
#include "nvrtc_compiler.hpp"
#include "support/kernel_runner.hpp"

#include <kiln/ir/dtype.hpp>
#include <kiln/ir/text.hpp>
#include <kiln/kernels/library.hpp>
#include <kiln/passes/device_presets.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/sdk/capabilities.hpp>
#include <kiln/sdk/half.hpp>
#include <kiln/sdk/plugin_support.hpp>

#include <bit>
#include <random>

using namespace kiln::cuda;
using kiln::test::AbiError;
using kiln::test::HostArg;

namespace {

// The GPU preset claiming what the CUDA plugin claims on an sm_90.
kiln::DeviceInfo sm90_device() {
  kiln::DeviceInfo d = kiln::passes::gpu_preset();
  d.op_kind_dtypes[KILN_OP_MMA] |= 1u << KILN_DTYPE_F32;
  for (unsigned f : {KILN_FEATURE_MMA_M16N8K16_F16, KILN_FEATURE_MMA_M16N8K16_BF16, KILN_FEATURE_MMA_M16N8K8_TF32})
    d.features[KILN_FEATURE_WORD(f)] |= KILN_FEATURE_MASK(f);
  for (unsigned dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16, KILN_DTYPE_F32}) d.op_kind_dtypes[KILN_OP_COPY_ASYNC] |= 1u << dt;
  for (unsigned dt : {KILN_DTYPE_F16, KILN_DTYPE_BF16, KILN_DTYPE_F32}) d.op_kind_dtypes[KILN_OP_WGMMA] |= 1u << dt;
  d.features[KILN_FEATURE_WORD(KILN_FEATURE_WGMMA_TF32_A_REGISTERS)] |= KILN_FEATURE_MASK(KILN_FEATURE_WGMMA_TF32_A_REGISTERS);
  d.vector_width_mask |= (1u << 2) | (1u << 4) | (1u << 8);
  d.local_memory_bytes = 227 * 1024;
  return d;
}

// One warp group: thread l copies x[64l ..) into LOCAL as it is and its
// accumulators from c[128l ..]; A at LOCAL 16 (k 16.. of the rows), B at
// 4096; one m64nNk16 WGMMA; out[128l ..] = the accumulators. f32 (the tf32
// form, m64nNk8): A at 8 (k 8..), B at 2048, or over A at 16 for n > 192.
// With `a_registers` (tf32 only) A is the fragments at accumulator elements
// n / 2 .. n / 2 + 3 instead (kernel_ir.h, code 1).
std::string one_wgmma(const std::string& dtype, unsigned n, bool a_registers = false) {
  const bool tf32 = dtype == "f32";
  const std::string a = a_registers ? std::to_string(n / 2) : tf32 ? "8" : "16", b = tf32 ? (n > 192 ? "16" : "2048") : "4096";
  return "%0 = param 0 global " + dtype + "[8192]\n" + R"(%1 = param 1 global f32[16384]
%2 = param 2 global_mut f32[16384]
%3 = storage local )" + dtype + R"([8192]
%4 = storage register f32[128]
%5 = const i64 128
%6 = index local 0 %5
%7 = const i64 64
%8 = mul i64 %6, %7
%9 = const i64 8
%10 = loop %9
%11 = mul i64 %10, %9
%12 = add i64 %8, %11
%13 = load )" + dtype + R"(x8 %0[%12]
store %3[%12], %13
endloop %10
%16 = const i64 32
%17 = loop %16
%18 = const i64 4
%19 = mul i64 %17, %18
%21 = mul i64 %6, %5
%22 = add i64 %21, %19
%23 = load f32x4 %1[%22]
store %4[%19], %23
endloop %17
barrier
wgmma_fence
%27 = const i64 )" + a + R"(
%28 = const i64 )" + b + R"(
%29 = broadcast i64x2 %27
%20 = insert i64x2 %29[1], %28
wgmma n)" + std::to_string(n) + (a_registers ? " a_regs " : " ") + dtype + R"( %3[%20], %4
wgmma_commit
wgmma_wait 0
%40 = loop %16
%41 = const i64 4
%42 = mul i64 %40, %41
%43 = mul i64 %6, %5
%44 = add i64 %43, %42
%45 = load f32x4 %4[%42]
store %2[%44], %45
endloop %40
)";
}

std::vector<kiln_op> wire(const std::string& text) {
  auto kernel = kiln::ir::parse(text);
  EXPECT_TRUE(kernel.ok()) << (kernel.ok() ? "" : kernel.error().message);
  return kernel.ok() ? kernel->to_wire() : std::vector<kiln_op>{};
}

NvrtcOptions nvrtc_options() {
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  return options;
}

}  // namespace

TEST(CudaWgmma, TheStagedKernelsCompileForSm90a) {
  struct Case {
    const char* dtype;
    kiln::kernels::KernelSize size;
    const char* step;
  };
  const Case cases[] = {
      {"f16", {.m = 256, .n = 512, .k = 256}, "wgmma_staged(bm=128,bn=256,stages=4,inflight=1)"},
      {"bf16", {.m = 256, .n = 256, .k = 256}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=0)"},
      {"f16", {.m = 1000, .n = 1000, .k = 1000}, "wgmma_staged(bm=128,bn=128,stages=4,inflight=1)"},  // zero fill, guards
      {"f16", {.m = 64, .n = 64, .k = 64}, "wgmma_staged(bm=64,bn=64,stages=2,inflight=0)"},  // 32 KiB: static shared
      // Loops of 16 steps with one WGMMA group in flight across the back edge, and none.
      {"f16", {.m = 512, .n = 512, .k = 1024}, "wgmma_staged(bm=128,bn=128,stages=4,inflight=1)"},
      {"f16", {.m = 512, .n = 512, .k = 1024}, "wgmma_staged(bm=128,bn=256,stages=4,inflight=1)"},
      {"f16", {.m = 512, .n = 512, .k = 1024}, "wgmma_staged(bm=128,bn=256,stages=3,inflight=0)"},
      {"f16", {.m = 512, .n = 512, .k = 1024}, "wgmma_staged(bm=128,bn=256,stages=4,inflight=1,split=2)"},
      {"f16", {.m = 512, .n = 512, .k = 1024}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,mma_first=1)"},
      // Four and three warp groups (512 and 384 threads).
      {"f16", {.m = 512, .n = 512, .k = 1024}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1)"},
      {"f16", {.m = 576, .n = 576, .k = 1024}, "wgmma_staged(bm=192,bn=192,stages=3,inflight=1)"},
  };
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.dtype) + " " + c.step);
    const auto dtype = kiln::ir::dtype_from_name(c.dtype);
    ASSERT_TRUE(dtype);
    auto kernel = kiln::kernels::make_standard_kernel("matmul", c.size, *dtype);
    ASSERT_TRUE(kernel.ok());
    const auto optimized = kiln::passes::optimize(kernel->kernel, kiln::passes::parse_sequence(c.step).value(), sm90_device());
    ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
    try {
      const CudaSource source = emit_cuda(optimized->to_wire());
      const std::string input = std::string(c.dtype) + "." + c.dtype;
      EXPECT_NE(source.text.find("wgmma.mma_async.sync.aligned.m64n"), std::string::npos) << source.text;
      EXPECT_NE(source.text.find("k16.f32." + input + " {"), std::string::npos) << source.text;
      EXPECT_NE(source.text.find("wgmma.fence.sync.aligned"), std::string::npos) << source.text;
      EXPECT_NE(source.text.find("fence.proxy.async.shared::cta"), std::string::npos) << source.text;
      EXPECT_NE(source.text.find("wgmma.commit_group.sync.aligned"), std::string::npos) << source.text;
      EXPECT_NE(source.text.find("wgmma.wait_group.sync.aligned"), std::string::npos) << source.text;
      EXPECT_NE(source.text.find("cp.async.cg.shared.global"), std::string::npos) << source.text;
      // The tiles start at a 1024-byte boundary: found at run time in the
      // dynamic buffer, declared so for a static array.
      if (source.dynamic_shared_bytes > 0) EXPECT_NE(source.text.find("kiln_local_base + "), std::string::npos) << source.text;
      else EXPECT_NE(source.text.find("__shared__ __align__(1024)"), std::string::npos) << source.text;
      const DeviceCode code = compile_cuda(nvrtc, source.text, 9, 0, nvrtc_options(), true);
      EXPECT_EQ(code.target, "sm_90a");
      EXPECT_TRUE(code.is_cubin);
      // ptxas keeps the WGMMAs asynchronous (it serializes them, with a
      // warning in the log, where it finds the accumulators touched in
      // flight). Not yet for bn = 256 with a group in flight through a
      // loop, whole or split in two: ptxas serializes those (C7514) because
      // of the epilogue's reads (the kernel without them is not serialized);
      // docs/passes.md.
      // Only the async direction is asserted: the warning comes from ptxas
      // running, and a warm H100 (NVRTC of CUDA 13, the same test binary run
      // again minutes later) compiled these kernels 12x faster with no
      // ptxas warnings in the log at all.
      const bool known_serialized = std::string(c.step).find("bn=256") != std::string::npos && c.size.k > 256 &&
                                    std::string(c.step).find("inflight=1") != std::string::npos;
      if (!known_serialized) {
        EXPECT_EQ(code.log.find("serialized"), std::string::npos) << code.log;
      }

    } catch (const kiln::sdk::PluginError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(CudaWgmma, OneWarpGroupMmaCompilesForSm90aOnly) {
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  for (unsigned n : {8u, 64u, 128u, 256u})
    for (const char* dtype : {"f16", "bf16"}) {
      SCOPED_TRACE(std::string(dtype) + " n" + std::to_string(n));
      const std::string source = generate_cuda_source(wire(one_wgmma(dtype, n)));
      EXPECT_NO_THROW(compile_cuda(nvrtc, source, 9, 0, nvrtc_options(), true));
    }
  // wgmma does not exist on plain sm_90: ptxas refuses it.
  EXPECT_THROW(compile_cuda(nvrtc, generate_cuda_source(wire(one_wgmma("f16", 64))), 9, 0, nvrtc_options()),
               kiln::sdk::PluginError);
}

TEST(CudaWgmma, Tf32KernelsCompileForSm90aUnserialized) {
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  for (unsigned n : {8u, 64u, 128u, 256u}) {
    SCOPED_TRACE("one tf32 wgmma n" + std::to_string(n));
    const std::string source = generate_cuda_source(wire(one_wgmma("f32", n)));
    EXPECT_NE(source.find("k8.f32.tf32.tf32 {"), std::string::npos) << source;
    EXPECT_NO_THROW(compile_cuda(nvrtc, source, 9, 0, nvrtc_options(), true));
  }
  for (unsigned n : {8u, 64u, 128u, 240u}) {
    SCOPED_TRACE("one tf32 wgmma with A from registers n" + std::to_string(n));
    const std::string source = generate_cuda_source(wire(one_wgmma("f32", n, true)));
    EXPECT_NE(source.find("k8.f32.tf32.tf32 {"), std::string::npos) << source;
    EXPECT_NE(source.find("__float_as_uint("), std::string::npos) << source;  // A's four .b32 registers
    EXPECT_NO_THROW(compile_cuda(nvrtc, source, 9, 0, nvrtc_options(), true));
  }
  for (const char* step : {"wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1)", "wgmma_staged(bm=128,bn=128,stages=4,inflight=1,tf32=1)",
                           "wgmma_staged(bm=128,bn=256,stages=3,inflight=0,tf32=1)", "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1)", "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1)",
                           "wgmma_staged(bm=128,bn=128,stages=3,inflight=0,tf32=1)", "wgmma_staged(bm=64,bn=128,stages=4,inflight=1,tf32=1)",
                           // B copied asynchronously and transposed in shared memory.
                           "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1,b_async=1)",
                           "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1,b_async=1)",
                           "wgmma_staged(bm=128,bn=128,stages=4,inflight=1,tf32=1,b_async=1)",
                           "wgmma_staged(bm=128,bn=256,stages=3,inflight=0,tf32=1,b_async=1)",
                           // B's transposed stores 2 and 4 k wide.
                           "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1,b_vec=2)",
                           "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1,b_vec=4)",
                           "wgmma_staged(bm=128,bn=256,stages=3,inflight=0,tf32=1,b_vec=4)",
                           // C^T = B^T A^T with B^T's fragments from registers.
                           "wgmma_staged(bm=256,bn=128,stages=3,inflight=0,tf32=1,swap=1)",
                           "wgmma_staged(bm=256,bn=128,stages=4,inflight=0,mma_first=1,tf32=1,swap=1)",
                           "wgmma_staged(bm=128,bn=256,stages=4,inflight=0,tf32=1,swap=1)",
                           "wgmma_staged(bm=128,bn=128,stages=3,inflight=0,tf32=1,swap=1)",
                           "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,mma_first=1,tf32=1,swap=1)",
                           "wgmma_staged(bm=128,bn=256,stages=4,inflight=1,tf32=1,swap=1)"}) {
    for (const kiln::kernels::KernelSize size : {kiln::kernels::KernelSize{.m = 512, .n = 512, .k = 1024},
                                                 kiln::kernels::KernelSize{.m = 1000, .n = 1000, .k = 1000}}) {
      SCOPED_TRACE(std::string(step) + " " + std::to_string(size.m));
      auto kernel = kiln::kernels::make_standard_kernel("matmul", size, kiln::ir::DType::F32);
      ASSERT_TRUE(kernel.ok());
      const auto optimized = kiln::passes::optimize(kernel->kernel, kiln::passes::parse_sequence(step).value(), sm90_device());
      ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
      try {
        const CudaSource source = emit_cuda(optimized->to_wire());
        EXPECT_NE(source.text.find("k8.f32.tf32.tf32 {"), std::string::npos) << source.text;
        EXPECT_NE(source.text.find("cp.async.cg.shared.global"), std::string::npos) << source.text;
        // swap=1, 256 x 128 with two fragment sets: 128 accumulators and 32
        // fragment elements, all held around the asynchronous ops (the
        // fragments' registers live until the wait that covers their reads).
        if (std::string(step) == "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,mma_first=1,tf32=1,swap=1)") {
          EXPECT_NE(source.text.find("[159]) :: \"memory\");"), std::string::npos) << source.text;
        }
        const DeviceCode code = compile_cuda(nvrtc, source.text, 9, 0, nvrtc_options(), true);
        EXPECT_EQ(code.target, "sm_90a");
        // The WGMMAs stay asynchronous (no C7514 "serialized" warning).
        EXPECT_EQ(code.log.find("serialized"), std::string::npos) << code.log;
      } catch (const kiln::sdk::PluginError& e) {
        ADD_FAILURE() << e.what();
      }
    }
  }
}

namespace {

class CudaWgmmaDevice : public kiln::test::CudaPluginTest {
 protected:
  // The accumulator in: 16384 f32 integers in [-100, 100].
  static HostArg random_accumulator(std::mt19937_64& rng) {
    HostArg c = HostArg::buffer(KILN_DTYPE_F32, 16384);
    for (std::size_t e = 0; e < 16384; ++e)
      c.set(e, std::bit_cast<std::uint32_t>(static_cast<float>(static_cast<int>(rng() % 201) - 100)));
    return c;
  }

  // Runs `ops` (one_wgmma's kernel) on the device with the tiles `x` and
  // the accumulator `c` and expects the interpreter's bits in its output,
  // with a compact account of what differs (thread, element: got, want), so
  // a layout mistake shows its pattern.
  void expect_interpreters_bits(const std::vector<kiln_op>& ops, const HostArg& x, const HostArg& c) {
    std::vector<HostArg> args = {x, c, HostArg::poisoned(KILN_DTYPE_F32, 16384)};
    const std::vector<HostArg> want = kiln::conformance::interpreted(ops, args);
    try {
      const std::string source = kiln::conformance::run_kernel(*plugin, device, ops, args);
      std::string diffs;
      unsigned differing = 0;
      for (std::size_t e = 0; e < 16384; ++e)
        if (args.back().get(e) != want.back().get(e) && ++differing <= 24)
          diffs += " (" + std::to_string(e / 128) + "," + std::to_string(e % 128) + ": " +
                   std::to_string(std::bit_cast<float>(static_cast<std::uint32_t>(args.back().get(e)))) + " want " +
                   std::to_string(std::bit_cast<float>(static_cast<std::uint32_t>(want.back().get(e)))) + ")";
      EXPECT_EQ(differing, 0u) << "accumulator elements differ:" << diffs << "\n" << source;
    } catch (const AbiError& e) {
      ADD_FAILURE() << e.what();
    }
  }
};

}  // namespace

TEST_F(CudaWgmmaDevice, OneWarpGroupMmaGivesTheInterpretersBits) {
  const kiln_device_info info = plugin->info(0);
  if (!kiln::sdk::has_op_kind(info, KILN_DTYPE_F16, KILN_OP_WGMMA))
    GTEST_SKIP() << info.name << " does not claim wgmma (an sm_90 does)";
  std::mt19937_64 rng(11);
  for (const bool bf16 : {false, true})
    for (unsigned n : {8u, 64u, 128u, 256u}) {
      SCOPED_TRACE(std::string(bf16 ? "bf16" : "f16") + " n" + std::to_string(n));
      // Integers in [-4, 4] (products and sums of 16 exact in f32 in any order).
      HostArg x = HostArg::buffer(bf16 ? KILN_DTYPE_BF16 : KILN_DTYPE_F16, 8192);
      for (std::size_t e = 0; e < 8192; ++e) {
        const float v = static_cast<float>(static_cast<int>(rng() % 9) - 4);
        x.set(e, bf16 ? kiln::sdk::f32_to_bf16_bits(v) : kiln::sdk::f32_to_f16_bits(v));
      }
      expect_interpreters_bits(wire(one_wgmma(bf16 ? "bf16" : "f16", n)), x, random_accumulator(rng));
    }
}

TEST_F(CudaWgmmaDevice, Tf32GivesTheInterpretersBits) {
  // Whether the tensor cores read an f32's low 13 mantissa bits (kernel_ir.h
  // says: dropped, truncation): inputs i (1 + j 2^-12), i in {0, +-1, +-2,
  // +-4}, j in 0..3, truncate to i (every product and sum then an exact
  // integer, in any order) but round to nearest to i (1 + 2^-10) for j >= 2,
  // so a rounding device gives fractional outputs. (The H200 call of
  // 2026-12-03 22:48 ran this with i in [-4, 4]: i = 3 keeps a bit of j 2^-12
  // (3 (1 + 3 2^-12) = 1.5 (1 + 9 2^-13) 2), the sums were then not exact and
  // 5 elements differed in the last bit from the interpreter's order; a
  // rounding reading would have moved about half the products by 2^-10.)
  const kiln_device_info info = plugin->info(0);
  if (!kiln::sdk::has_op_kind(info, KILN_DTYPE_F32, KILN_OP_WGMMA))
    GTEST_SKIP() << info.name << " does not claim the tf32 wgmma (an sm_90 does)";
  std::mt19937_64 rng(13);
  for (unsigned n : {8u, 64u, 128u, 256u}) {
    SCOPED_TRACE("tf32 n" + std::to_string(n));
    HostArg x = HostArg::buffer(KILN_DTYPE_F32, 8192);
    for (std::size_t e = 0; e < 8192; ++e) {
      constexpr float kPowers[] = {0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 4.0f, -4.0f};
      const float i = kPowers[rng() % 7], j = static_cast<float>(rng() % 4);
      x.set(e, std::bit_cast<std::uint32_t>(i * (1.0f + j * 0x1p-12f)));
    }
    expect_interpreters_bits(wire(one_wgmma("f32", n)), x, random_accumulator(rng));
  }
}

TEST_F(CudaWgmmaDevice, Tf32AFromRegistersGivesTheInterpretersBits) {
  // A's fragments from registers (code 1): the accumulator's storage holds
  // them past the N / 2 accumulators. The tiles as in Tf32GivesTheInterpretersBits;
  // the fragments i (1 + j 2^-12) too, so a device that rounded register
  // operands instead of dropping their low bits, or read an element of
  // another thread's fragment, gives other values.
  const kiln_device_info info = plugin->info(0);
  if (!kiln::sdk::has_op_kind(info, KILN_DTYPE_F32, KILN_OP_WGMMA) ||
      !kiln::sdk::has_feature(info, KILN_FEATURE_WGMMA_TF32_A_REGISTERS))
    GTEST_SKIP() << info.name << " does not claim the tf32 wgmma with A from registers (an sm_90 does)";
  std::mt19937_64 rng(17);
  constexpr float kPowers[] = {0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 4.0f, -4.0f};
  auto value = [&] { return kPowers[rng() % 7] * (1.0f + static_cast<float>(rng() % 4) * 0x1p-12f); };
  for (unsigned n : {8u, 64u, 128u, 240u}) {
    SCOPED_TRACE("tf32, A from registers, n" + std::to_string(n));
    HostArg x = HostArg::buffer(KILN_DTYPE_F32, 8192);
    for (std::size_t e = 0; e < 8192; ++e) x.set(e, std::bit_cast<std::uint32_t>(value()));
    HostArg c = random_accumulator(rng);
    for (std::size_t thread = 0; thread < 128; ++thread)
      for (std::size_t j = 0; j < 4; ++j) c.set(128 * thread + n / 2 + j, std::bit_cast<std::uint32_t>(value()));
    expect_interpreters_bits(wire(one_wgmma("f32", n, true)), x, c);
  }
}

TEST_F(CudaWgmmaDevice, Tf32StagedKernelsGiveTheUntunedKernelsBits) {
  // wgmma_staged tf32=1 whole (the tiles' layouts, B's transpose through
  // registers or b_async=1's copies and shared-memory transpose, the
  // pipeline's waits and barriers, the guards at odd edges) on the device
  // against the untuned kernel on the same device: inputs are integers in
  // [-4, 4] (exact in tf32, every product and sum exact in f32 in any
  // order), so any element out of place shows as a wrong value.
  const kiln_device_info info = plugin->info(0);
  if (!kiln::sdk::has_op_kind(info, KILN_DTYPE_F32, KILN_OP_WGMMA))
    GTEST_SKIP() << info.name << " does not claim the tf32 wgmma (an sm_90 does)";
  struct Case {
    kiln::kernels::KernelSize size;
    const char* step;
  };
  const Case cases[] = {
      {{.m = 512, .n = 256, .k = 512}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1)"},
      {{.m = 512, .n = 256, .k = 512}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1,b_async=1)"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1,b_async=1)"},
      {{.m = 300, .n = 200, .k = 100}, "wgmma_staged(bm=128,bn=128,stages=4,inflight=1,tf32=1,b_async=1)"},
      {{.m = 130, .n = 260, .k = 36}, "wgmma_staged(bm=128,bn=256,stages=3,inflight=0,tf32=1,b_async=1)"},
      {{.m = 512, .n = 256, .k = 512}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1,b_vec=2)"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=1,tf32=1,b_vec=2)"},
      {{.m = 300, .n = 200, .k = 100}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1,b_vec=4)"},
      {{.m = 130, .n = 260, .k = 36}, "wgmma_staged(bm=128,bn=256,stages=3,inflight=0,tf32=1,b_vec=4)"},
      {{.m = 512, .n = 256, .k = 544}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,mma_first=1,tf32=1,b_vec=2)"},
      // swap=1: B^T's fragments from registers, C^T stored transposed.
      {{.m = 512, .n = 256, .k = 512}, "wgmma_staged(bm=256,bn=128,stages=3,inflight=0,tf32=1,swap=1)"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=0,mma_first=1,tf32=1,swap=1)"},
      {{.m = 300, .n = 200, .k = 100}, "wgmma_staged(bm=128,bn=256,stages=4,inflight=0,tf32=1,swap=1)"},
      {{.m = 130, .n = 260, .k = 36}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=0,tf32=1,swap=1)"},
      {{.m = 512, .n = 256, .k = 512}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,mma_first=1,tf32=1,swap=1)"},
      {{.m = 264, .n = 132, .k = 164}, "wgmma_staged(bm=256,bn=128,stages=4,inflight=1,tf32=1,swap=1)"},
      {{.m = 130, .n = 260, .k = 36}, "wgmma_staged(bm=128,bn=128,stages=3,inflight=1,tf32=1,swap=1)"},
  };
  // The device's own budgets: a form past its registers (128 x 256 with
  // two fragment sets) is refused, as kiln's optimizer refuses it there.
  kiln::DeviceInfo device_info = sm90_device();
  device_info.local_memory_bytes = info.local_memory_bytes;
  device_info.register_bytes = info.register_bytes;
  device_info.max_local_threads = info.max_local_threads;
  std::mt19937_64 rng(20261204);
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.size.m) + "x" + std::to_string(c.size.n) + "x" + std::to_string(c.size.k) + " " + c.step);
    kiln::test::expect_matmul_gives_the_untuned_kernels_bits(*plugin, device, device_info, c.size, c.step, [&] {
      return static_cast<float>(static_cast<int>(rng() % 9) - 4);
    });
  }
}
