// peel_loop: one constant LOOP becomes a LOOP of its first iterations and a
// LOOP of the rest, computing exactly what it computed.
#include "passes/structural_test_support.hpp"

#include "kiln/ir/analysis.hpp"

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

std::vector<std::int64_t> loop_counts(const ir::Kernel& kernel) {
  std::vector<std::int64_t> counts;
  for (ir::ValueId id = 0; id < kernel.size(); ++id)
    if (kernel[id].kind == ir::OpKind::Loop) counts.push_back(ir::constant_int(kernel, kernel[id].src[0]).value_or(-1));
  return counts;
}

}  // namespace

TEST(PeelLoop, FirstIterationsAndTheRestKeepTheResults) {
  // softmax over rows of 13: each of its three loops peeled at 5 (8 left).
  ir::Kernel k = standard("softmax-rows", {4, 13, 1});
  for (int loop = 2; loop >= 0; --loop)
    k = expect_applies(k, "peel_loop(loop=" + std::to_string(loop) + ",count=5)", gpu_preset());
  EXPECT_EQ(loop_counts(k), (std::vector<std::int64_t>{5, 8, 5, 8, 5, 8}));
}

TEST(PeelLoop, RowCacheKeepsThePeeledPart) {
  // The first 5 elements of each row cached for the sum and writing loops;
  // the other 8 read again. Exact (row_cache is).
  ir::Kernel k = standard("softmax-rows", {4, 13, 1});
  for (int loop = 2; loop >= 0; --loop)
    k = expect_applies(k, "peel_loop(loop=" + std::to_string(loop) + ",count=5)", cpu_preset());
  const ir::Kernel cached = expect_applies(k, "row_cache(loop=0)", cpu_preset());
  int register_loads = 0;
  for (const ir::Op& op : cached.ops)
    register_loads += op.kind == ir::OpKind::Load && cached[op.src[0]].kind == ir::OpKind::Storage &&
                      cached[op.src[0]].imm >= 5;
  EXPECT_GE(register_loads, 2);  // the sum's and the writing loop's first parts read the cache
}

TEST(PeelLoop, ConfigsAndRefusals) {
  const ir::Kernel row_sum = standard("sum-rows", {2, 12, 1});
  EXPECT_EQ(config_texts("peel_loop", row_sum, gpu_preset()), (std::vector<std::string>{"peel_loop(loop=0,count=6)"}));
  EXPECT_NE(refusal(row_sum, "peel_loop(loop=0,count=12)").find("count must be in 1..11"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "peel_loop(loop=0,count=0)").find("count must be in 1..11"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "peel_loop(loop=1,count=2)").find("no LOOP number 1"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "peel_loop(loop=0,factor=2)").find("count"), std::string::npos);
  EXPECT_NE(refusal(parse_valid(kDynamicRowSum), "peel_loop(loop=0,count=2)").find("not a constant"), std::string::npos);
}
