// exp on f32 arguments at most 0 (a softmax's x - max), computed in f64 without branches or
// calls, so that a loop over it vectorises, and accurate enough that rounding it to f32 gives
// the correctly rounded exponential: tests/unit/exp_nonpositive_test.cpp checks a sample, and
// every f32 in [-150, 0] was checked once on each instruction set (the C library's expf is
// within 0.502 units in the last place, and differs from it on 97052 of them).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace pfc::cpu {

// exp(d) in f64 for d <= 0, to about 1e-15 relative. d = k ln2 + r with |r| <= ln2 / 2; ln2
// in two parts (fdlibm's), the first with trailing zeros so that k times it is exact; exp(r) by
// its Taylor series to r^12; 2^k put into the exponent bits. d below -150, where every result
// rounds to an f32 0, is taken as -150 (-inf too); NaN stays NaN.
[[gnu::always_inline]] inline double exp_nonpositive(float f) {
  // Selected on the bits by a mask: GCC 12 vectorises no select here, floating-point or not.
  // The f32 values below -150 are the bit patterns above -150's up to -inf's.
  constexpr std::uint32_t kMinus150 = std::bit_cast<std::uint32_t>(-150.0f);
  constexpr std::uint32_t kMinusInfinity = std::bit_cast<std::uint32_t>(-HUGE_VALF);
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t below =
      0u - static_cast<std::uint32_t>(bits - kMinus150 - 1 < kMinusInfinity - kMinus150);
  const double d = std::bit_cast<float>((bits & ~below) | (kMinus150 & below));
  constexpr double kLog2e = 1.4426950408889634074;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kRound = 0x1.8p52;  // adding it rounds to an integer, kept in the low bits
  const double shifted = d * kLog2e + kRound;
  const double k = shifted - kRound;
  const double r = (d - k * kLn2Hi) - k * kLn2Lo;
  // Horner's rule written out, each coefficient a constant to multiply by: a loop over the
  // coefficients would keep the caller's loop from vectorising, and a division costs ten
  // multiplications.
  const double p =
      1.0 +
      r * (1.0 +
           r * (1.0 / 2 +
                r * (1.0 / 6 +
                     r * (1.0 / 24 +
                          r * (1.0 / 120 +
                               r * (1.0 / 720 +
                                    r * (1.0 / 5040 +
                                         r * (1.0 / 40320 +
                                              r * (1.0 / 362880 +
                                                   r * (1.0 / 3628800 +
                                                        r * (1.0 / 39916800 +
                                                             r * (1.0 / 479001600))))))))))));
  // The low bits of `shifted` hold k (two's complement); k + 1023 is 2^k's biased exponent.
  const std::uint64_t scale = (std::bit_cast<std::uint64_t>(shifted) + 1023) << 52;
  return p * std::bit_cast<double>(scale);
}

}  // namespace pfc::cpu
