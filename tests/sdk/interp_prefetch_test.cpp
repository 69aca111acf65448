// PREFETCH on the reference interpreter: a hint with no effect (the results
// are those of the kernel without it, its index may lie past the buffer),
// and the validator's rules for it.
#include <gtest/gtest.h>

#include "interp_util.hpp"
#include "kiln/ir/text.hpp"

#include <string>

using namespace kiln;
using namespace kiln::test;

namespace {

// Each of 4 groups doubles its row of 16 floats; `prefetch` goes before the
// load (the last group's next row lies past the buffer).
std::vector<kiln_op> doubling(const std::string& prefetch) {
  const std::string text = R"(%x = param 0 global f32[64]
%y = param 1 global_mut f32[64]
%four = const i64 4
%g = index group 0 %four
%sixteen = const i64 16
%row = mul i64 %g, %sixteen
%j = loop %four
  %c = mul i64 %j, %four
  %i = add i64 %row, %c
  %next = add i64 %i, %sixteen
)" + prefetch + R"(
  %v = load f32x4 %x[%i]
  %w = add f32x4 %v, %v
  store f32x4 %y[%i], %w
endloop
)";
  auto parsed = ir::parse(text);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message) << "\n" << text;
  return parsed.ok() ? parsed->to_wire() : std::vector<kiln_op>{};
}

}  // namespace

TEST(InterpreterPrefetch, ChangesNoResultAndNeverFaults) {
  const std::vector<float> x = random_floats(64, 3);
  for (const std::string prefetch : {"", "  prefetch f32 %x[%next]", "  prefetch f32 %y[%next]"}) {
    std::vector<float> in = x, out(64, 0.0f);
    const sdk::ExecStats stats = run_ok(doubling(prefetch), {arg_of(in), arg_of(out)});
    for (int k = 0; k < 64; ++k) ASSERT_EQ(out[k], 2 * x[k]) << prefetch << " " << k;
    // It reads nothing: the loads are the 16 vector loads of the kernel.
    EXPECT_EQ(stats.global().loads, 16u) << prefetch;
  }
}

TEST(InterpreterPrefetch, ValidatorRules) {
  std::vector<kiln_op> ops = doubling("  prefetch f32 %x[%next]");
  std::size_t at = 0;
  while (at < ops.size() && ops[at].kind != KILN_OP_PREFETCH) ++at;
  ASSERT_LT(at, ops.size());
  std::vector<kiln_op> lanes = ops;
  lanes[at].lanes = 4;
  expect_invalid(lanes, "prefetch is typed as one element of its param's dtype", static_cast<std::int64_t>(at));
  std::vector<kiln_op> storage = ops;
  storage[at].src[0] = storage[at].src[1];  // a value, not a buffer
  expect_invalid(storage, "is not a buffer or storage", static_cast<std::int64_t>(at));
}
