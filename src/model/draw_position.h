// Where a training forward is in the run, for a network that draws at random (the Vision
// Transformers' token masking and DropPath): its draws are those of global samples first_sample,
// first_sample + 1, ... of optimiser step `step` under `seed`, the same on any rank count and
// after a resume.
#pragma once

#include <cstdint>

namespace pfc {

struct DrawPosition {
  std::uint64_t seed = 0;
  std::int64_t step = 0;
  std::int64_t first_sample = 0;
};

}  // namespace pfc
