// peel_loop: one constant LOOP becomes a LOOP of its first iterations and a
// LOOP of the rest, computing exactly what it computed.
#include "passes/structural_test_support.hpp"

#include "kiln/ir/analysis.hpp"
#include "kiln/passes/pipeline.hpp"

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

TEST(PeelLoop, NegativeCountsCountFromTheEnd) {
  // count=-1: all but the last iteration, which (a loop of one) becomes
  // straight code; after tiled_reduce that drops the guard of a thread's
  // full iterations (the bounds fold), so their loads are no longer under an IF.
  ir::Kernel k = expect_applies(standard("sum-rows", {2, 12, 1}), "peel_loop(loop=0,count=-1)", gpu_preset());
  EXPECT_EQ(loop_counts(k), (std::vector<std::int64_t>{11, 1}));
  // (tiled_reduce reassociates the sum, so it is applied unchecked; the peel is checked exactly.)
  const ir::Kernel split =
      passes::normalize(apply_step(standard("sum-rows", {2, 100, 1}), "tiled_reduce(loop=0,local=32,branch=2)", gpu_preset()).value(),
                        gpu_preset());
  const ir::Kernel peeled = passes::normalize(expect_applies(split, "peel_loop(loop=0,count=-1)", gpu_preset()), gpu_preset());
  EXPECT_EQ(loop_counts(peeled), (std::vector<std::int64_t>{3}));  // ceil(100 / 32) = 4: 3, then the guarded one inline
  int ifs_in_loop = 0;
  const ir::Blocks blocks = ir::analyze_blocks(peeled);
  for (ir::ValueId id = 0; id < peeled.size(); ++id)
    ifs_in_loop += peeled[id].kind == ir::OpKind::If && blocks.loop_depth[id] > 0;
  EXPECT_EQ(ifs_in_loop, 0) << ir::print(peeled);
}

TEST(PeelLoop, ConfigsAndRefusals) {
  const ir::Kernel row_sum = standard("sum-rows", {2, 12, 1});
  EXPECT_EQ(config_texts("peel_loop", row_sum, gpu_preset()), (std::vector<std::string>{"peel_loop(loop=0,count=6)"}));
  EXPECT_NE(refusal(row_sum, "peel_loop(loop=0,count=12)").find("count must be in 1..11"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "peel_loop(loop=0,count=0)").find("count must be in 1..11"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "peel_loop(loop=0,count=-12)").find("or -11..-1"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "peel_loop(loop=1,count=2)").find("no LOOP number 1"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "peel_loop(loop=0,factor=2)").find("count"), std::string::npos);
  EXPECT_NE(refusal(parse_valid(kDynamicRowSum), "peel_loop(loop=0,count=2)").find("not a constant"), std::string::npos);
}
