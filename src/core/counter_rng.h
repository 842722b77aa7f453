// Counter-based random numbers: value i of stream (seed, key) is a pure function of
// (seed, key, i), so a CPU loop, a CUDA kernel and a resumed run all draw the same numbers
// in any order and on any number of ranks. The mixer is SplitMix64's finaliser, which is
// also what the golden files' fill rule uses.
#pragma once

#include <math.h>

#include <cstdint>
#include <string_view>

#include "core/host_device.h"

namespace pfc {

PFC_HOST_DEVICE std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// FNV-1a 64 of a name: turns parameter names and stream labels into stream keys.
constexpr std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

// Uniform double in [0, 1) with 24 bits, exactly as the golden fill rule draws it.
PFC_HOST_DEVICE double uniform24(std::uint64_t key, std::uint64_t index) {
  return static_cast<double>(splitmix64(key + index) >> 40) / 16777216.0;
}

// Uniform double in [0, 1) with 53 bits, for sampling and data order.
PFC_HOST_DEVICE double uniform53(std::uint64_t key, std::uint64_t index) {
  return static_cast<double>(splitmix64(key + index) >> 11) * (1.0 / 9007199254740992.0);
}

// The golden files' fill rule: value i of the tensor called `name`.
PFC_HOST_DEVICE float golden_fill_value(std::uint64_t name_hash, std::uint64_t index,
                                        double center, double scale) {
  return static_cast<float>(center + scale * (2.0 * uniform24(name_hash, index) - 1.0));
}

// Normal value i of stream `key`, scaled by `stddev`: Box-Muller on uniforms 2p and 2p + 1 of
// pair p = i / 2, even i taking the cosine half and odd i the sine half, so any element can be
// drawn alone. 1 - u lies in (0, 1], so the logarithm is finite. The C math functions (not
// std::) are the ones CUDA also provides in device code; both round to within an ulp in f64,
// far below the f32 the value is stored in.
PFC_HOST_DEVICE float normal_value(std::uint64_t key, std::uint64_t index, double stddev) {
  const std::uint64_t pair = index / 2;
  const double radius = sqrt(-2.0 * log(1.0 - uniform53(key, 2 * pair)));
  const double angle = 6.283185307179586476925 * uniform53(key, 2 * pair + 1);
  return static_cast<float>(stddev * radius * (index % 2 == 0 ? cos(angle) : sin(angle)));
}

// A stream key for (seed, purpose, step, rank): distinct purposes never share numbers.
// purpose_hash is fnv1a64 of a label such as "sampler" (a string cannot reach a kernel).
PFC_HOST_DEVICE std::uint64_t stream_key(std::uint64_t seed, std::uint64_t purpose_hash,
                                       std::uint64_t step = 0, std::uint64_t rank = 0) {
  std::uint64_t k = purpose_hash ^ (seed * 0xD1B54A32D192ED03ull);
  k = splitmix64(k ^ (step * 0x9E3779B97F4A7C15ull));
  return splitmix64(k ^ (rank * 0xC2B2AE3D27D4EB4Full));
}

}  // namespace pfc

namespace pfc {
inline std::uint64_t stream_key(std::uint64_t seed, std::string_view purpose, std::uint64_t step = 0,
                                std::uint64_t rank = 0) {
  return stream_key(seed, fnv1a64(purpose), step, rank);
}
}  // namespace pfc
