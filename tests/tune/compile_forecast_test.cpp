// The compile forecast (core/tune/compile_forecast.hpp): what a compile of a
// kernel of some size is expected to take, from the slowest so far, and
// whether it still ends before the deadline. Made-up durations and times.
#include <gtest/gtest.h>

#include "kiln/ir/text.hpp"
#include "tune/compile_forecast.hpp"

using kiln::tune::detail::CompileForecast;
using namespace std::chrono_literals;

TEST(CompileForecast, ScalesTheSlowestCompileBySizeOnlyUpwards) {
  const CompileForecast::Clock::time_point t0{};
  CompileForecast f(t0 + 10s);
  EXPECT_EQ(f.predict_s(1000), 0) << "nothing known yet";
  EXPECT_FALSE(f.refuses(1'000'000, t0)) << "nothing known: the compile runs";
  f.took(100, 0.5);
  f.took(400, 1.0);   // the slowest: 1 s for 400 ops
  f.took(2000, 0.8);  // larger but faster: not the reference
  EXPECT_DOUBLE_EQ(f.predict_s(400), 1.0);
  EXPECT_DOUBLE_EQ(f.predict_s(50), 1.0) << "a smaller kernel is not assumed faster (a compile has a fixed part)";
  EXPECT_DOUBLE_EQ(f.predict_s(800), 4.0) << "twice the code: four times the time";
  EXPECT_DOUBLE_EQ(f.predict_s(6400), 256.0) << "sixteen times the code: its square";
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
  EXPECT_EQ(kiln::tune::detail::compile_weight(*k), k->size() + 68);
}

TEST(CompileForecast, RefusesOnlyWhatWouldEndPastTheDeadline) {
  const CompileForecast::Clock::time_point t0{};
  CompileForecast f(t0 + 10s);
  f.took(400, 1.0);
  EXPECT_FALSE(f.refuses(400, t0 + 8s)) << "1 s of 2 s left";
  EXPECT_FALSE(f.refuses(1200, t0)) << "9 s of 10 s left";
  const std::optional<std::string> why = f.refuses(1600, t0 + 1s);  // 16 s expected, 9 s left
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("compile weight 1600"), std::string::npos) << *why;
  EXPECT_NE(why->find("16.0"), std::string::npos) << *why;
  EXPECT_TRUE(f.refuses(400, t0 + 9500ms)) << "1 s expected, 0.5 s left";
  EXPECT_TRUE(f.refuses(400, t0 + 11s)) << "past the deadline";
}
