// bfloat16 on the host (f32's sign and exponent, 7 stored mantissa bits): the 16-bit type whose
// range is f32's, for stored values that may be far below f16's smallest (AdamW's second
// moment). Conversions round to nearest even, bit for bit as the device's __nv_bfloat16.
#pragma once

#include <cstdint>

#include "core/float16_bits.h"

namespace pfc {

class BFloat16 {
 public:
  BFloat16() = default;
  explicit BFloat16(float value) : bits_(bf16_bits_nearest(value)) {}

  static BFloat16 from_bits(std::uint16_t bits) {
    BFloat16 b;
    b.bits_ = bits;
    return b;
  }
  std::uint16_t bits() const { return bits_; }
  explicit operator float() const { return bf16_bits_to_float(bits_); }
  float to_float() const { return bf16_bits_to_float(bits_); }

 private:
  std::uint16_t bits_ = 0;
};

static_assert(sizeof(BFloat16) == 2, "BFloat16 must be two bytes to alias device bf16 buffers");

}  // namespace pfc
