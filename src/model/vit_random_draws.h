// The random draws of a Vision Transformer's training forward: the noise that ranks each
// sample's tokens for masking (vit.py's random_masking: torch.rand, argsort, the lowest kept),
// and DropPath's per-sample keep decisions for each block's two branches. pfc draws them from the
// counter RNG (core/counter_rng.h) keyed by seed and step and indexed by the sample's place in the
// global batch, so a resumed run, or one on another rank count, draws what the uninterrupted run
// would; `pfc golden` replays the draws arcface_torch recorded instead.
#pragma once

#include <cstdint>
#include <vector>

#include "model/draw_position.h"

namespace pfc {

struct VitDraws {
  std::vector<double> mask_noise;            // [samples * tokens]; empty: no masking
  std::vector<std::uint8_t> drop_path_keep;  // [depth * 2 * samples] (block, branch, sample)
};

// pfc's draws for `samples` samples of `tokens` tokens through blocks of the DropPath rates
// `rates` (a sample keeps a branch of rate r with probability 1 - r; rate 0 always keeps).
VitDraws draw_vit_randomness(const DrawPosition& at, std::int64_t samples, std::int64_t tokens,
                             const std::vector<double>& rates, bool masking);

// The rows s * tokens + t of the `kept` tokens of each sample with the lowest noise, in
// ascending noise order (ties by position), as vit.py's argsort keeps them; and the others
// (`dropped`), in the same order.
struct TokenSplit {
  std::vector<std::int64_t> kept, dropped;
};
TokenSplit split_tokens(const std::vector<double>& noise, std::int64_t samples,
                        std::int64_t tokens, std::int64_t kept);

}  // namespace pfc
