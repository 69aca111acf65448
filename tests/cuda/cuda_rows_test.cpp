// The tuner's GPU row recipes (core/tune/default_space.cpp) for an H200-shaped
// device (1024 threads, 256 register bytes per thread, vectors to 16 lanes,
// warp shuffles): every recipe that applies to softmax, layernorm and
// rmsnorm at the row lengths emits CUDA that NVRTC compiles for
// sm_90 (and sm_80 for bf16, whose conversion differs there); the block
// recipes read and write 16-bit rows in 16-byte accesses, and every kernel
// carries its block size as __launch_bounds__ (a row cached in registers at
// 1024 threads took 72 registers without it: more than such a block has, so
// the launch failed). Needs NVRTC, not a GPU; what the kernels compute is
// checked against the interpreter on the dummy device
// (tests/passes/rows_devices_test.cpp, its H200-shaped device).
#include <gtest/gtest.h>

#include "cuda_source.hpp"
#include "nvrtc_compiler.hpp"

#include <kiln/ir/dtype.hpp>
#include <kiln/kernels/library.hpp>
#include <kiln/passes/device_presets.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/sdk/plugin_support.hpp>
#include "kiln/tune/search_space.hpp"

using namespace kiln::cuda;

namespace {

// A block recipe made for a kernel of `loops` loops (its first step splits
// the last loop; on softmax a recipe for two loops leaves the writing loop
// as it was).
bool is_block_recipe_for(const kiln::passes::OptSequence& recipe, int loops) {
  return !recipe.empty() && recipe.front().opt == "split_loop" && recipe.front().param("loop") == loops - 1 &&
         recipe.back().opt == "vectorize";
}

// A split_aligned recipe made for a kernel of `loops` loops (one split per
// loop; on softmax a recipe for two loops leaves the writing loop as it was).
bool is_aligned_recipe_for(const kiln::passes::OptSequence& recipe, int loops) {
  int splits = 0;
  for (const kiln::passes::OptStep& step : recipe) splits += step.opt == "split_aligned";
  return splits == loops;
}

// The lanes of the recipe's vectorize step, as text ("4" without one).
std::string vector_lanes(const kiln::passes::OptSequence& recipe) {
  for (const kiln::passes::OptStep& step : recipe)
    if (step.opt == "vectorize" && step.param("lanes") == 8) return "8";
  return "4";
}

bool is_row_recipe(const kiln::passes::OptSequence& recipe) {
  for (const kiln::passes::OptStep& step : recipe)
    if (step.opt == "tiled_reduce") return true;
  return false;
}

}  // namespace

