// swap_loops (interchange a perfect nest when provably legal) and swap_axes
// (exchange grid axes).
#include "passes/structural_test_support.hpp"

using namespace kiln;
using namespace kiln::passes;
using namespace kiln::passes::test;

namespace {

// One thread transposes a 2 x 3 block: y[j*2 + i] = x[i*3 + j].
constexpr std::string_view kBlockTranspose = R"(
%0 = param 0 global f32[6]
%1 = param 1 global_mut f32[6]
%2 = const i64 2
%3 = const i64 3
%4 = loop %2
  %5 = mul i64 %4, %3
  %6 = loop %3
    %7 = add i64 %5, %6
    %8 = load f32 %0[%7]
    %9 = mul i64 %6, %2
    %10 = add i64 %9, %4
    store f32 %1[%10], %8
  endloop %6
endloop %4
)";

}  // namespace

TEST(SwapLoops, InterchangesALegalNest) {
  EXPECT_EQ(after_step("swap_loops(loop=0)", kBlockTranspose), R"(%0 = param 0 global f32[6]
%1 = param 1 global_mut f32[6]
%2 = const i64 2
%3 = const i64 3
%4 = const i64 3
%5 = loop %4
  %6 = const i64 2
  %7 = loop %6
    %8 = mul i64 %7, %3
    %9 = add i64 %8, %5
    %10 = load f32 %0[%9]
    %11 = mul i64 %5, %2
    %12 = add i64 %11, %7
    store f32 %1[%12], %10
  endloop %7
endloop %5
)");
}

TEST(SwapLoops, RefusesAReductionIntoARegister) {
  // matmul with its k loop split: both loops accumulate into one register.
  const ir::Kernel split = expect_applies(standard("matmul", {2, 2, 8}), "split_loop(loop=0,factor=4)", cpu_preset());
  EXPECT_NE(refusal(split, "swap_loops(loop=0)").find("share elements"), std::string::npos);
  EXPECT_TRUE(config_texts("swap_loops", split, cpu_preset()).empty());
}

TEST(SwapLoops, RefusesOverlappingOrMismatchedAddresses) {
  // y[i + j] is written by several (i, j): the order of writes would change.
  constexpr std::string_view kOverlap = R"(
%x = param 0 global f32[6]
%y = param 1 global_mut f32[6]
%two = const i64 2
%three = const i64 3
%i = loop %two
  %j = loop %three
    %k = add i64 %i, %j
    %v = load f32 %x[%k]
    store f32 %y[%k], %v
  endloop %j
endloop %i
)";
  EXPECT_NE(refusal(kOverlap, "swap_loops(loop=0)").find("share elements"), std::string::npos);
  // Written at y[i*3 + j] but read back at y[j]: two index forms.
  constexpr std::string_view kReadBack = R"(
%x = param 0 global f32[6]
%y = param 1 global_mut f32[6]
%two = const i64 2
%three = const i64 3
%i = loop %two
  %r = mul i64 %i, %three
  %j = loop %three
    %k = add i64 %r, %j
    %v = load f32 %y[%j]
    store f32 %y[%k], %v
  endloop %j
endloop %i
)";
  EXPECT_NE(refusal(kReadBack, "swap_loops(loop=0)").find("two different indices"), std::string::npos);
  // A barrier in the nest.
  constexpr std::string_view kBarrier = R"(
%x = param 0 global f32[6]
%y = param 1 global_mut f32[6]
%one = const i64 1
%l = index local 0 %one
%two = const i64 2
%three = const i64 3
%i = loop %two
  %r = mul i64 %i, %three
  %j = loop %three
    %k = add i64 %r, %j
    %v = load f32 %x[%k]
    barrier
    store f32 %y[%k], %v
  endloop %j
endloop %i
)";
  EXPECT_NE(refusal(kBarrier, "swap_loops(loop=0)").find("BARRIER"), std::string::npos);
  EXPECT_NE(refusal(kBlockTranspose, "swap_loops(loop=1)").find("perfect nest"), std::string::npos);
}

TEST(SwapLoops, ConfigsListLegalNestsOnly) {
  EXPECT_EQ(config_texts("swap_loops", parse_valid(kBlockTranspose), cpu_preset()),
            std::vector<std::string>{"swap_loops(loop=0)"});
  // The row-sum reduction loop is alone; dynamic counts are never listed.
  EXPECT_TRUE(config_texts("swap_loops", parse_valid(kDynamicRowSum), cpu_preset()).empty());
  // softmax's writing loop, split, stores y[base + i*4 + j]: legal. Its two
  // reduction loops, split, are not.
  const ir::Kernel softmax = standard("softmax-rows", {2, 8, 1});
  const ir::Kernel split = expect_applies(softmax, "split_loop(loop=2,factor=4)", cpu_preset());
  EXPECT_EQ(config_texts("swap_loops", split, cpu_preset()), std::vector<std::string>{"swap_loops(loop=2)"});
  expect_applies(split, "swap_loops(loop=2)", cpu_preset());
}

