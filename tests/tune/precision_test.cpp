// Precision: tf32 matrix products only when a tuning allows them, checked
// with tf32's tolerance, and recorded apart from exact tunings.
#include <gtest/gtest.h>

#include "kiln/kernels/library.hpp"
#include "kiln/passes/pipeline.hpp"
#include "kiln/tune/tuner.hpp"
#include "tune/dummy_device.hpp"

#include <string>

namespace kiln::tune {
namespace {

bool has_tf32_recipe(const SearchSpace& space) {
  for (const passes::OptSequence& recipe : space.recipes)
    if (passes::to_string(recipe).find("tf32=1") != std::string::npos) return true;
  return false;
}

TEST(Precision, TheTf32SpaceIsTheDefaultPlusTf32RecipesUnderItsOwnVersion) {
  const SearchSpace& exact = default_search_space();
  const SearchSpace& tf32 = default_search_space(Precision::AllowTf32);
  EXPECT_FALSE(has_tf32_recipe(exact));
  EXPECT_TRUE(has_tf32_recipe(tf32));
  EXPECT_EQ(tf32.version, exact.version + "+tf32");
  EXPECT_EQ(tf32.recipes.size(), exact.recipes.size() + 12);  // default_space.cpp's six wgmma_staged and six mma_staged tf32 recipes
  TuneOptions options;
  EXPECT_EQ(&search_space_of(options), &exact);
  options.settings.allow_tf32 = true;
  EXPECT_EQ(&search_space_of(options), &tf32);
}

TuneOptions quick(const kernels::StandardKernel& k, bool allow_tf32) {
  TuneOptions options;
  options.settings.n_launches = 12;
  options.settings.n_seeds = 4;
  options.settings.n_total_opts = 0;
  options.settings.repeats = 1;
  options.settings.warmups = 0;
  options.settings.budget_s = 120;
  options.settings.allow_tf32 = allow_tf32;
  options.args = k.args;
  options.kernel_name = k.name;
  return options;
}

// An f32 matmul on a device with the tf32 MMA: the exact tuning never
// measures a tf32 candidate; the tf32 one measures its recipes, which pass
// the check against the exact reference only with tf32's tolerance (the
// interpreter rounds each input to tf32, as the hardware does), and its key
// differs.
TEST(Precision, Tf32CandidatesAreMeasuredOnlyWhenAllowedAndPassTheirCheck) {
  const Device device = test::dummy_mma_device();
  const kernels::StandardKernel k = kernels::make_standard_kernel("matmul", {64, 64, 64}).value();
  ASSERT_GT(k.tf32_tolerance, 10 * k.tolerance);

  const TuneResult exact = tune_kernel(device, k.kernel, quick(k, false)).value();
  for (const CandidateRecord& r : exact.entry.candidates)
    EXPECT_EQ(r.sequence.find("tf32"), std::string::npos) << r.sequence;

  const TuneResult tf32 = tune_kernel(device, k.kernel, quick(k, true)).value();
  unsigned measured_tf32 = 0;
  for (const CandidateRecord& r : tf32.entry.candidates) {
    if (r.sequence.find("tf32=1") == std::string::npos) continue;
    EXPECT_NE(r.status, CandidateStatus::Mismatch) << r.sequence << ": " << r.error;
    if (r.status == CandidateStatus::Measured || r.status == CandidateStatus::Aborted) ++measured_tf32;
    if (r.max_error >= 0) {
      EXPECT_GT(r.max_error, 2 * k.tolerance) << r.sequence << ": tf32 rounding shows";
    }
  }
  EXPECT_GE(measured_tf32, 1u);
  EXPECT_NE(tf32.entry.key.space_version, exact.entry.key.space_version);
  EXPECT_EQ(tf32.entry.key.kernel_hash, exact.entry.key.kernel_hash);
}

// On a device with the tf32 WGMMA the tf32 tuning measures wgmma_staged's
// tf32 recipes too, and they pass the check with tf32's tolerance (the
// WGMMA truncates each input to tf32).
TEST(Precision, Tf32WgmmaRecipesAreMeasuredWhereTheDeviceHasWgmma) {
  const Device device = test::dummy_wgmma_device();
  const kernels::StandardKernel k = kernels::make_standard_kernel("matmul", {128, 128, 128}).value();
  const TuneResult tf32 = tune_kernel(device, k.kernel, quick(k, true)).value();
  unsigned measured_wgmma = 0;
  for (const CandidateRecord& r : tf32.entry.candidates) {
    if (r.sequence.find("wgmma_staged") == std::string::npos) continue;
    EXPECT_NE(r.sequence.find("tf32=1"), std::string::npos) << r.sequence;  // f32 takes it only as tf32
    EXPECT_NE(r.status, CandidateStatus::Mismatch) << r.sequence << ": " << r.error;
    if (r.status == CandidateStatus::Measured || r.status == CandidateStatus::Aborted) ++measured_wgmma;
  }
  EXPECT_GE(measured_wgmma, 1u);
  const TuneResult exact = tune_kernel(device, k.kernel, quick(k, false)).value();
  for (const CandidateRecord& r : exact.entry.candidates) EXPECT_EQ(r.sequence.find("wgmma"), std::string::npos) << r.sequence;
}

}  // namespace
}  // namespace kiln::tune
