// The four performance optimizations together: random sequences of their
// configs (the shapes the autotuner will try) on the standard kernels, for
// the GPU-shaped, small and CPU-shaped presets, each checked against the
// unoptimized kernel on the interpreter. Fixed seed, bounded count
// (KILN_PERF_SEQUENCES=N and KILN_PERF_SEED=S for a longer soak); the
// passes-core differential test runs sequences of everything registered.
#include "passes/opt_perf_support.hpp"

#include <cstdlib>
#include <random>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

constexpr std::uint64_t kSeed = 20261129;
constexpr int kSequencesPerCase = 6;

std::uint64_t from_env(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::strtoull(text, nullptr, 10) : fallback;
}
constexpr int kMaxSteps = 4;

bool is_perf_optimization(std::string_view name) {
  return name == "register_block" || name == "tiled_reduce" || name == "local_tile" || name == "vectorize" ||
         name == "lane_reduce" || name == "row_cache" || name == "online_softmax";
}

}  // namespace

TEST(PerfSequences, RandomSequencesKeepTheResults) {
  const std::pair<std::string_view, kernels::KernelSize> cases[] = {
      {"matmul", {.m = 16, .n = 32, .k = 8}},     {"matmul-bt", {.m = 8, .n = 16, .k = 12}},
      {"sum-rows", {.m = 3, .n = 70}},            {"max-rows", {.m = 4, .n = 33}},
      {"softmax-rows", {.m = 2, .n = 50}},        {"layernorm-rows", {.m = 3, .n = 40}},
      {"rmsnorm-rows", {.m = 3, .n = 33}},
      {"exp-chain", {.n = 64}},                   {"transpose", {.m = 8, .n = 16}},
  };
  const DeviceInfo devices[] = {gpu_preset(), small_preset(), cpu_preset()};
  std::mt19937_64 rng(from_env("KILN_PERF_SEED", kSeed));
  const auto sequences = static_cast<int>(from_env("KILN_PERF_SEQUENCES", kSequencesPerCase));
  int applied_steps = 0;
  for (const auto& [name, size] : cases) {
    const kernels::StandardKernel k = standard(name, size);
    for (const DeviceInfo& device : devices)
      for (int sequence = 0; sequence < sequences; ++sequence) {
        ir::Kernel current = normalize(k.kernel, device);
        OptSequence steps;
        for (int step = 0; step < kMaxSteps; ++step) {
          std::vector<OptStep> candidates;
          for (const Optimization* optimization : optimizations())
            if (is_perf_optimization(optimization->name()))
              for (OptStep& s : optimization->configs(current, device)) candidates.push_back(std::move(s));
          if (candidates.empty()) break;
          const OptStep chosen = candidates[rng() % candidates.size()];
          Result<ir::Kernel> next = apply_sequence(current, {chosen}, device);
          ASSERT_TRUE(next.ok()) << name << " on " << device.id << ": " << to_string(steps) << "; " << chosen.to_string()
                                 << ": " << next.error().to_string();
          current = std::move(next).value();
          steps.push_back(chosen);
          ++applied_steps;
        }
        const ir::Kernel final_kernel = finalize(current, device);
        EXPECT_EQ(compare_standard(k, final_kernel, 100 + static_cast<std::uint64_t>(sequence), 4), "")
            << name << " on " << device.id << ": " << to_string(steps) << "\n" << ir::print(final_kernel);
      }
  }
  EXPECT_GT(applied_steps, 100);  // the sequences did something
}

