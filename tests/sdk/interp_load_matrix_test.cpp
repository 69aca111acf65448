// LOAD_MATRIX on the reference interpreter: every count (x1, x2, x4) and
// both forms against kernel_ir.h's formula written out here, the index the
// warp's other lanes give ignored, and the faults of a collective (partial
// warps) and of misaligned rows.
#include <gtest/gtest.h>

#include "interp_util.hpp"
#include "kiln/ir/text.hpp"

#include <string>

using namespace kiln;
using namespace kiln::test;

namespace {

// 32 threads; thread l stores x[8l .. 8l + 8) into LOCAL row l (%6 = 8l),
// and after the barrier runs `tail` (the first op there is %10).
std::vector<kiln_op> kernel(const std::string& tail) {
  const std::string text = R"(%0 = param 0 global u16[256]
%1 = param 1 global_mut u16[256]
%2 = storage local u16[256]
%3 = const i64 32
%4 = index local 0 %3
%5 = const i64 8
%6 = mul i64 %4, %5
%7 = load u16x8 %0[%6]
store u16x8 %2[%6], %7
barrier
)" + tail + "\n";
  auto parsed = ir::parse(text);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message) << "\n" << text;
  return parsed.ok() ? parsed->to_wire() : std::vector<kiln_op>{};
}

}  // namespace

TEST(InterpreterLoadMatrix, EveryCountAndFormFollowsTheContract) {
  std::vector<std::uint16_t> x(256);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint16_t>(i * 2654435761u >> 7);
  for (unsigned count : {1u, 2u, 4u})
    for (bool transposed : {false, true}) {
      SCOPED_TRACE(std::to_string(count) + (transposed ? " trans" : ""));
      // Lane l gives row 8l: matrix j's row r is LOCAL row 8j + r.
      const std::string load = "%10 = load_matrix x" + std::to_string(count) + (transposed ? " trans" : "") + " u16 %2[%6]";
      std::vector<std::uint16_t> out(256, 0);
      run_ok(kernel(load + "\nstore %1[%6], %10"), {sdk::host_buffer_arg(std::span(x)), sdk::host_buffer_arg(std::span(out))});
      for (unsigned lane = 0; lane < 32; ++lane)
        for (unsigned e = 0; e < 2 * count; ++e) {
          const unsigned j = e / 2, g = lane / 4, t = lane % 4;
          // kernel_ir.h: memory[row(j, g) + 2t + e] or memory[row(j, 2t + e) + g], row(j, r) = 8 (8j + r).
          const unsigned want = transposed ? 8 * (8 * j + 2 * t + e % 2) + g : 8 * (8 * j + g) + 2 * t + e % 2;
          EXPECT_EQ(out[8 * lane + e], x[want]) << "lane " << lane << " element " << e;
        }
    }
}

TEST(InterpreterLoadMatrix, LanesPastTheMatricesGiveNoRow) {
  // x1 reads the rows of lanes 0..7 only: the others give an index far out
  // of range, which is not read.
  std::vector<std::uint16_t> x(256), out(256, 0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint16_t>(3 * i + 1);
  const auto ops = kernel("%10 = const i64 1000000\n%11 = cmplt %4, %5\n%12 = select i64 %11, %6, %10\n"
                          "%13 = load_matrix x1 u16 %2[%12]\nstore %1[%6], %13");
  run_ok(ops, {sdk::host_buffer_arg(std::span(x)), sdk::host_buffer_arg(std::span(out))});
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned e = 0; e < 2; ++e) EXPECT_EQ(out[8 * lane + e], x[8 * (lane / 4) + 2 * (lane % 4) + e]) << lane;
}

TEST(InterpreterLoadMatrix, FaultsOfACollective) {
  std::vector<std::uint16_t> x(256, 1), out(256, 0);
  const std::vector<kiln_arg> args = {sdk::host_buffer_arg(std::span(x)), sdk::host_buffer_arg(std::span(out))};
  // A row index that is not a multiple of 8 (lane 1 gives 1).
  expect_fault(kernel("%10 = load_matrix x4 u16 %2[%4]\nstore %1[%6], %10"), args, "is not a multiple of 8");
  // Half a warp.
  expect_fault(kernel("%10 = const i64 16\n%11 = cmplt %4, %10\nif %11\n%13 = load_matrix x4 u16 %2[%6]\n"
                      "store %1[%6], %13\nendif"),
               args, "divergent load_matrix");
}
