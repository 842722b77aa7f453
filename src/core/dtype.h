// Element types a Tensor can hold, with their sizes and printable names. bf16 (bfloat16: f32's
// exponent, 8 significant bits) holds only stored values (16-bit class centres and their
// moments); nothing computes in it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pfc {

enum class DType : std::uint8_t { f16, f32, f64, i32, i64, u8, bf16 };

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f16: return 2;
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::u8: return 1;
    case DType::bf16: return 2;
  }
  return 0;
}

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f16: return "f16";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
    case DType::bf16: return "bf16";
  }
  return "?";
}

// The 16-bit floating types: f16 and bf16.
constexpr bool is_16bit_float(DType t) { return t == DType::f16 || t == DType::bf16; }

class Half;
class BFloat16;
template <class T> struct dtype_of;
template <> struct dtype_of<Half> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<std::uint8_t> { static constexpr DType value = DType::u8; };

}  // namespace pfc