TEST(SwapAxes, ExchangesTheAxisNumbersOfEveryIndex) {
  const std::string out = after_step("swap_axes(a=0,b=1)", R"(
%0 = param 0 global f32[6]
%1 = param 1 global_mut f32[6]
%2 = const i64 2
%3 = const i64 3
%4 = index group 0 %2
%5 = index group 1 %3
%6 = mul i64 %4, %3
%7 = add i64 %6, %5
%8 = load f32 %0[%7]
store f32 %1[%7], %8
)");
  EXPECT_EQ(out, R"(%0 = param 0 global f32[6]
%1 = param 1 global_mut f32[6]
%2 = const i64 2
%3 = const i64 3
%4 = index group 1 %2
%5 = index group 0 %3
%6 = mul i64 %4, %3
%7 = add i64 %6, %5
%8 = load f32 %0[%7]
store f32 %1[%7], %8
)");
}

TEST(SwapAxes, ConfigsPutTheContiguousOutputIndexOnAxisZeroFirst) {
  // matmul: c[i*n + j], j on axis 1.
  EXPECT_EQ(config_texts("swap_axes", standard("matmul", {4, 6, 2}), cpu_preset()),
            std::vector<std::string>{"swap_axes(a=0,b=1)"});
  // One axis: nothing to swap. An axis alone on 2 may move down.
  EXPECT_TRUE(config_texts("swap_axes", standard("add", {1, 8, 1}), cpu_preset()).empty());
  const ir::Kernel on_axis_2 = parse_valid(R"(
%0 = param 0 global f32[8]
%1 = param 1 global_mut f32[8]
%2 = const i64 8
%3 = index group 2 %2
%4 = load f32 %0[%3]
store f32 %1[%3], %4
)");
  EXPECT_EQ(config_texts("swap_axes", on_axis_2, cpu_preset()),
            (std::vector<std::string>{"swap_axes(a=0,b=2)", "swap_axes(a=1,b=2)"}));
  expect_applies(on_axis_2, "swap_axes(a=0,b=2)", cpu_preset());
}

// An axis moved up into an empty higher one leaves axis 0 (the fastest-varying:
// C's innermost and parallel group loop, a warp's neighbouring threads) without
// work: a recipe for two axes that swaps them must not apply to a 1-D kernel.
TEST(SwapAxes, RefusesToMoveAnAxisUpIntoAnEmptyOne) {
  const ir::Kernel add = standard("add", {1, 64, 1});
  for (const char* step : {"swap_axes(a=0,b=1)", "swap_axes(a=1,b=0)", "swap_axes(a=0,b=2)"})
    EXPECT_NE(refusal(add, step).find("would only move up, away from axis 0"), std::string::npos) << step;
  // Both axes in use: they exchange (the transpose).
  expect_applies(standard("transpose", {.m = 32, .n = 16}), "swap_axes(a=0,b=1)", cpu_preset());
}

TEST(SwapAxes, RefusesAxesTheDeviceCannotHold) {
  // The GPU preset allows 65535 work-groups on axes 1 and 2: a transpose with
  // 100000 rows on axis 0 cannot take them to axis 1.
  const ir::Kernel tall = standard("transpose", {.m = 100000, .n = 2});
  EXPECT_NE(refusal(tall, "swap_axes(a=0,b=1)").find("allows 65535 work-groups on axis 1"), std::string::npos);
  EXPECT_TRUE(config_texts("swap_axes", standard("add", {1, 100000, 1}), gpu_preset()).empty());
  // 128 threads on axis 0 cannot move to axis 2 (at most 64).
  const ir::Kernel two_axes = parse_valid(R"(
%0 = param 0 global f32[512]
%1 = param 1 global_mut f32[512]
%2 = const i64 256
%3 = const i64 2
%4 = index group 0 %2
%5 = index group 2 %3
%6 = mul i64 %5, %2
%7 = add i64 %6, %4
%8 = load f32 %0[%7]
store f32 %1[%7], %8
)");
  const ir::Kernel split = expect_applies(two_axes, "split_local(axis=0,factor=128)", gpu_preset());
  EXPECT_NE(refusal(split, "swap_axes(a=0,b=2)").find("allows 64 threads on axis 2"), std::string::npos);
  const ir::Kernel one_axis = expect_applies(standard("add", {1, 256, 1}), "split_local(axis=0,factor=128)", gpu_preset());
  EXPECT_NE(refusal(one_axis, "swap_axes(a=1,b=2)").find("neither axis"), std::string::npos);
  EXPECT_NE(refusal(one_axis, "swap_axes(a=1,b=1)").find("two different axes"), std::string::npos);
}

TEST(Reorder, EveryConfigKeepsTheResults) {
  for (const DeviceInfo& device : presets())
    for (const ir::Kernel& kernel : odd_standard_kernels()) {
      for (const std::string& config : config_texts("swap_axes", kernel, device)) {
        SCOPED_TRACE(device.id + " " + config + "\n" + ir::print(kernel));
        expect_applies(kernel, config, device);
      }
      for (const std::string& split : config_texts("split_loop", kernel, device)) {
        const ir::Kernel nested = expect_applies(kernel, split, device);
        for (const std::string& config : config_texts("swap_loops", nested, device)) {
          SCOPED_TRACE(device.id + " " + split + "; " + config + "\n" + ir::print(kernel));
          expect_applies(nested, config, device);
        }
      }
    }
}
