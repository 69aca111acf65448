// The rewriter on small kernels, before and after in text form: replacing
// uses, dropping dead ops, emitting new ops, hoisting out of a loop.
#include <gtest/gtest.h>

#include "kiln/ir/analysis.hpp"
#include "kiln/ir/rewriter.hpp"
#include "kiln/ir/text.hpp"
#include "kiln/ir/verify.hpp"

using namespace kiln::ir;

namespace {

Kernel k(std::string_view text) { return parse(text).value(); }

constexpr std::string_view kScale = R"(%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[8]
%2 = const i64 8
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = const f32 1
%6 = mul f32 %4, %5
%7 = const f32 7
store f32 %1[%3], %6
)";

}  // namespace

TEST(Rewriter, ReplaceRedirectsLaterUses) {
  // x * 1 -> x
  const Kernel out = rewrite(k(kScale), [](Rewriter& rw, ValueId id) {
    const Op& op = rw.old()[id];
    if (op.kind != OpKind::Binary || op.binary() != BinaryOp::Mul) return false;
    if (constant_double(rw.old(), op.src[1]) != 1.0) return false;
    rw.replace(id, rw.map(op.src[0]));
    return true;
  });
  EXPECT_EQ(print(out), R"(%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[8]
%2 = const i64 8
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = const f32 1
%6 = const f32 7
store f32 %1[%3], %4
)");
  EXPECT_TRUE(verify(out).ok());
}

TEST(Rewriter, DropRemovesDeadOps) {
  // Constants and arithmetic nobody uses go (one sweep).
  const Kernel in = k(kScale);
  const auto uses = use_counts(in);
  const Kernel out = rewrite(in, [&](Rewriter& rw, ValueId id) {
    const OpKind kind = rw.old()[id].kind;
    if (uses[id] != 0 || (kind != OpKind::Const && kind != OpKind::Binary)) return false;
    rw.drop(id);
    return true;
  });
  EXPECT_EQ(print(out), R"(%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[8]
%2 = const i64 8
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = const f32 1
%6 = mul f32 %4, %5
store f32 %1[%3], %6
)");
}

TEST(Rewriter, EmitInsertsNewOpsBeforeACopy) {
  // Clamp every stored value at 0 (relu on store).
  const Kernel out = rewrite(k(kScale), [](Rewriter& rw, ValueId id) {
    const Op& op = rw.old()[id];
    if (op.kind != OpKind::Store) return false;
    Builder& b = rw.out();
    const Value zero = b.constant(op.dtype, 0.0);
    const Value clamped = b.max(rw.map(op.src[2]), zero);
    b.store(rw.map(op.src[0]), rw.map(op.src[1]), clamped);
    return true;
  });
  EXPECT_EQ(print(out), R"(%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[8]
%2 = const i64 8
%3 = index group 0 %2
%4 = load f32 %0[%3]
%5 = const f32 1
%6 = mul f32 %4, %5
%7 = const f32 7
%8 = const f32 0
%9 = max f32 %6, %8
store f32 %1[%3], %9
)");
  EXPECT_TRUE(verify(out).ok());
}

TEST(Rewriter, CopyingEarlyHoistsInvariantOpsOutOfALoop) {
  const Kernel in = k(R"(%0 = param 0 global_mut f32[4]
%1 = const i64 4
%2 = loop %1
  %3 = const f32 3
  %4 = mul f32 %3, %3
  %5 = cast f32 %2
  %6 = add f32 %4, %5
  store f32 %0[%2], %6
endloop %2
)");
  const Blocks blocks = analyze_blocks(in);
  const Kernel out = rewrite(in, [&](Rewriter& rw, ValueId id) {
    if (rw.old()[id].kind != OpKind::Loop) return false;
    const auto invariant = loop_invariant_values(rw.old(), blocks, id);
    for (ValueId inner = id + 1; inner < blocks.end[id]; ++inner)
      if (invariant[inner] && blocks.parent[inner] == id) rw.copy(inner);
    rw.copy(id);
    return true;
  });
  EXPECT_EQ(print(out), R"(%0 = param 0 global_mut f32[4]
%1 = const i64 4
%2 = const f32 3
%3 = mul f32 %2, %2
%4 = loop %1
  %5 = cast f32 %4
  %6 = add f32 %3, %5
  store f32 %0[%4], %6
endloop %4
)");
  EXPECT_TRUE(verify(out).ok());
}

TEST(Rewriter, UsesOfDroppedValuesBecomeMissingOperands) {
  const Kernel out = rewrite(k(kScale), [](Rewriter& rw, ValueId id) {
    if (id != 4) return false;
    rw.drop(id);  // the load, still used by the mul
    return true;
  });
  const auto result = verify(out);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().op, 5);
  EXPECT_NE(result.error().message.find("rule operand-missing"), std::string::npos);
}

TEST(Rewriter, CopyRangeCopiesWhatIsNotHandledYet) {
  const Kernel in = k(kScale);
  Rewriter rw(in);
  rw.drop(5);
  rw.copy_range(0, 5);
  rw.copy_range(0, static_cast<ValueId>(in.size()));
  EXPECT_TRUE(rw.handled(8));
  EXPECT_FALSE(rw.map(5).valid());
  EXPECT_EQ(rw.finish().size(), in.size() - 1);
}
