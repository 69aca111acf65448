// Analyses on small kernels written as text: block structure, use counts,
// loop invariance, constant folding, affine index forms and ranges, and
// thread-varying values.
#include <gtest/gtest.h>

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/builder.hpp"
#include "kiln/ir/text.hpp"

using namespace kiln::ir;

namespace {

Kernel k(std::string_view text) { return parse(text).value(); }

constexpr std::string_view kNested = R"(%0 = param 0 global f32[16]
%1 = param 1 global_mut f32[16]
%2 = storage register f32[1]
%3 = const i64 4
%4 = const f32 2
%5 = loop %3
  %6 = mul f32 %4, %4
  %7 = load f32 %0[%5]
  %8 = const i64 0
  %9 = load f32 %2[%8]
  %10 = mul i64 %3, %3
  %11 = loop %3
    %12 = add i64 %10, %11
    %13 = add f32 %6, %7
    store f32 %2[%8], %13
  endloop %11
  %16 = cmplt bool %7, %4
  if %16
    store f32 %1[%5], %9
  endif
endloop %5
)";

}  // namespace

TEST(Analysis, BlocksGiveParentsEndsAndDepths) {
  const Kernel kernel = k(kNested);
  const Blocks blocks = analyze_blocks(kernel);
  EXPECT_EQ(blocks.parent[5], kNoValue);
  EXPECT_EQ(blocks.parent[6], 5u);
  EXPECT_EQ(blocks.parent[11], 5u);
  EXPECT_EQ(blocks.parent[12], 11u);
  EXPECT_EQ(blocks.parent[15], 11u);  // an END marker lies inside its block
  EXPECT_EQ(blocks.parent[18], 17u);
  EXPECT_EQ(blocks.end[5], 20u);
  EXPECT_EQ(blocks.end[11], 15u);
  EXPECT_EQ(blocks.end[17], 19u);
  EXPECT_EQ(blocks.end[6], kNoValue);
  EXPECT_EQ(blocks.depth[12], 2u);
  EXPECT_EQ(blocks.depth[18], 2u);
  EXPECT_EQ(blocks.loop_depth[18], 1u);
  EXPECT_EQ(blocks.loop_depth[14], 2u);
  EXPECT_TRUE(blocks.encloses(5, 14));
  EXPECT_FALSE(blocks.encloses(11, 16));
  EXPECT_EQ(blocks.value_block(kernel, 11), 11u);  // a counter lives inside its loop
  EXPECT_EQ(blocks.value_block(kernel, 10), 5u);
}

// encloses answers from a block's span (the op after it to its END); it must
// agree with the parent chain on every pair, in kernels whose nesting is
// broken too (an unclosed loop; an END closing the other kind; one closing
// nothing), which verify() reports but the analyses still answer for.
TEST(Analysis, EnclosesAgreesWithTheParentChainOnAnyNesting) {
  for (const std::string_view text :
       {kNested, std::string_view("%0 = const i64 2\n%1 = loop %0\n%2 = loop %0\nendloop %2\n%4 = add i64 %0, %0\n"),
        std::string_view("%0 = const bool 1\nif %0\n%2 = const i64 2\n%3 = loop %2\nraw kind=10 src=@1,_,_\nraw kind=8 src=@3,_,_\n"),
        std::string_view("%0 = const i64 2\nraw kind=8 src=@0,_,_\n%2 = loop %0\n%3 = loop %0\n")}) {
    const Kernel kernel = k(text);
    const Blocks blocks = analyze_blocks(kernel);
    for (ValueId block = 0; block <= kernel.size(); ++block)
      for (ValueId id = 0; id <= kernel.size(); ++id) {
        bool chained = false;
        if (id < kernel.size())
          for (ValueId p = blocks.parent[id]; p != kNoValue; p = blocks.parent[p]) chained |= p == block;
        EXPECT_EQ(blocks.encloses(block, id), chained) << "block " << block << ", op " << id << "\n" << text;
      }
    EXPECT_FALSE(blocks.encloses(kNoValue, 1));
  }
}

