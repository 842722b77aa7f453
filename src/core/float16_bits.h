// Rounding f32 values to the two 16-bit storage types, as bit patterns, in code that the CPU
// backend and the CUDA kernels share (host_device.h), so that both store the same bits:
//  - bf16_bits_nearest: round to nearest even (bfloat16: f32's sign and exponent, 7 stored
//    mantissa bits), as __float2bfloat16_rn does;
//  - f16_bits_stochastic / bf16_bits_stochastic: stochastic rounding. x lies between two
//    neighbours lo <= |x| < hi of the 16-bit type; it becomes hi with probability
//    (|x| - lo) / (hi - lo), else lo, decided by 32 random bits. The expected stored value is
//    x itself, so an update smaller than half a spacing still moves the stored value on
//    average, where round-to-nearest would drop it every time. Values the type holds exactly
//    are stored exactly whatever the bits. Probabilities are resolved to 2^-32.
// Infinities stay infinite and NaN stays NaN; a value beyond the type's range may round to
// infinity as round-to-nearest would.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/host_device.h"

namespace pfc {

PFC_HOST_DEVICE std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}

PFC_HOST_DEVICE float bits_float(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
}

PFC_HOST_DEVICE std::uint16_t bf16_bits_nearest(float x) {
  const std::uint32_t b = float_bits(x);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((b >> 16) | 0x0040u);
  return static_cast<std::uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

PFC_HOST_DEVICE float bf16_bits_to_float(std::uint16_t h) {
  return bits_float(static_cast<std::uint32_t>(h) << 16);
}

PFC_HOST_DEVICE std::uint16_t bf16_bits_stochastic(float x, std::uint32_t random) {
  const std::uint32_t b = float_bits(x);
  const std::uint32_t magnitude = b & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return static_cast<std::uint16_t>((b >> 16) | 0x0040u);
  if (magnitude == 0x7F800000u) return static_cast<std::uint16_t>(b >> 16);
  // The 16 bits that bf16 drops, plus a uniform 16-bit integer, carry into the kept bits
  // with probability (dropped / 2^16): the distance to lo over the spacing.
  return static_cast<std::uint16_t>((b + (random >> 16)) >> 16);
}

PFC_HOST_DEVICE std::uint16_t f16_bits_stochastic(float x, std::uint32_t random) {
  const std::uint32_t b = float_bits(x);
  const std::uint16_t sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  const std::uint32_t magnitude = b & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);
  if (magnitude >= 0x477FF000u + 0x1000u) return static_cast<std::uint16_t>(sign | 0x7C00u);
  // |x| = mantissa * 2^(exponent - 23) with the implicit bit in the mantissa (f32 subnormals:
  // exponent -126 and none).
  const int biased = static_cast<int>(magnitude >> 23);
  const int exponent = biased == 0 ? -126 : biased - 127;
  const std::uint32_t mantissa = biased == 0 ? magnitude : (magnitude & 0x007FFFFFu) | 0x00800000u;
  // f16's spacing at |x| is 2^(max(exponent, -14) - 10): `drop` low mantissa bits fall below it.
  const int floor_exponent = exponent < -14 ? -14 : exponent;
  const int drop = 13 + floor_exponent - exponent;
  // As for bf16, the dropped bits plus as many uniform ones carry into the kept bits with
  // probability dropped / 2^drop: random bits 0 truncate toward zero, all ones round away.
  std::uint32_t kept;
  bool up;
  if (drop < 32) {
    kept = mantissa >> drop;
    const std::uint64_t dropped = mantissa & ((1u << drop) - 1u);
    up = (static_cast<std::uint64_t>(random) >> (32 - drop)) + dropped >= (1ull << drop);
  } else {
    // The probability mantissa / 2^drop, resolved to 2^-32, is mantissa >> (drop - 32) in
    // units of 2^-32. The mantissa holds at most 24 bits, so from a shift of 24 on (|x| below
    // 2^-56) that is 0; a shift count of 32 or more would be undefined in C++ (x86 wraps it,
    // the GPU clamps it), so it is never made.
    kept = 0;
    const int shift = drop - 32;
    const std::uint32_t threshold = shift < 24 ? mantissa >> shift : 0u;
    up = static_cast<std::uint64_t>(random) + threshold >= (1ull << 32);
  }
  kept += up ? 1u : 0u;
  // `kept` counts spacings: below 2^-14 the f16 bits are that count (a carry to 1024 is the
  // smallest normal); above, it holds the implicit bit, and adding it to the exponent's field
  // lets a carry bump the exponent (and turn the largest finite value into infinity).
  if (exponent < -14) return static_cast<std::uint16_t>(sign | kept);
  return static_cast<std::uint16_t>(sign | ((static_cast<std::uint32_t>(exponent + 14) << 10) + kept));
}

}  // namespace pfc
