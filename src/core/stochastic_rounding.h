// The random bits of stochastic rounding (float16_bits.h), counter-based as every random stream
// of pfc (counter_rng.h): the bits of element e of a stored tensor in one optimiser update are a
// pure function of (the update's key, which tensor, e). A run repeats its roundings exactly,
// a resumed run continues them exactly, and because e is the element's index in the global
// [num_classes, emb] matrix, they do not depend on how the rows are split over the ranks.
#pragma once

#include <cstdint>

#include "core/counter_rng.h"
#include "core/host_device.h"

namespace pfc {

// The stored tensors of one update: the weights and up to two optimiser moments.
enum class RoundedTensor : std::uint64_t { weight = 0, first_moment = 1, second_moment = 2 };

// The stream of one tensor within an update keyed by `key`.
PFC_HOST_DEVICE std::uint64_t rounding_stream(std::uint64_t key, RoundedTensor tensor) {
  return splitmix64(key ^ (static_cast<std::uint64_t>(tensor) * 0xA24BAED4963EE407ull));
}

// 32 uniform bits for global element `element` of a stream.
PFC_HOST_DEVICE std::uint32_t rounding_bits(std::uint64_t stream, std::uint64_t element) {
  return static_cast<std::uint32_t>(splitmix64(stream + element) >> 32);
}

}  // namespace pfc
