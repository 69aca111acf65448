// The compile forecast (core/tune/compile_forecast.hpp): what a compile of a
// kernel of some size is expected to take, from the compiles so far, and
// whether it still ends before the deadline. Made-up durations and times.
#include <gtest/gtest.h>

#include "kiln/ir/text.hpp"
#include "tune/compile_forecast.hpp"

using kiln::tune::detail::CompileForecast;
using namespace std::chrono_literals;

// Each compile so far scales to this kernel's weight where it is larger
// (with WGMMAs by the square); the forecast is the least of them.
TEST(CompileForecast, ScalesEachCompileBySizeOnlyUpwardsAndTakesTheLeast) {
  const CompileForecast::Clock::time_point t0{};
  CompileForecast f(t0 + 10s);
  EXPECT_EQ(f.predict_s({1000, false}), 0) << "nothing known yet";
  EXPECT_FALSE(f.refuses({1'000'000, true}, t0)) << "nothing known: the compile runs";
  f.took(100, 0.5);
  f.took(400, 1.0);
  f.took(2000, 0.8);  // larger and faster: it says least for larger kernels
  EXPECT_DOUBLE_EQ(f.predict_s({50, false}), 0.5) << "a compile as fast as the fastest seen";
  EXPECT_DOUBLE_EQ(f.predict_s({400, false}), 0.8);
  EXPECT_DOUBLE_EQ(f.predict_s({8000, false}), 3.2) << "four times the largest: four times its time";
  EXPECT_DOUBLE_EQ(f.predict_s({8000, true}), 12.8) << "with WGMMAs: its square";
  f.took(4000, 4.0);  // a slow large one changes nothing: the others say less
  EXPECT_DOUBLE_EQ(f.predict_s({8000, true}), 12.8);
}

// What the square from the slowest compile got wrong on c:0 (2026-12-05):
// the first compile of a tuning (weight 43, cold, beside the search's
// threads) took 0.46 s, the next ones of weight 125-128 0.2-0.42 s, so a
// weight of 900 (gcc: about 0.3 s) was forecast at 200 s and skipped.
TEST(CompileForecast, AColdSmallCompileDoesNotMakeLargerPlainKernelsLookSlow) {
  const CompileForecast::Clock::time_point t0{};
  CompileForecast f(t0 + 10s);
  f.took(43, 0.456);
  f.took(128, 0.422);
  f.took(125, 0.263);
  f.took(127, 0.199);
  EXPECT_LT(f.predict_s({900, false}), 1.5);
  EXPECT_FALSE(f.refuses({900, false}, t0 + 8s)) << "2 s left";
}

// The case the forecast is for: an unrolled tensor-core kernel is forecast
// from the WGMMA kernel compiled before it, not from the quick plain ones
// (NVRTC, 2026-12-04: weight 1604 in 1.16 s, 5257 in 13.3 s).
TEST(CompileForecast, AnUnrolledTensorCoreKernelIsForecastFromTheLargestCompiled) {
  const CompileForecast::Clock::time_point t0{};
  CompileForecast f(t0 + 10s);
  f.took(150, 0.2);    // the untuned kernel
  f.took(1604, 1.16);  // the heuristic choice
  EXPECT_NEAR(f.predict_s({5257, true}), 12.46, 0.01);
  EXPECT_TRUE(f.refuses({5257, true}, t0 + 5s));
}

TEST(CompileForecast, WeighsWarpGroupMmasByTheRegistersTheyName) {
  // One tf32 WGMMA with A from registers (n 128: 64 accumulators and 4
  // fragment elements) weighs its op and 68 registers more.
  const auto k = kiln::ir::parse(R"(%0 = param 0 global f32[8192]
%1 = const i64 0
%2 = const i64 128
%3 = index local 0 %2
%4 = storage local f32[8192]
%5 = storage register f32[68]
%6 = load f32x4 %0[%1]
store f32x4 %4[%1], %6
barrier
wgmma_fence
%10 = const i64 64
%11 = broadcast i64x2 %10
%12 = insert i64x2 %11[1], %1
wgmma n128 a_regs f32 %4[%12], %5
wgmma_commit
wgmma_wait 0
)");
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(kiln::tune::detail::compile_weight(*k).ops, k->size() + 68);
  EXPECT_TRUE(kiln::tune::detail::compile_weight(*k).superlinear);
}

TEST(CompileForecast, RefusesOnlyWhatWouldEndPastTheDeadline) {
  const CompileForecast::Clock::time_point t0{};
  CompileForecast f(t0 + 10s);
  f.took(400, 1.0);
  EXPECT_FALSE(f.refuses({400, true}, t0 + 8s)) << "1 s of 2 s left";
  EXPECT_FALSE(f.refuses({1200, true}, t0)) << "9 s of 10 s left";
  const std::optional<std::string> why = f.refuses({1600, true}, t0 + 1s);  // 16 s expected, 9 s left
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("compile weight 1600"), std::string::npos) << *why;
  EXPECT_NE(why->find("16.0"), std::string::npos) << *why;
  EXPECT_NE(why->find("square"), std::string::npos) << *why;
  EXPECT_FALSE(f.refuses({1600, false}, t0 + 1s)) << "plain code: 4 s expected, 9 s left";
  EXPECT_TRUE(f.refuses({400, false}, t0 + 9500ms)) << "1 s expected, 0.5 s left";
  EXPECT_TRUE(f.refuses({400, false}, t0 + 11s)) << "past the deadline";
}
