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