TEST(Analysis, UseCountsCountEveryOperandSlot) {
  const auto uses = use_counts(k(kNested));
  EXPECT_EQ(uses[3], 4u);   // two trip counts, one mul twice
  EXPECT_EQ(uses[4], 3u);
  EXPECT_EQ(uses[5], 3u);   // load index, store index, endloop
  EXPECT_EQ(uses[12], 0u);
  EXPECT_EQ(uses[17], 1u);  // its endif
}

TEST(Analysis, LoopInvariance) {
  const Kernel kernel = k(kNested);
  const auto outer = loop_invariant_values(kernel, analyze_blocks(kernel), 5);
  EXPECT_TRUE(outer[3]);    // defined outside
  EXPECT_TRUE(outer[6]);    // computed from invariants
  EXPECT_FALSE(outer[5]);   // the counter
  EXPECT_FALSE(outer[7]);   // indexed by the counter
  EXPECT_TRUE(outer[8]);
  EXPECT_FALSE(outer[9]);   // register %2 is written in the loop
  EXPECT_TRUE(outer[10]);
  EXPECT_FALSE(outer[11]);  // an inner loop counter
  EXPECT_FALSE(outer[14]);  // a store has no value
  const auto inner = loop_invariant_values(kernel, analyze_blocks(kernel), 11);
  EXPECT_TRUE(inner[7]);
  EXPECT_TRUE(inner[13]);   // %6 + %7, both defined outside the inner loop
  EXPECT_FALSE(inner[12]);
  EXPECT_TRUE(is_loop_invariant(kernel, 13, 11));
  EXPECT_FALSE(is_loop_invariant(kernel, 99, 11));
}

TEST(Analysis, ConstantsFoldAsTheKernelComputes) {
  const Kernel kernel = k(R"(%0 = const i8 100
%1 = add i8 %0, %0
%2 = const i32 33
%3 = const i32 1
%4 = shl i32 %3, %2
%5 = const i32 0
%6 = div i32 %3, %5
%7 = const u64 18446744073709551615
%8 = const u64 1
%9 = max u64 %7, %8
%10 = cmpgt bool %7, %8
%11 = const f32 2.5
%12 = cast i32 %11
%13 = param 0 var i64
%14 = neg i64 %13
%15 = const i32 -7
%16 = const i32 2
%17 = mod i32 %15, %16
%18 = shr i32 %15, %3
%19 = cast u8 %15
)");
  EXPECT_EQ(constant_int(kernel, 1), -56);  // 200 wraps in i8
  EXPECT_EQ(constant_int(kernel, 4), 2);    // shift by 33 mod 32
  EXPECT_EQ(constant_int(kernel, 6), std::nullopt);  // division by zero
  EXPECT_EQ(static_cast<std::uint64_t>(*constant_int(kernel, 9)), 18446744073709551615ull);
  EXPECT_EQ(constant_int(kernel, 10), 1);
  EXPECT_EQ(constant_int(kernel, 11), std::nullopt);  // a float
  EXPECT_EQ(constant_int(kernel, 12), std::nullopt);  // from a float
  EXPECT_EQ(constant_int(kernel, 14), std::nullopt);  // from a var param
  EXPECT_EQ(constant_int(kernel, 17), -1);  // C remainder
  EXPECT_EQ(constant_int(kernel, 18), -4);  // arithmetic shift
  EXPECT_EQ(constant_int(kernel, 19), 249);
  EXPECT_EQ(constant_double(kernel, 11), 2.5);
  EXPECT_EQ(constant_double(kernel, 7), 18446744073709551615.0);
  EXPECT_EQ(constant_double(kernel, 13), std::nullopt);
}

