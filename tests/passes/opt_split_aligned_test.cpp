// split_aligned: a LOOP over a row that starts anywhere becomes aligned
// blocks of a constant count and the row's scalar loose ends (a
// reduction's first, in one loop of constant count; a parallel loop's as a
// head and a tail around the blocks), computing what it computed
// (expect_applies runs both on the interpreter; a float sum reassociates).
#include "passes/structural_test_support.hpp"

#include "kiln/ir/analysis.hpp"

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

// y[g] = sum of x[g*37 .. g*37+36]: rows of 37 start at every residue mod 8.
constexpr std::string_view kOddRowSum = R"(
%0 = param 0 global f32[296]
%1 = param 1 global_mut f32[8]
%2 = const i64 8
%3 = const i64 37
%4 = index group 0 %2
%5 = mul i64 %4, %3
%6 = const f32 0
%7 = storage register f32[1]
%8 = const i64 0
store f32 %7[%8], %6
%10 = loop %3
  %11 = add i64 %5, %10
  %12 = load f32 %0[%11]
  %13 = load f32 %7[%8]
  %14 = add f32 %13, %12
  store f32 %7[%8], %14
endloop %10
%17 = load f32 %7[%8]
store f32 %1[%4], %17
)";

std::vector<ir::ValueId> loops_of(const ir::Kernel& kernel) {
  std::vector<ir::ValueId> loops;
  for (ir::ValueId id = 0; id < kernel.size(); ++id)
    if (kernel[id].kind == ir::OpKind::Loop) loops.push_back(id);
  return loops;
}

}  // namespace

// The relative error a reassociated f32 sum of 37 random inputs stays under.
constexpr double kReassociated = 1e-5;

TEST(SplitAligned, AReductionsLooseEndsComeFirstInALoopOfConstantCount) {
  const ir::Kernel out =
      expect_applies(parse_valid(kOddRowSum), "split_aligned(loop=0,factor=8)", gpu_preset(), {}, 7, kReassociated);
  const std::vector<ir::ValueId> loops = loops_of(out);
  ASSERT_EQ(loops.size(), 3u);  // loose ends, blocks, the block's 8
  // 37 - 3 * 8 = 13 loose elements and (37 - 7) / 8 = 3 blocks whatever the
  // row's alignment; the block 8.
  EXPECT_EQ(ir::constant_int(out, out[loops[0]].src[0]), 13);
  EXPECT_EQ(ir::constant_int(out, out[loops[1]].src[0]), 3);
  EXPECT_EQ(ir::constant_int(out, out[loops[2]].src[0]), 8);
  EXPECT_LT(loops[0], loops[1]);
  // Max is not reassociated: exact.
  std::string text(kOddRowSum);
  text.replace(text.find("add f32 %13"), 3, "max");
  expect_applies(parse_valid(text), "split_aligned(loop=0,factor=8)", gpu_preset());
}

TEST(SplitAligned, BlocksBecomeAlignedVectorLoads) {
  // After unrolling the block, vectorize proves each block's first index a
  // multiple of 8 (rows of 37 elements start anywhere): one 8-lane load.
  const ir::Kernel split =
      expect_applies(parse_valid(kOddRowSum), "split_aligned(loop=0,factor=8)", gpu_preset(), {}, 7, kReassociated);
  const ir::Kernel unrolled = expect_applies(split, "unroll(loop=2,factor=0)", gpu_preset());
  DeviceInfo wide = gpu_preset();
  wide.vector_width_mask |= 1u << 8;
  const ir::Kernel vectors = expect_applies(unrolled, "vectorize(lanes=8)", wide);
  int vector_loads = 0, scalar_loads = 0;
  for (const ir::Op& op : vectors.ops)
    if (op.kind == ir::OpKind::Load && op.src[0] == 0) (op.lanes == 8 ? vector_loads : scalar_loads) += 1;
  EXPECT_EQ(vector_loads, 1);
  EXPECT_EQ(scalar_loads, 1);  // the loose ends'
}

TEST(SplitAligned, SoftmaxAtAnOddLengthKeepsItsResults) {
  // Three loops, each split: every row of 50 elements (residues 0, 2, 4, 6
  // mod 8). The max and sum loops get their loose ends first (2 loops each),
  // the writing loop (parallel) a head and a tail around its blocks (3).
  ir::Kernel k = standard("softmax-rows", {9, 50, 1});
  for (int loop = 2; loop >= 0; --loop) {
    k = expect_applies(k, "split_aligned(loop=" + std::to_string(loop) + ",factor=8)", gpu_preset(), {}, 7, 1e-5);
    k = expect_applies(k, "unroll(loop=" + std::to_string(loop + 2) + ",factor=0)", gpu_preset());
  }
  const std::vector<ir::ValueId> loops = loops_of(k);
  ASSERT_EQ(loops.size(), 7u);
  for (int loose : {0, 2}) EXPECT_TRUE(ir::constant_int(k, k[loops[loose]].src[0]).has_value());
  for (int head_or_tail : {4, 6}) EXPECT_FALSE(ir::constant_int(k, k[loops[head_or_tail]].src[0]).has_value());
}