TEST(PerfSequences, GpuShapedSequencesReachTheProbeShapes) {
  // The shapes of the hand-written GPU probes (tests/support/probe_kernels.hpp),
  // reached from the standard kernels with the structural optimizations.
  for (const char* needed : {"coarsen", "split_local", "split_loop", "unroll"})
    if (find_optimization(needed) == nullptr) GTEST_SKIP() << needed << " is not registered in this build";
  struct Case {
    std::string_view kernel;
    kernels::KernelSize size;
    std::string_view sequence;
    std::vector<std::string_view> expected;  // substrings of the optimized kernel
  };
  const Case cases[] = {
      // 4 consecutive elements per thread, 256 threads: float4 loads and stores.
      {"exp-chain", {.n = 8192},
       "coarsen(axis=0,factor=4,mode=0); split_local(axis=0,factor=256); unroll(loop=0,factor=0); vectorize(lanes=4)",
       {"= load f32x4 %0[", "store f32x4 %1["}},
      {"add", {.n = 8192},
       "coarsen(axis=0,factor=4,mode=0); split_local(axis=0,factor=256); unroll(loop=0,factor=0); vectorize(lanes=4)",
       {"= load f32x4 %0[", "= load f32x4 %1[", "store f32x4 %2["}},
      // A row per group of 256 threads, 4-wide loads, a LOCAL tree.
      {"sum-rows", {.m = 4, .n = 4096},
       "split_loop(loop=0,factor=4); unroll(loop=1,factor=0); tiled_reduce(loop=0,local=256,branch=2); vectorize(lanes=4)",
       {"= load f32x4 %0[", "index local 0", "barrier"}},
      // 128 x 128 blocks, 8 x 8 per thread, float4 copies and stores.
      {"matmul", {.m = 128, .n = 128, .k = 32},
       "local_tile(bm=128,bn=128,bk=8,tm=8,tn=8); vectorize(lanes=4)",
       {"= load f32x4 %0[", "= load f32x4 %1[", "store f32x4 %2[", "storage local f32[1024]"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.kernel) + ": " + std::string(c.sequence));
    const kernels::StandardKernel k = standard(c.kernel, c.size);
    Result<ir::Kernel> optimized = optimize(k.kernel, parse_sequence(c.sequence).value(), gpu_preset());
    ASSERT_TRUE(optimized.ok()) << optimized.error().to_string();
    const std::string text = ir::print(*optimized);
    for (std::string_view expected : c.expected) EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
    EXPECT_EQ(compare_standard(k, *optimized, 5, 4), "");
  }
}

TEST(PerfSequences, BrokenKernelsGetErrorsNotCrashes) {
  // A reduction whose loop is never closed, and one whose add names a later op.
  const std::string_view broken[] = {R"(
%x = param 0 global f32[16]
%y = param 1 global_mut f32[4]
%four = const i64 4
%g = index group 0 %four
%h = index group 1 %four
%acc = storage register f32[1]
%at = const i64 0
%j = loop %four
  %v = load f32 %x[%j]
  store %acc[%at], %v
)",
                                     R"(
%x = param 0 global f32[16]
%y = param 1 global_mut f32[4]
%four = const i64 4
%g = index group 0 %four
%h = index group 1 %four
%acc = storage register f32[1]
%at = const i64 0
%j = loop %four
  %v = load f32 %x[%j]
  %s = raw kind=13 dtype=3 lanes=1 code=1 attr=0 src=@9,@40,_ reserved=0 imm=0
  store %acc[%at], %s
endloop
)"};
  const std::string_view steps[] = {"register_block(loop=0,tm=2,tn=2)", "tiled_reduce(loop=0,local=4)",
                                    "local_tile(bm=4,bn=4,bk=2,tm=2,tn=2)", "vectorize(lanes=2)"};
  for (std::string_view text : broken) {
    Result<ir::Kernel> kernel = ir::parse(text);
    ASSERT_TRUE(kernel.ok()) << kernel.error().to_string();
    ASSERT_FALSE(ir::verify(*kernel).ok());
    for (std::string_view step : steps) {
      const Optimization* optimization = find_optimization(OptStep::parse(step)->opt);
      EXPECT_TRUE(optimization->configs(*kernel, gpu_preset()).empty()) << step;
      Result<ir::Kernel> out = apply_step(*kernel, step, gpu_preset());
      ASSERT_FALSE(out.ok()) << step;
      EXPECT_EQ(out.error().code, ErrorCode::InvalidArgument) << step;
      EXPECT_NE(out.error().message.find("does not verify"), std::string::npos) << out.error().message;
    }
  }
}
