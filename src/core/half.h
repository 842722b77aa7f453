// IEEE 754 binary16 on the host, written by hand so that the CPU backend, the golden
// checks and the checkpoint code agree bit for bit with the device's __half.
#pragma once

#include <cstdint>

namespace pfc {

class Half {
 public:
  Half() = default;
  explicit Half(float value) : bits_(from_float(value)) {}

  static Half from_bits(std::uint16_t bits) {
    Half h;
    h.bits_ = bits;
    return h;
  }
  std::uint16_t bits() const { return bits_; }
  explicit operator float() const { return to_float(bits_); }
  float to_float() const { return to_float(bits_); }

  // Round to nearest even; overflow goes to infinity, NaN stays NaN (quiet).
  static std::uint16_t from_float(float value);
  static float to_float(std::uint16_t bits);

 private:
  std::uint16_t bits_ = 0;
};

static_assert(sizeof(Half) == 2, "Half must be two bytes to alias device fp16 buffers");

}  // namespace pfc
