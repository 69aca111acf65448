// split_aligned: a LOOP over a row that starts anywhere becomes a scalar
// head, aligned blocks of a constant count and a scalar tail, computing
// exactly what it computed (expect_applies runs both on the interpreter).
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

TEST(SplitAligned, HeadConstantBlocksAndTailComputeTheSameSums) {
  const ir::Kernel out = expect_applies(parse_valid(kOddRowSum), "split_aligned(loop=0,factor=8)", gpu_preset());
  const std::vector<ir::ValueId> loops = loops_of(out);
  ASSERT_EQ(loops.size(), 4u);  // head, blocks, the block's 8, tail
  // The blocks: (37 - 7) / 8 = 3 whatever the row's alignment; the block 8.
  EXPECT_EQ(ir::constant_int(out, out[loops[1]].src[0]), 3);
  EXPECT_EQ(ir::constant_int(out, out[loops[2]].src[0]), 8);
  // Head and tail counts are dynamic (they depend on the row).
  EXPECT_FALSE(ir::constant_int(out, out[loops[0]].src[0]).has_value());
  EXPECT_FALSE(ir::constant_int(out, out[loops[3]].src[0]).has_value());
}

TEST(SplitAligned, BlocksBecomeAlignedVectorLoads) {
  // After unrolling the block, vectorize proves each block's first index a
  // multiple of 8 (rows of 37 elements start anywhere): one 8-lane load.
  const ir::Kernel split = expect_applies(parse_valid(kOddRowSum), "split_aligned(loop=0,factor=8)", gpu_preset());
  const ir::Kernel unrolled = expect_applies(split, "unroll(loop=2,factor=0)", gpu_preset());
  DeviceInfo wide = gpu_preset();
  wide.vector_width_mask |= 1u << 8;
  const ir::Kernel vectors = expect_applies(unrolled, "vectorize(lanes=8)", wide);
  int vector_loads = 0, scalar_loads = 0;
  for (const ir::Op& op : vectors.ops)
    if (op.kind == ir::OpKind::Load && op.src[0] == 0) (op.lanes == 8 ? vector_loads : scalar_loads) += 1;
  EXPECT_EQ(vector_loads, 1);
  EXPECT_EQ(scalar_loads, 2);  // the head's and the tail's
}

TEST(SplitAligned, SoftmaxAtAnOddLengthKeepsItsResults) {
  // Three loops, each split: every row of 50 elements (residues 0, 2, 4, 6 mod 8).
  ir::Kernel k = standard("softmax-rows", {9, 50, 1});
  for (int loop = 2; loop >= 0; --loop) {
    k = expect_applies(k, "split_aligned(loop=" + std::to_string(loop) + ",factor=8)", gpu_preset());
    k = expect_applies(k, "unroll(loop=" + std::to_string(loop + 2) + ",factor=0)", gpu_preset());
  }
  EXPECT_EQ(loops_of(k).size(), 9u);
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
  EXPECT_NE(refusal(row_sum, "split_aligned(loop=0,factor=8,lanes=8)").find("lanes"), std::string::npos);
  EXPECT_NE(refusal(standard("sum-rows", {4, 16, 1}), "split_aligned(loop=0,factor=8)").find("split_loop"),
            std::string::npos);
  EXPECT_NE(refusal(parse_valid(kDynamicRowSum), "split_aligned(loop=0,factor=4)").find("not a constant"),
            std::string::npos);
}
