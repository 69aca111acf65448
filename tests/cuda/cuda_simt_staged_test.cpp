// simt_staged's kernels in the CUDA dialect: exact f32 matrix products on
// FMAs, the tiles in shared memory read as 16-byte vectors, compiled with
// NVRTC for sm_80 and sm_90 (no GPU needed), odd shapes included (guards,
// scalar copies); on a CUDA device, the untuned kernel's bits.
#include <gtest/gtest.h>

#include "cuda_plugin_fixture.hpp"
#include "cuda_source.hpp"
#include "matmul_untuned_bits.hpp"
#include "nvrtc_compiler.hpp"
#include "support/kernel_runner.hpp"

#include <kiln/sdk/capabilities.hpp>

#include <bit>
#include <random>

#include <kiln/ir/dtype.hpp>
#include <kiln/kernels/library.hpp>
#include <kiln/passes/device_presets.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/sdk/plugin_support.hpp>

using namespace kiln::cuda;

TEST(CudaSimtStaged, TheStagedKernelsCompileForSm80AndSm90) {
  struct Case {
    kiln::kernels::KernelSize size;
    const char* step;
    bool vectors;  // 16-byte global loads (the lengths are multiples of 4)
  };
  const Case cases[] = {
      {{.m = 256, .n = 256, .k = 256}, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8)", true},
      {{.m = 256, .n = 256, .k = 256}, "simt_staged(bm=128,bn=64,bk=16,wm=2,wn=2,tm=8,tn=8,stages=1)", true},
      {{.m = 1000, .n = 999, .k = 1001}, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8)", false},
      {{.m = 4097, .n = 4095, .k = 4093}, "simt_staged(bm=64,bn=128,bk=8,wm=2,wn=2,tm=8,tn=8)", false},
      {{.m = 16, .n = 4096, .k = 4096}, "simt_staged(bm=32,bn=64,bk=8,wm=1,wn=1,tm=8,tn=8)", true},
      // Asynchronous copies (cp.async, zero-filling at the edges), 3 stages; k 32 in 3 stages is 103 KiB:
      // dynamic shared memory.
      {{.m = 256, .n = 256, .k = 256}, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8,stages=3,async=1)", true},
      {{.m = 1000, .n = 1000, .k = 1000}, "simt_staged(bm=128,bn=64,bk=16,wm=4,wn=1,tm=8,tn=8,stages=4,async=1)", true},
      {{.m = 256, .n = 256, .k = 256}, "simt_staged(bm=128,bn=128,bk=32,wm=4,wn=2,tm=8,tn=8,stages=3,async=1)", true},
      // 8 x 16 and 16 x 8 a lane, 4 warps of 64 x 64 (the recipes).
      {{.m = 256, .n = 256, .k = 256}, "simt_staged(bm=128,bn=128,bk=8,wm=2,wn=2,tm=16,tn=8)", true},
      {{.m = 4097, .n = 4095, .k = 4093}, "simt_staged(bm=128,bn=128,bk=16,wm=2,wn=2,tm=8,tn=16)", false},
      {{.m = 256, .n = 256, .k = 256}, "simt_staged(bm=128,bn=128,bk=8,wm=2,wn=2,tm=8,tn=16,stages=3,async=1)", true},
  };
  NvrtcApi nvrtc;
  try {
    nvrtc = load_nvrtc(nvrtc_candidates(""));
  } catch (const kiln::sdk::PluginError& e) {
    GTEST_SKIP() << "no NVRTC here: " << e.what();
  }
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.size.m) + "x" + std::to_string(c.size.n) + "x" + std::to_string(c.size.k) + " " + c.step);
    const auto kernel = kiln::kernels::make_standard_kernel("matmul", c.size, kiln::ir::DType::F32);
    ASSERT_TRUE(kernel.ok());
    const auto optimized = kiln::passes::optimize(kernel->kernel, kiln::passes::parse_sequence(c.step).value(), kiln::passes::h200_preset());
    ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
    try {
      const std::string source = generate_cuda_source(optimized->to_wire());
      EXPECT_NE(source.find("__shared__"), std::string::npos) << source;
      // The lane's A and B values come out of shared memory 4 at a time.
      EXPECT_NE(source.find("= *(const kiln_f32x4*)(v"), std::string::npos) << source;
      EXPECT_EQ(source.find("mma.sync"), std::string::npos) << "exact f32: no tensor cores\n" << source;
      EXPECT_EQ(source.find("*(kiln_f32x4*)(v2 + ") != std::string::npos, c.vectors) << "16-byte stores of C\n" << source;
      const bool async = std::string(c.step).find("async=1") != std::string::npos;
      EXPECT_EQ(source.find("cp.async.cg.shared.global") != std::string::npos, async) << source;
      for (int major : {8, 9}) {
        const DeviceCode code = compile_cuda(nvrtc, source, major, 0, options);
        EXPECT_TRUE(code.is_cubin) << major;
      }
    } catch (const kiln::sdk::PluginError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

// On the device: each form gives the untuned kernel's bits on the same
// device (both are k-ascending FMA chains from +0; the interpreter rounds a
// MAD twice, the device once, so the device is compared with itself),
// guarded and asynchronous forms included. Skips visibly without a GPU.
class CudaSimtStagedDevice : public kiln::test::CudaPluginTest {};

TEST_F(CudaSimtStagedDevice, GivesTheUntunedKernelsBits) {
  const kiln_device_info info = plugin->info(0);
  const bool async = kiln::sdk::has_op_kind(info, KILN_DTYPE_F32, KILN_OP_COPY_ASYNC);
  struct Case {
    kiln::kernels::KernelSize size;
    const char* step;
  };
  const Case cases[] = {
      {{.m = 256, .n = 256, .k = 256}, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8)"},
      {{.m = 1000, .n = 999, .k = 1001}, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8)"},
      {{.m = 300, .n = 260, .k = 100}, "simt_staged(bm=128,bn=128,bk=16,wm=4,wn=2,tm=8,tn=8,stages=1)"},
      {{.m = 256, .n = 384, .k = 72}, "simt_staged(bm=128,bn=128,bk=8,wm=2,wn=2,tm=8,tn=16)"},
      {{.m = 1004, .n = 1000, .k = 996}, "simt_staged(bm=128,bn=128,bk=8,wm=4,wn=2,tm=8,tn=8,stages=3,async=1)"},
      {{.m = 256, .n = 256, .k = 256}, "simt_staged(bm=128,bn=128,bk=8,wm=2,wn=2,tm=8,tn=16,stages=3,async=1)"},
  };
  kiln::DeviceInfo device_info = kiln::passes::h200_preset();
  device_info.local_memory_bytes = info.local_memory_bytes;
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<float> magnitude(1.0f / 64, 1.0f);
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.size.m) + "x" + std::to_string(c.size.n) + "x" + std::to_string(c.size.k) + " " + c.step);
    if (std::string(c.step).find("async=1") != std::string::npos && !async) {
      std::cout << "skipped (" << info.name << " does not copy asynchronously): " << c.step << "\n";
      continue;
    }
    kiln::test::expect_matmul_gives_the_untuned_kernels_bits(*plugin, device, device_info, c.size, c.step, [&] {
      return (rng() & 1) != 0 ? magnitude(rng) : -magnitude(rng);
    });
  }
}
