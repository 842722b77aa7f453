// Rounding to the 16-bit storage types (core/float16_bits.h): bfloat16's round-to-nearest-even,
// and stochastic rounding to f16 and bf16: always one of the two neighbours, exact for values
// the type holds, unbiased on average, monotone in the random bits, and infinities, NaN and
// overflow as round-to-nearest has them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/bfloat16.h"
#include "core/float16_bits.h"
#include "core/half.h"
#include "core/stochastic_rounding.h"

namespace pfc {
namespace {

float f16(std::uint16_t bits) { return Half::to_float(bits); }
float bf16(std::uint16_t bits) { return bf16_bits_to_float(bits); }

// Random floats over a wide range of magnitudes (f16's subnormals to beyond its range).
float random_float(std::uint32_t& state, int low_exponent, int high_exponent) {
  state = state * 1664525u + 1013904223u;
  const float mantissa = static_cast<float>(state >> 8) / 16777216.0f;
  state = state * 1664525u + 1013904223u;
  const int exponent = low_exponent + static_cast<int>(state % (high_exponent - low_exponent));
  return (state & 0x80000000u ? -1.0f : 1.0f) * std::ldexp(0.5f + mantissa / 2, exponent);
}

TEST(Float16Bits, Bf16NearestRoundsHalfwayToEvenAndMatchesADirectRounding) {
  EXPECT_EQ(bf16_bits_nearest(1.0f), 0x3F80);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa.
  EXPECT_EQ(bf16_bits_nearest(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(bf16_bits_nearest(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(bf16_bits_nearest(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_TRUE(std::isnan(bf16(bf16_bits_nearest(std::nanf("")))));
  std::uint32_t state = 7;
  for (int i = 0; i < 100000; ++i) {
    const float x = random_float(state, -130, 120);
    const float r = bf16(bf16_bits_nearest(x));
    // Nearest: no bf16 neighbour is closer.
    const std::uint16_t b = bf16_bits_nearest(x);
    for (int step : {-1, 1}) {
      const float other = bf16(static_cast<std::uint16_t>(b + step));
      ASSERT_LE(std::fabs(r - x), std::fabs(other - x)) << x;
    }
  }
}

// The two neighbours of x in a 16-bit type, and the stochastic result with given bits.
template <class Round, class Value>
void expect_neighbour(float x, std::uint32_t bits, Round round, Value value) {
  const float r = value(round(x, bits));
  const float down = value(round(x, 0u));
  const float up = value(round(x, 0xFFFFFFFFu));
  ASSERT_TRUE(r == down || r == up) << x;
  ASSERT_LE(std::fabs(down), std::fabs(x)) << x;  // bits 0: toward zero
  ASSERT_GE(std::fabs(up), std::fabs(x)) << x;    // all ones: away from zero
}

TEST(Float16Bits, StochasticRoundingGivesOneOfTheTwoNeighbours) {
  std::uint32_t state = 11;
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t bits = rounding_bits(3, static_cast<std::uint64_t>(i));
    expect_neighbour(random_float(state, -30, 16), bits, f16_bits_stochastic, f16);
    expect_neighbour(random_float(state, -140, 120), bits, bf16_bits_stochastic, bf16);
  }
}

TEST(Float16Bits, ValuesTheTypeHoldsAreStoredExactlyWhateverTheBits) {
  for (std::uint32_t h = 0; h < 0x7C00u; ++h) {
    for (std::uint32_t bits : {0u, 0x80000000u, 0xFFFFFFFFu, 0x12345678u}) {
      ASSERT_EQ(f16_bits_stochastic(f16(static_cast<std::uint16_t>(h)), bits), h) << h;
      ASSERT_EQ(f16_bits_stochastic(-f16(static_cast<std::uint16_t>(h)), bits), h | 0x8000u);
      ASSERT_EQ(bf16_bits_stochastic(bf16(static_cast<std::uint16_t>(h)), bits), h) << h;
    }
  }
}

TEST(Float16Bits, StochasticRoundingIsUnbiased) {
  // Values between neighbours, normal and subnormal: the mean of many roundings is the value.
  for (float x : {0.01f + 1e-6f, 1e-5f, 3.3e-7f, -0.3337f, 1000.3f}) {
    for (int type = 0; type < 2; ++type) {
      double sum = 0;
      const int n = 200000;
      for (int i = 0; i < n; ++i) {
        const std::uint32_t bits = rounding_bits(5, static_cast<std::uint64_t>(i));
        sum += type == 0 ? f16(f16_bits_stochastic(x, bits)) : bf16(bf16_bits_stochastic(x, bits));
      }
      const float spacing = type == 0 ? f16(f16_bits_stochastic(x, 0xFFFFFFFFu)) -
                                            f16(f16_bits_stochastic(x, 0u))
                                      : bf16(bf16_bits_stochastic(x, 0xFFFFFFFFu)) -
                                            bf16(bf16_bits_stochastic(x, 0u));
      // The mean of n Bernoulli draws: within 5 standard errors of the spacing / 2 / sqrt(n).
      EXPECT_NEAR(sum / n, x, 5 * std::fabs(spacing) / 2 / std::sqrt(n) + 1e-12)
          << (type == 0 ? "f16 " : "bf16 ") << x;
    }
  }
}

TEST(Float16Bits, SmallerBitsRoundDownMoreOften) {
  // The decision is a threshold on the bits: monotone, so a larger value never rounds lower.
  const float x = 0.01f + 3e-6f;
  const std::uint16_t down = f16_bits_stochastic(x, 0u);
  bool seen_up = false;
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFull; b += 0x01000000ull) {
    const std::uint16_t r = f16_bits_stochastic(x, static_cast<std::uint32_t>(b));
    if (r != down) seen_up = true;
    ASSERT_TRUE(r == down || seen_up) << "bits " << b;
  }
  EXPECT_TRUE(seen_up);
}

TEST(Float16Bits, InfinityNanAndOverflow) {
  const float inf = std::numeric_limits<float>::infinity();
  for (std::uint32_t bits : {0u, 0xFFFFFFFFu}) {
    EXPECT_EQ(f16_bits_stochastic(inf, bits), 0x7C00);
    EXPECT_EQ(f16_bits_stochastic(-inf, bits), 0xFC00);
    EXPECT_EQ(bf16_bits_stochastic(inf, bits), 0x7F80);
    EXPECT_TRUE(std::isnan(f16(f16_bits_stochastic(std::nanf(""), bits))));
    EXPECT_TRUE(std::isnan(bf16(bf16_bits_stochastic(std::nanf(""), bits))));
    EXPECT_EQ(f16_bits_stochastic(70000.0f, bits), 0x7C00);  // beyond f16: infinity
  }
  // Between the largest f16 (65504) and infinity: either, by the bits.
  EXPECT_EQ(f16_bits_stochastic(65510.0f, 0u), 0x7BFF);
  EXPECT_EQ(f16_bits_stochastic(65510.0f, 0xFFFFFFFFu), 0x7C00);
  // Below half the smallest subnormal: zero or the smallest subnormal.
  EXPECT_EQ(f16_bits_stochastic(1e-9f, 0u), 0x0000);
  EXPECT_EQ(f16_bits_stochastic(1e-9f, 0xFFFFFFFFu), 0x0001);
}

TEST(Float16Bits, TinyValuesRoundUpWithTheirExactProbability) {
  // Below f16's smallest subnormal s = 2^-24, x becomes s with probability |x| / s, resolved
  // to 2^-32 (truncated, so the chance of rounding up lies in [p - 2^-32, p]). Over n draws of
  // the counter-based bits the count of ups is a binomial whose mean is within n 2^-32 of n p:
  // it must lie within 6 standard deviations of that (+1 for the resolution). The bits are a
  // fixed sequence, so the check is deterministic. From 2^-150 (zero in f32) to 2^-25, every
  // exponent, three mantissas, both signs; 2^-60 and below have p <= 2^-36, so no draw of
  // these may round up (a shift by 32 bits or more once made x = 1e-20 round up in 7e-4 of
  // draws on x86).
  const int n = 1 << 16;
  const double smallest = std::ldexp(1.0, -24);
  for (int exponent = -150; exponent <= -25; ++exponent) {
    for (double fraction : {1.0, 1.37, 1.99}) {
      const float x = static_cast<float>(std::ldexp(fraction, exponent));
      const double p = std::fabs(static_cast<double>(x)) / smallest;
      for (float signed_x : {x, -x}) {
        int ups = 0;
        for (int i = 0; i < n; ++i) {
          const std::uint16_t r = f16_bits_stochastic(signed_x, rounding_bits(17, i));
          ASSERT_TRUE((r & 0x7FFFu) == 0u || (r & 0x7FFFu) == 1u) << signed_x;
          ups += (r & 0x7FFFu) == 1u ? 1 : 0;
        }
        const double mean = n * p;
        const double bound = 6 * std::sqrt(mean * (1 - p)) + 1 + n * std::ldexp(1.0, -32);
        EXPECT_LE(std::fabs(ups - mean), bound)
            << "x = " << signed_x << " (2^" << exponent << " x " << fraction << "): " << ups
            << " of " << n << " rounded up, exact probability " << p;
        if (exponent <= -60) {
          EXPECT_EQ(ups, 0) << "x = " << signed_x;
        }
      }
    }
  }
}

TEST(Float16Bits, RoundingStreamsDifferByTensorAndKey) {
  EXPECT_NE(rounding_stream(1, RoundedTensor::weight), rounding_stream(1, RoundedTensor::first_moment));
  EXPECT_NE(rounding_stream(1, RoundedTensor::weight), rounding_stream(2, RoundedTensor::weight));
  EXPECT_EQ(rounding_bits(9, 4), rounding_bits(9, 4));
  EXPECT_NE(rounding_bits(9, 4), rounding_bits(9, 5));
}

}  // namespace
}  // namespace pfc