TEST(Analysis, AffineFormsDecomposeIndexArithmetic) {
  const Kernel kernel = k(R"(%0 = const i64 16
%1 = index group 0 %0
%2 = index group 1 %0
%3 = const i64 4
%4 = mul i64 %1, %3
%5 = add i64 %4, %2
%6 = const i64 3
%7 = sub i64 %5, %6
%8 = const i64 2
%9 = shl i64 %2, %8
%10 = add i64 %7, %9
%11 = neg i64 %10
%12 = mul i64 %1, %2
%13 = const i32 1
%14 = cast i64 %13
)");
  const auto form = affine_form(kernel, 10).value();  // 4*g0 + g1 - 3 + 4*g1
  EXPECT_EQ(form.constant, -3);
  EXPECT_EQ(form.terms, (std::vector<std::pair<ValueId, std::int64_t>>{{1, 4}, {2, 5}}));
  const auto negated = affine_form(kernel, 11).value();
  EXPECT_EQ(negated.constant, 3);
  EXPECT_EQ(negated.terms, (std::vector<std::pair<ValueId, std::int64_t>>{{1, -4}, {2, -5}}));
  const auto product = affine_form(kernel, 12).value();  // not linear: one atom
  EXPECT_EQ(product.terms, (std::vector<std::pair<ValueId, std::int64_t>>{{12, 1}}));
  EXPECT_EQ(affine_form(kernel, 13), std::nullopt);  // not i64
  EXPECT_EQ(affine_form(kernel, 14)->terms.size(), 1u);  // a cast is an atom
  EXPECT_EQ(atom_range(kernel, 1), (std::pair<std::int64_t, std::int64_t>{0, 15}));
  EXPECT_EQ(atom_range(kernel, 4), std::nullopt);
}

TEST(Analysis, ThreadVaryingFollowsLocalIndicesThroughValuesAndMemory) {
  const Kernel kernel = k(R"(%0 = const i64 8
%1 = index local 0 %0
%2 = index group 0 %0
%3 = storage local i64[8]
%4 = storage local i64[8]
%5 = add i64 %1, %2
store i64 %3[%1], %2
%7 = const i64 0
store i64 %4[%7], %2
%9 = load i64 %3[%7]
%10 = load i64 %4[%7]
%11 = cmplt bool %1, %0
if %11
  store i64 %4[%7], %0
endif
%15 = load i64 %4[%7]
)");
  const auto varying = thread_varying(kernel, analyze_blocks(kernel));
  EXPECT_TRUE(varying[1]);
  EXPECT_FALSE(varying[2]);
  EXPECT_TRUE(varying[5]);
  EXPECT_TRUE(varying[9]);    // %3 was written at a thread-dependent index
  EXPECT_TRUE(varying[10]);   // %4 is written under a thread-dependent if
  EXPECT_TRUE(varying[15]);
  EXPECT_FALSE(varying[7]);
}

TEST(Analysis, SharedSubexpressionsAreWalkedOnceAndDeepChainsDoNotRecurse) {
  // x_{i+1} = x_i + x_i: walking operands as a tree would take 2^n steps.
  for (int length : {40, 64, 65, 100000}) {
    Builder b;
    Value n = b.param(ParamKind::Variable, DType::I64);
    Value c = b.constant_i64(1);
    for (int i = 0; i < length; ++i) {
      n = b.add(n, n);
      c = b.add(c, c);
    }
    const Kernel kernel = b.finish();
    SCOPED_TRACE(length);
    EXPECT_EQ(constant_int(kernel, c.id), length >= 64 ? 0 : std::int64_t{1} << length);
    const auto form = affine_form(kernel, c.id);
    EXPECT_EQ(form.has_value(), length < 63);
    // The host evaluates group lengths up to 64 ops deep (sdk/grid.cpp).
    const auto why = not_host_evaluable(kernel, n.id);
    EXPECT_EQ(why.has_value(), length > 64);
    if (why) {
      EXPECT_NE(why->find("deeper than 64"), std::string::npos);
    }
  }
}

TEST(Analysis, HostEvaluableNamesWhatTheHostCannotCompute) {
  const Kernel kernel = k(R"(%0 = param 0 var i64
%1 = param 1 global i64[4]
%2 = const i64 0
%3 = load i64 %1[%2]
%4 = add i64 %0, %3
%5 = const f32 2
%6 = cast i64 %5
%7 = shl i64 %0, %2
)");
  EXPECT_EQ(not_host_evaluable(kernel, 7), std::nullopt);
  EXPECT_EQ(not_host_evaluable(kernel, 4), "op 3 is a load (only consts, var params and integer arithmetic on them)");
  EXPECT_EQ(not_host_evaluable(kernel, 6), "op 5 is f32, not an integer scalar");
  EXPECT_EQ(not_host_evaluable(kernel, 1), "op 1 is a buffer");
}
