// The compile forecast (core/tune/compile_forecast.hpp): what a compile of a
// kernel of some size is expected to take, from the slowest so far, and
// whether it still ends before the deadline. Made-up durations and times.
#include <gtest/gtest.h>

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
  EXPECT_DOUBLE_EQ(f.predict_s(6400), 16.0) << "sixteen times the code: sixteen times the time";
}

TEST(CompileForecast, RefusesOnlyWhatWouldEndPastTheDeadline) {
  const CompileForecast::Clock::time_point t0{};
  CompileForecast f(t0 + 10s);
  f.took(400, 1.0);
  EXPECT_FALSE(f.refuses(400, t0 + 8s)) << "1 s of 2 s left";
  EXPECT_FALSE(f.refuses(3600, t0)) << "9 s of 10 s left";
  const std::optional<std::string> why = f.refuses(6400, t0 + 1s);  // 16 s expected, 9 s left
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("6400 ops"), std::string::npos) << *why;
  EXPECT_NE(why->find("16.0"), std::string::npos) << *why;
  EXPECT_TRUE(f.refuses(400, t0 + 9500ms)) << "1 s expected, 0.5 s left";
  EXPECT_TRUE(f.refuses(400, t0 + 11s)) << "past the deadline";
}
