// exp on f32 arguments at most 0 (a softmax's x - max), computed in f32 without branches or
// calls, so that a loop over it vectorises sixteen lanes to an AVX-512 register. Its error is
// that of PyTorch's CPU softmax, whose exponential (SLEEF's u10) is within 1 unit in the last
// place: every f32 in [-104, 0] was checked once against exp in long double, on AVX-512 with
// fused multiply-adds. The largest error is 1.01 units (at -5.878); 0.8 % of the results
// differ from the correctly rounded f32. tests/unit/exp_nonpositive_test.cpp checks a sample.
#pragma once

#include <bit>
#include <cstdint>

namespace pfc::cpu {

// exp(f) for f <= 0. f = k ln2 + r with |r| <= ln2 / 2: ln2 in two parts (Cody and Waite's),
// the first with 9 significant bits so that k times it is exact; exp(r) by Cephes' expf
// polynomial; 2^k put into the exponent bits. The result is scaled by 2^(k + 32), exact and
// normal for every k here, then by 2^-32, which rounds once into the subnormal results as
// well. f below -104, where every result rounds to an f32 0, is taken as -104 (-inf too); NaN
// stays NaN.
[[gnu::always_inline]] inline float exp_nonpositive(float f) {
  f = f < -104.0f ? -104.0f : f;
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 0x1.8p23f;  // adding it rounds to an integer, kept in the low bits
  const float shifted = f * kLog2e + kRound;
  const float k = shifted - kRound;
  const float r = (f - k * kLn2Hi) - k * kLn2Lo;
  // Horner's rule written out: a loop over the coefficients would keep the caller's loop from
  // vectorising. The small terms are summed first and 1 added last (1.01 units in the last
  // place; adding 1 + r first gives 1.26).
  const float q =
      5.0000001201e-1f +
      r * (1.6666665459e-1f +
           r * (4.1665795894e-2f +
                r * (8.3334519073e-3f + r * (1.3981999507e-3f + r * 1.9875691500e-4f))));
  const float p = (r * r * q + r) + 1.0f;
  // The low bits of `shifted` hold k (two's complement); k + 32 + 127 is 2^(k + 32)'s biased
  // exponent.
  const std::uint32_t scale = (std::bit_cast<std::uint32_t>(shifted) + 127 + 32) << 23;
  return p * std::bit_cast<float>(scale) * 0x1p-32f;
}

}  // namespace pfc::cpu
