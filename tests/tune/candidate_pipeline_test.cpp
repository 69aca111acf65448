// The compile pipeline (core/tune/candidate_pipeline.hpp): candidates come
// back prepared in queue order, and the tuner's may_submit predicate stops
// compiles that would not finish before the deadline (the first, the
// heuristic choice, always starts).
#include <gtest/gtest.h>

#include "kiln/kernels/library.hpp"
#include "kiln/passes/optimization.hpp"
#include "kiln/tune/search_space.hpp"
#include "tune/candidate_pipeline.hpp"
#include "tune/dummy_device.hpp"

using namespace kiln;
using kiln::tune::SearchCandidate;
using kiln::tune::detail::CandidatePipeline;

namespace {

ir::Kernel add_kernel() { return kernels::make_standard_kernel("add", {.m = 1, .n = 4096}).value().kernel; }

std::vector<SearchCandidate> splits() {
  std::vector<SearchCandidate> queue;
  for (int factor : {256, 128, 64, 32}) {
    SearchCandidate c;
    c.sequence = passes::parse_sequence("split_local(axis=0,factor=" + std::to_string(factor) + ")").value();
    queue.push_back(std::move(c));
  }
  return queue;
}

std::size_t prepared(CandidatePipeline& pipeline) {
  std::size_t count = 0;
  while (std::optional<tune::detail::PreparedCandidate> p = pipeline.next()) {
    EXPECT_FALSE(p->failure) << p->error;
    EXPECT_GE(p->prepare_seconds, 0);
    ++count;
  }
  return count;
}

TEST(CandidatePipeline, HandsOutEveryCandidateInQueueOrder) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = add_kernel();
  CandidatePipeline pipeline(device, kernel, tune::default_search_space(), splits(), 2, /*overlap=*/true, 0);
  pipeline.start();
  EXPECT_EQ(pipeline.next()->text, "split_local(axis=0,factor=256)");
  EXPECT_EQ(prepared(pipeline), 3u);
}

TEST(CandidatePipeline, MaySubmitStopsEveryCompileButTheFirst) {
  const Device device = test::dummy_device();
  const ir::Kernel kernel = add_kernel();
  CandidatePipeline pipeline(device, kernel, tune::default_search_space(), splits(), 2, /*overlap=*/true, 0);
  int asked = 0;
  pipeline.set_may_submit([&] {
    ++asked;
    return false;  // no time left for another compile
  });
  pipeline.start();
  EXPECT_EQ(prepared(pipeline), 1u) << "the heuristic choice only";
  EXPECT_EQ(asked, 1) << "asked once, then submitting stopped";
}

}  // namespace

// Each job but the first asks the compile forecast (compile_forecast.hpp)
// once its kernel is lowered: past the deadline, with a compile known to be
// slow, no compile starts (the job is Skipped, with the forecast's reason),
// and compiles that do run tell it what they took.
TEST(CandidatePipeline, AForecastPastTheDeadlineSkipsTheCompileAndNamesWhy) {
  using tune::detail::CompileForecast;
  const Device device = test::dummy_device();
  const ir::Kernel kernel = add_kernel();
  CompileForecast late(CompileForecast::Clock::now() + std::chrono::milliseconds(100));
  late.took(10, 3600);  // a compile of 10 ops took an hour
  CandidatePipeline pipeline(device, kernel, tune::default_search_space(), splits(), 2, /*overlap=*/true, 0, &late);
  std::size_t skipped = 0;
  const std::optional<tune::detail::PreparedCandidate> first = pipeline.next();
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->failure) << "the first is always compiled: " << first->error;
  while (std::optional<tune::detail::PreparedCandidate> p = pipeline.next()) {
    ASSERT_TRUE(p->failure);
    EXPECT_EQ(*p->failure, tune::CandidateStatus::Skipped);
    EXPECT_NE(p->error.find("not compiled"), std::string::npos) << p->error;
    EXPECT_NE(p->error.find("before the budget's deadline"), std::string::npos) << p->error;
    ++skipped;
  }
  EXPECT_EQ(skipped, 3u);

  CompileForecast roomy(CompileForecast::Clock::now() + std::chrono::hours(1));
  CandidatePipeline timed(device, kernel, tune::default_search_space(), splits(), 2, /*overlap=*/true, 0, &roomy);
  EXPECT_EQ(prepared(timed), 4u);
  EXPECT_GT(roomy.predict_s({1, false}), 0) << "the compiles told it what they took";
}