TEST(CudaRows, RowRecipesCompileWithWholeHalfAccessesAndLaunchBounds) {
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  const kiln::DeviceInfo device = kiln::passes::h200_preset();
  int compiled = 0, blocks_of_halves = 0, local_rows = 0, aligned_rows = 0, register_rows = 0, copied_rows = 0;
  for (const char* name : {"softmax-rows", "layernorm-rows", "rmsnorm-rows"})
    for (const char* dtype_name : {"f16", "bf16", "f32"})
      for (const std::int64_t n : {768, 16384, 50257}) {
        if (std::string(dtype_name) != "f16" && n == 16384) continue;  // bounded: f16 has every length
        const auto dtype = kiln::ir::dtype_from_name(dtype_name).value();
        const auto kernel = kiln::kernels::make_standard_kernel(name, {.m = 64, .n = n}, dtype).value();
        for (const kiln::passes::OptSequence& recipe : kiln::tune::default_search_space().recipes) {
          if (!is_row_recipe(recipe)) continue;
          const auto optimized = kiln::passes::optimize(kernel.kernel, recipe, device);
          if (!optimized.ok()) continue;  // the recipe does not fit this kernel
          SCOPED_TRACE(std::string(name) + " " + dtype_name + " n=" + std::to_string(n) + ": " +
                       kiln::passes::to_string(recipe));
          try {
            const std::string source = generate_cuda_source(optimized->to_wire());
            EXPECT_NE(source.find("__launch_bounds__("), std::string::npos) << source;
            const int loops = std::string(name) == "softmax-rows" ? 3 : 2;
            if (is_block_recipe_for(recipe, loops) && dtype != kiln::ir::DType::F32) {
              // The row in 16-byte loads, the output in 16-byte stores (8 lanes) or 8-byte ones.
              const std::string lanes = vector_lanes(recipe);
              EXPECT_NE(source.find("_bits = *(const kiln_u16x" + lanes + "*)(v0 + "), std::string::npos) << source;
              EXPECT_NE(source.find("*(kiln_u16x" + lanes + "*)(v"), std::string::npos) << source;
              ++blocks_of_halves;
              if (kiln::passes::to_string(recipe).find("local=1") != std::string::npos) {
                // The row kept in LOCAL memory is read back whole too (after the GLOBAL load).
                const std::string whole_load = "_bits = *(const kiln_u16x" + lanes + "*)(v";
                const auto first = source.find(whole_load);
                EXPECT_NE(source.find(whole_load, first + 1), std::string::npos) << source;
                // ... and stored there as it was loaded: no vector read whole is
                // converted back to halves (one conversion a lane, for nothing).
                for (std::size_t at = source.find(whole_load); at != std::string::npos; at = source.find(whole_load, at + 1)) {
                  const std::size_t name = source.rfind(' ', at) + 1;
                  const std::string loaded = source.substr(name, at - name);
                  EXPECT_EQ(source.find("_bits = {{kiln_f32_to_f16(" + loaded + ".v[0])"), std::string::npos) << loaded << "\n" << source;
                  EXPECT_EQ(source.find("_bits = {{kiln_f32_to_bf16(" + loaded + ".v[0])"), std::string::npos) << loaded << "\n" << source;
                }
                ++local_rows;
              }
            }
            if (is_aligned_recipe_for(recipe, loops) && dtype != kiln::ir::DType::F32) {
              // n = 50257 is odd, so rows start anywhere; split_aligned's blocks still
              // load and store whole 16-byte (8 lanes) or 8-byte vectors.
              const std::string lanes = vector_lanes(recipe);
              EXPECT_NE(source.find("_bits = *(const kiln_u16x" + lanes + "*)(v0 + "), std::string::npos) << source;
              EXPECT_NE(source.find("*(kiln_u16x" + lanes + "*)(v"), std::string::npos) << source;
              ++aligned_rows;
              const std::string text = kiln::passes::to_string(recipe);
              if (text.find("row_cache(loop=0)") != std::string::npos && text.find("peel_loop") == std::string::npos) {
                // The whole row in registers, kept as loaded (row_cache): a
                // 16-byte aligned array of halves, stored and read whole.
                const std::string array = "__align__(16) unsigned short v";
                const auto declared = source.find(array);
                ASSERT_NE(declared, std::string::npos) << source;
                const std::size_t id_at = declared + array.size() - 1;
                const std::string cache = source.substr(id_at, source.find('[', id_at) - id_at);
                EXPECT_NE(source.find("*(kiln_u16x8*)(" + cache + " + "), std::string::npos) << source;
                EXPECT_NE(source.find(" = *(const kiln_u16x8*)(" + cache + " + "), std::string::npos) << source;
                ++register_rows;
              }
            }
            if (kiln::passes::to_string(recipe).find("async_copies()") != std::string::npos) {
              // The LOCAL row's cached blocks copied in with cp.async, waited for once.
              EXPECT_NE(source.find("cp.async.cg.shared.global"), std::string::npos) << source;
              EXPECT_NE(source.find("cp.async.wait_group 0;"), std::string::npos) << source;
              ++copied_rows;
            }
            const int major = dtype == kiln::ir::DType::BF16 ? 8 : 9;
            const DeviceCode code = compile_cuda(nvrtc, source, major, 0, options);
            EXPECT_TRUE(code.is_cubin);
            ++compiled;
          } catch (const kiln::sdk::PluginError& e) {
            ADD_FAILURE() << e.what();
          }
        }
      }
  EXPECT_GT(blocks_of_halves, 8);
  EXPECT_GT(local_rows, 4);
  EXPECT_GT(aligned_rows, 8);
  EXPECT_GE(register_rows, 4);  // layernorm, rmsnorm, softmax in f16 and bf16 (whole rows of 50257)
  EXPECT_GE(copied_rows, 9);     // each kernel and dtype at n = 50257
  EXPECT_GT(compiled, 20);
}

// Softmax's exponentials (exp lowers to exp2 on the H200) are the hardware's
// ex2.approx.ftz.f32, not exp2f, whose fix-up for subnormal results is three
// more instructions an exp; NVRTC compiles the kernel for sm_90.
TEST(CudaRows, SoftmaxExponentialsAreTheHardwareEx2) {
  const NvrtcApi nvrtc = load_nvrtc(nvrtc_candidates(""));
  NvrtcOptions options;
  options.include_dirs = default_include_dirs();
  const std::string sequence =
      "reciprocal_divide(); tiled_reduce(loop=0,local=1024,branch=4); tiled_reduce(loop=1,local=1024,branch=4); "
      "tiled_reduce(loop=2,local=1024,branch=4); row_cache(loop=0); unroll(loop=2,factor=0); unroll(loop=1,factor=0); "
      "unroll(loop=0,factor=0)";
  for (const kiln::ir::DType dtype : {kiln::ir::DType::F16, kiln::ir::DType::F32}) {
    const auto kernel = kiln::kernels::make_standard_kernel("softmax-rows", {.m = 64, .n = 50257}, dtype).value();
    const auto optimized = kiln::passes::optimize(kernel.kernel, kiln::passes::parse_sequence(sequence).value(), kiln::passes::h200_preset());
    ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
    const std::string source = generate_cuda_source(optimized->to_wire());
    EXPECT_NE(source.find("ex2.approx.ftz.f32"), std::string::npos) << source;
    EXPECT_NE(source.find("kiln_exp2_f32("), std::string::npos) << source;
    EXPECT_EQ(source.find("exp2f("), std::string::npos) << source;
    EXPECT_TRUE(compile_cuda(nvrtc, source, 9, 0, options).is_cubin);
  }
}
