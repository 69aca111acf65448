// Random sequences of the structural optimizations, through apply_sequence
// (normalize after every step), on the standard kernels at odd sizes and a
// kernel with dynamic lengths, for the three device presets: every step
// chosen among the current kernel's configs applies, and the final kernel
// computes what the original computed on the reference interpreter. (The
// passes-core differential test mixes in every registered optimization and
// runs on c:0 too; this one pins the structural ones down in their own
// binary.)
#include "passes/structural_test_support.hpp"

#include <random>

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

constexpr std::string_view kStructural[] = {"split_local", "coarsen",     "split_loop", "unroll",     "merge_loops",
                                            "swap_loops",  "swap_axes",   "pad",        "reassociate"};

std::vector<OptStep> structural_configs(const ir::Kernel& kernel, const DeviceInfo& device) {
  std::vector<OptStep> steps;
  for (std::string_view name : kStructural)
    for (OptStep& step : find_optimization(name)->configs(kernel, device)) steps.push_back(std::move(step));
  return steps;
}

// Applies up to `length` random configs one by one; returns the sequence used.
std::string random_walk(const ir::Kernel& kernel, const DeviceInfo& device, std::mt19937_64& rng, int length,
                        std::span<const double> scalars) {
  ir::Kernel current = normalize(kernel, device);
  OptSequence applied;
  for (int i = 0; i < length; ++i) {
    const std::vector<OptStep> configs = structural_configs(current, device);
    if (configs.empty()) break;
    const OptStep& step = configs[rng() % configs.size()];
    Result<ir::Kernel> next = apply_sequence(current, {step}, device);
    if (!next.ok()) {
      ADD_FAILURE() << "a listed config was refused after `" << to_string(applied) << "`: "
                    << next.error().to_string() << "\n" << ir::print(current);
      break;
    }
    applied.push_back(step);
    current = std::move(next).value();
  }
  if (std::string diff = compare_runs(kernel, current, scalars); !diff.empty())
    ADD_FAILURE() << "`" << to_string(applied) << "` on " << device.id << " changed the results: " << diff
                  << "\nbefore:\n" << ir::print(kernel) << "after:\n" << ir::print(current);
  return to_string(applied);
}

}  // namespace

TEST(StructuralSequences, RandomSequencesKeepTheResults) {
  std::mt19937_64 rng(20261129);
  for (const DeviceInfo& device : presets())
    for (const ir::Kernel& kernel : odd_standard_kernels())
      for (int walk = 0; walk < 3; ++walk) random_walk(kernel, device, rng, 6, {});
}

TEST(StructuralSequences, RandomSequencesOnDynamicLengthsKeepTheResults) {
  std::mt19937_64 rng(7);
  const ir::Kernel dynamic = parse_valid(kDynamicRowSum);
  for (const DeviceInfo& device : presets())
    for (const std::vector<double>& sizes : {std::vector<double>{12, 8}, {5, 19}, {1, 1}, {7, 0}})
      for (int walk = 0; walk < 3; ++walk) random_walk(dynamic, device, rng, 6, sizes);
}

TEST(StructuralSequences, ConfigsAreFastAndFiniteOnLargeAndDynamicKernels) {
  // Huge constant lengths (divisor search is bounded) and dynamic ones:
  // every configs() returns a short list.
  const std::vector<ir::Kernel> kernels = {standard("add", {1, (std::int64_t{1} << 40) - 1, 1}),
                                           standard("matmul", {1 << 20, 1 << 20, 1 << 20}),
                                           parse_valid(kDynamicRowSum)};
  for (const DeviceInfo& device : presets())
    for (const ir::Kernel& kernel : kernels)
      for (std::string_view name : kStructural)
        EXPECT_LE(find_optimization(name)->configs(kernel, device).size(), 64u) << name;
}
