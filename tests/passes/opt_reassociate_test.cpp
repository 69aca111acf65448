// reassociate: integer chains regrouped so loop-invariant operands combine first.
#include "passes/structural_test_support.hpp"

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

// y[i*4 + j] = sum over k of x[(i*16 + k) + j*4]: the index mixes the loop
// counter into the middle of an invariant sum.
constexpr std::string_view kWindowSum = R"(
%0 = param 0 global i32[64]
%1 = param 1 global_mut i32[16]
%2 = const i64 4
%3 = const i64 16
%4 = index group 0 %2
%5 = index group 1 %2
%6 = mul i64 %4, %3
%7 = mul i64 %5, %2
%8 = const i32 0
%9 = storage register i32[1]
%10 = const i64 0
store i32 %9[%10], %8
%12 = loop %2
  %13 = add i64 %6, %12
  %14 = add i64 %13, %7
  %15 = load i32 %0[%14]
  %16 = load i32 %9[%10]
  %17 = add i32 %16, %15
  store i32 %9[%10], %17
endloop %12
%20 = mul i64 %4, %2
%21 = add i64 %20, %5
%22 = load i32 %9[%10]
store i32 %1[%21], %22
)";

std::string with_dtype(std::string_view text, std::string_view from, std::string_view to) {
  std::string out(text);
  for (std::size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size()))
    out.replace(at, from.size(), to);
  return out;
}

}  // namespace

TEST(Reassociate, InvariantOperandsCombineBeforeTheLoopCounter) {
  EXPECT_EQ(after_step("reassociate()", kWindowSum), R"(%0 = param 0 global i32[64]
%1 = param 1 global_mut i32[16]
%2 = const i64 4
%3 = const i64 16
%4 = index group 0 %2
%5 = index group 1 %2
%6 = mul i64 %4, %3
%7 = mul i64 %5, %2
%8 = const i32 0
%9 = storage register i32[1]
%10 = const i64 0
store i32 %9[%10], %8
%12 = loop %2
  %13 = add i64 %6, %7
  %14 = add i64 %13, %12
  %15 = load i32 %0[%14]
  %16 = load i32 %9[%10]
  %17 = add i32 %16, %15
  store i32 %9[%10], %17
endloop %12
%20 = mul i64 %4, %2
%21 = add i64 %20, %5
%22 = load i32 %9[%10]
store i32 %1[%21], %22
)");
}

TEST(Reassociate, AppliesOnceThenHasNothingLeft) {
  const ir::Kernel window = parse_valid(kWindowSum);
  EXPECT_EQ(config_texts("reassociate", window, gpu_preset()), std::vector<std::string>{"reassociate()"});
  const ir::Kernel once = expect_applies(window, "reassociate()", gpu_preset());
  EXPECT_TRUE(config_texts("reassociate", once, gpu_preset()).empty());
  EXPECT_NE(refusal(once, "reassociate()").find("no integer chain"), std::string::npos);
}

TEST(Reassociate, LeavesFloatChainsAlone) {
  // The same chain on f32 values (rounding would change): nothing to do.
  constexpr std::string_view kFloatChain = R"(
%x = param 0 global f32[4]
%y = param 1 global_mut f32[4]
%n = const i64 4
%g = index group 0 %n
%a = load f32 %x[%g]
%c = const f32 2
%s = storage register f32[1]
%zero = const i64 0
%fz = const f32 0
store f32 %s[%zero], %fz
%k = loop %n
  %b = load f32 %x[%k]
  %ab = add f32 %a, %b
  %abc = add f32 %ab, %c
  %old = load f32 %s[%zero]
  %new = add f32 %old, %abc
  store f32 %s[%zero], %new
endloop %k
%r = load f32 %s[%zero]
store f32 %y[%g], %r
)";
  const ir::Kernel floats = parse_valid(kFloatChain);
  EXPECT_TRUE(config_texts("reassociate", floats, gpu_preset()).empty());
  EXPECT_NE(refusal(floats, "reassociate()").find("no integer chain"), std::string::npos);
  EXPECT_NE(refusal(floats, "reassociate(loop=0)").find("unknown parameter 'loop'"), std::string::npos);
}

TEST(Reassociate, EveryIntegerChainOpKeepsTheResults) {
  // The window sum's index chain with each op (bounded by a final mod so the
  // loads stay in range), in several integer types.
  constexpr std::string_view kChain = R"(
%0 = param 0 global i32[64]
%1 = param 1 global_mut i32[16]
%2 = const i64 4
%3 = const i64 16
%4 = index group 0 %2
%5 = index group 1 %2
%6 = mul i64 %4, %3
%7 = mul i64 %5, %2
%zero = const i32 0
%acc = storage register i32[1]
%at = const i64 0
store i32 %acc[%at], %zero
%a = cast TYPE %6
%c = cast TYPE %7
%k = loop %3
  %b = cast TYPE %k
  %ab = OP TYPE %a, %b
  %abc = OP TYPE %ab, %c
  %wide = cast i64 %abc
  %sixty_four = const i64 64
  %m = mod i64 %wide, %sixty_four
  %zero64 = const i64 0
  %neg = cmplt %m, %zero64
  %fix = add i64 %m, %sixty_four
  %index = select i64 %neg, %fix, %m
  %v = load i32 %0[%index]
  %old = load i32 %acc[%at]
  %new = add i32 %old, %v
  store i32 %acc[%at], %new
endloop %k
%o = mul i64 %4, %2
%oi = add i64 %o, %5
%r = load i32 %acc[%at]
store i32 %1[%oi], %r
)";
  for (std::string_view op : {"add", "mul", "min", "max", "and", "or", "bitand", "bitor", "bitxor"})
    for (std::string_view type : {"i64", "i32", "u8", "i16"}) {
      SCOPED_TRACE(std::string(op) + " " + std::string(type));
      const ir::Kernel kernel = parse_valid(with_dtype(with_dtype(kChain, "OP", op), "TYPE", type));
      ASSERT_EQ(config_texts("reassociate", kernel, gpu_preset()), std::vector<std::string>{"reassociate()"});
      expect_applies(kernel, "reassociate()", gpu_preset());
    }
}

TEST(Reassociate, SequencesOnStandardKernelsKeepTheResults) {
  // After splitting, the counter o*f + i joins the row offset in one chain.
  for (const ir::Kernel& kernel : odd_standard_kernels())
    for (const std::string& split : config_texts("split_loop", kernel, cpu_preset())) {
      const ir::Kernel nested = expect_applies(kernel, split, cpu_preset());
      for (const std::string& config : config_texts("reassociate", nested, cpu_preset())) {
        SCOPED_TRACE(split + "; " + config + "\n" + ir::print(kernel));
        expect_applies(nested, config, cpu_preset());
      }
    }
}
