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
  return name == "register_block" || name == "tiled_reduce" || name == "local_tile" || name == "vectorize";
}

}  // namespace

TEST(PerfSequences, RandomSequencesKeepTheResults) {
  const std::pair<std::string_view, kernels::KernelSize> cases[] = {
      {"matmul", {.m = 16, .n = 32, .k = 8}},     {"matmul-bt", {.m = 8, .n = 16, .k = 12}},
      {"sum-rows", {.m = 3, .n = 70}},            {"max-rows", {.m = 4, .n = 33}},
      {"softmax-rows", {.m = 2, .n = 50}},        {"layernorm-rows", {.m = 3, .n = 40}},
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