TEST(SplitAligned, FlatKeepsTheBlocksOneLoop) {
  // flat=1: the blocks are one loop of 3 * 8 = 24 iterations after the 13
  // loose ends, the shape of a row of length 24 (split_loop and lane_reduce
  // take it as they take such a row), and its first index stays aligned.
  const ir::Kernel flat = expect_applies(parse_valid(kOddRowSum), "split_aligned(loop=0,factor=8,flat=1)", gpu_preset(), {}, 7,
                                         kReassociated);
  std::vector<ir::ValueId> loops = loops_of(flat);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(ir::constant_int(flat, flat[loops[0]].src[0]), 13);
  EXPECT_EQ(ir::constant_int(flat, flat[loops[1]].src[0]), 24);
  const ir::Kernel split = expect_applies(flat, "split_loop(loop=1,factor=8)", gpu_preset(), {}, 7, kReassociated);
  const ir::Kernel unrolled = expect_applies(split, "unroll(loop=2,factor=0)", gpu_preset());
  DeviceInfo wide = gpu_preset();
  wide.vector_width_mask |= 1u << 8;
  const ir::Kernel vectors = expect_applies(unrolled, "vectorize(lanes=8)", wide);
  int vector_loads = 0;
  for (const ir::Op& op : vectors.ops)
    if (op.kind == ir::OpKind::Load && op.src[0] == 0 && op.lanes == 8) {
      ++vector_loads;
      EXPECT_EQ(op.attr, 0u);  // aligned, not KILN_ACCESS_UNALIGNED
    }
  EXPECT_EQ(vector_loads, 1);
  // A parallel loop (softmax's writing loop, rows of 50): head, blocks, tail;
  // lane_reduce's partials over the flat blocks of the sum leave no remainder.
  ir::Kernel softmax = standard("softmax-rows", {9, 50, 1});
  for (int loop = 2; loop >= 0; --loop)
    softmax = expect_applies(softmax, "split_aligned(loop=" + std::to_string(loop) + ",factor=8,flat=1)", gpu_preset(), {}, 7, 1e-5);
  loops = loops_of(softmax);
  ASSERT_EQ(loops.size(), 7u);  // max: loose, blocks; sum: loose, blocks; writing: head, blocks, tail
  EXPECT_EQ(ir::constant_int(softmax, softmax[loops[3]].src[0]), 40);
  EXPECT_EQ(ir::constant_int(softmax, softmax[loops[5]].src[0]), 40);
  const ir::Kernel partials = expect_applies(softmax, "lane_reduce(loop=3,lanes=8)", gpu_preset(), {}, 7, 1e-5);
  EXPECT_EQ(loops_of(partials).size(), 7u);
}

TEST(SplitAligned, RefusesALoopWhoseIterationsDependOnEachOther) {
  // A prefix sum (each iteration stores the running sum): its tail cannot
  // run before its blocks. The row sum above, made to store each prefix.
  std::string text(kOddRowSum);
  text.replace(text.find("global_mut f32[8]"), 17, "global_mut f32[296]");
  const std::string accumulate = "  store f32 %7[%8], %14\n";
  text.insert(text.find(accumulate) + accumulate.size(), "  store f32 %1[%11], %14\n");
  text.erase(text.find("%17 = load"));
  const ir::Kernel prefix = parse_valid(text);
  EXPECT_NE(refusal(prefix, "split_aligned(loop=0,factor=8)").find("may not be reordered"), std::string::npos);
  EXPECT_TRUE(config_texts("split_aligned", prefix, gpu_preset()).empty());
}

TEST(SplitAligned, ConfigsSkipRowsThatStartAligned) {
  EXPECT_EQ(config_texts("split_aligned", parse_valid(kOddRowSum), gpu_preset()),
            (std::vector<std::string>{"split_aligned(loop=0,factor=8)", "split_aligned(loop=0,factor=4)"}));
  // Rows of 16: every row starts at a multiple of 8 (split_loop's case).
  EXPECT_TRUE(config_texts("split_aligned", standard("sum-rows", {4, 16, 1}), gpu_preset()).empty());
  // Rows of 20: aligned to 4 but not to 8.
  EXPECT_EQ(config_texts("split_aligned", standard("sum-rows", {4, 20, 1}), gpu_preset()),
            (std::vector<std::string>{"split_aligned(loop=0,factor=8)"}));
}

TEST(SplitAligned, RefusesStepsThatDoNotFit) {
  const ir::Kernel row_sum = parse_valid(kOddRowSum);
  EXPECT_NE(refusal(row_sum, "split_aligned(loop=0,factor=32)").find("below twice the factor"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "split_aligned(loop=0,factor=1)").find("at least 2"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "split_aligned(loop=1,factor=8)").find("no LOOP number 1"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "split_aligned(loop=0,factor=8,lanes=8)").find("unknown parameter 'lanes'"), std::string::npos);
  EXPECT_NE(refusal(row_sum, "split_aligned(loop=0,factor=8,flat=2)").find("flat must be 0 or 1"), std::string::npos);
  EXPECT_NE(refusal(standard("sum-rows", {4, 16, 1}), "split_aligned(loop=0,factor=8)").find("split_loop"),
            std::string::npos);
  EXPECT_NE(refusal(parse_valid(kDynamicRowSum), "split_aligned(loop=0,factor=4)").find("not a constant"),
            std::string::npos);
}
