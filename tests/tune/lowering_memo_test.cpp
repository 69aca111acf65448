// One tuning's lowering memo (tune/lowering_memo.hpp) gives what the default
// space's own lowering gives: the same kernel for every recipe that applies,
// the same error, with the same step number, for every one that does not.
#include <gtest/gtest.h>

#include "kiln/kernels/library.hpp"
#include "kiln/passes/device_presets.hpp"
#include "kiln/passes/optimization.hpp"
#include "kiln/tune/search_space.hpp"
#include "tune/lowering_memo.hpp"

using namespace kiln;

namespace {

void expect_same_lowerings(const ir::Kernel& kernel, const DeviceInfo& device, std::size_t& applied, std::size_t& failed) {
  const tune::SearchSpace& space = tune::default_search_space();
  const tune::SearchSpace memoized = tune::detail::with_lowering_memo(space);
  for (int pass = 0; pass < 2; ++pass) {  // the second time from the memo
    for (const passes::OptSequence& recipe : space.recipes) {
      const Result<ir::Kernel> plain = space.lower(kernel, recipe, device);
      const Result<ir::Kernel> remembered = memoized.lower(kernel, recipe, device);
      ASSERT_EQ(plain.ok(), remembered.ok()) << passes::to_string(recipe);
      if (plain.ok()) {
        EXPECT_TRUE(*plain == *remembered) << passes::to_string(recipe);
        applied += pass == 0;
      } else {
        EXPECT_EQ(plain.error().to_string(), remembered.error().to_string());
        failed += pass == 0;
      }
    }
  }
}

}  // namespace

TEST(LoweringMemo, GivesWhatTheLoweringGivesForEveryRecipe) {
  for (const char* preset : {"preset:gpu", "preset:cpu"}) {
    const DeviceInfo device = *passes::device_preset(preset);
    for (const char* name : {"softmax-rows", "layernorm-rows", "matmul"}) {
      const kernels::StandardKernel k =
          kernels::make_standard_kernel(name, kernels::KernelSize{256, 4096, 256}, ir::DType::F16).value();
      std::size_t applied = 0, failed = 0;
      expect_same_lowerings(k.kernel, device, applied, failed);
      // Both kinds were compared: some recipes fit each kernel, others do not.
      EXPECT_GT(applied, 0u) << name << " on " << preset;
      EXPECT_GT(failed, 0u) << name << " on " << preset;
    }
  }
}

TEST(LoweringMemo, StepsAppliedOneByOneMatchTheSearchSpacesApply) {
  const DeviceInfo device = *passes::device_preset("preset:gpu");
  const tune::SearchSpace& space = tune::default_search_space();
  const tune::SearchSpace memoized = tune::detail::with_lowering_memo(space);
  const kernels::StandardKernel k =
      kernels::make_standard_kernel("softmax-rows", kernels::KernelSize{64, 1024, 1}, ir::DType::F32).value();
  const ir::Kernel normalized = space.normalize(k.kernel, device);
  const passes::OptStep step = passes::parse_sequence("tiled_reduce(loop=0,local=256,branch=4)").value().front();
  const Result<ir::Kernel> plain = space.apply(normalized, step, device);
  ASSERT_TRUE(plain.ok()) << plain.error().to_string();
  for (int i = 0; i < 2; ++i) {
    const Result<ir::Kernel> remembered = memoized.apply(normalized, step, device);
    ASSERT_TRUE(remembered.ok());
    EXPECT_TRUE(*plain == *remembered);
  }
}
