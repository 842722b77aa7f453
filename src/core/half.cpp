#include "core/half.h"

#include <cstring>

namespace pfc {

std::uint16_t Half::from_float(float value) {
  std::uint32_t f;
  std::memcpy(&f, &value, sizeof f);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t abs = f & 0x7FFFFFFFu;

  if (abs >= 0x7F800000u) {  // inf or NaN
    const std::uint32_t mantissa = abs & 0x007FFFFFu;
    return static_cast<std::uint16_t>(sign | 0x7C00u | (mantissa ? 0x0200u | (mantissa >> 13) : 0u));
  }
  if (abs >= 0x477FF000u) {  // rounds to a value above 65504: infinity
    return static_cast<std::uint16_t>(sign | 0x7C00u);
  }
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);  // rounds to zero
    const std::uint32_t exponent = abs >> 23;
    const std::uint32_t mantissa = (abs & 0x007FFFFFu) | 0x00800000u;
    const std::uint32_t shift = 126u - exponent;  // 14..24
    std::uint32_t half_mantissa = mantissa >> shift;
    const std::uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1u))) ++half_mantissa;
    return static_cast<std::uint16_t>(sign | half_mantissa);
  }
  // Normal: rebias the exponent, round the mantissa to 10 bits (carry may bump the exponent).
  std::uint32_t rounded = abs - 0x38000000u;
  const std::uint32_t remainder = rounded & 0x1FFFu;
  rounded >>= 13;
  if (remainder > 0x1000u || (remainder == 0x1000u && (rounded & 1u))) ++rounded;
  return static_cast<std::uint16_t>(sign | rounded);
}

float Half::to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x03FFu;
  std::uint32_t f;
  if (exponent == 0x1Fu) {
    f = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    f = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    f = sign;
  } else {  // subnormal half: normalise into a float
    std::uint32_t e = 113u;
    while ((mantissa & 0x0400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    f = sign | (e << 23) | ((mantissa & 0x03FFu) << 13);
  }
  float value;
  std::memcpy(&value, &f, sizeof value);
  return value;
}

}  // namespace pfc
