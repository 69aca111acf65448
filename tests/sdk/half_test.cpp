// f16/bf16 conversions against exhaustive checks and known values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/sdk/half.hpp"

using namespace kiln::sdk;

TEST(Half, EveryF16RoundTripsThroughF32) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_bits_to_f32(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_bits_to_f32(f32_to_f16_bits(f))));
      continue;
    }
    EXPECT_EQ(f32_to_f16_bits(f), h) << std::hex << h;
  }
}

TEST(Half, F16RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(f32_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even): rounds up.
  EXPECT_EQ(f32_to_f16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7c00);  // overflow rounds to inf
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: 0
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16_bits(-2.0f), 0xc000);
}

TEST(Half, F16MatchesCompilerConversionOnManyFloats) {
#if defined(__FLT16_MAX__)
  std::uint32_t x = 12345;
  for (int i = 0; i < 200000; ++i) {
    x = x * 1664525u + 1013904223u;
    const float f = std::bit_cast<float>((x & 0x8fffffffu) | 0x30000000u);  // varied exponents
    const _Float16 h = static_cast<_Float16>(f);
    EXPECT_EQ(f32_to_f16_bits(f), std::bit_cast<std::uint16_t>(h)) << f;
  }
#else
  GTEST_SKIP() << "compiler has no _Float16 to compare against";
#endif
}

TEST(Half, Bf16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16_bits(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even stays
  EXPECT_EQ(f32_to_bf16_bits(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(f32_to_bf16_bits(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = bf16_bits_to_f32(static_cast<std::uint16_t>(h));
    if (!std::isnan(f)) {
      EXPECT_EQ(f32_to_bf16_bits(f), h);
    }
  }
}
