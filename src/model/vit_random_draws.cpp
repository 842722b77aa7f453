#include "model/vit_random_draws.h"

#include <algorithm>
#include <numeric>

#include "core/counter_rng.h"
#include "core/error.h"

namespace pfc {

VitDraws draw_vit_randomness(const DrawPosition& at, std::int64_t samples, std::int64_t tokens,
                             const std::vector<double>& rates, bool masking) {
  VitDraws d;
  const auto step = static_cast<std::uint64_t>(at.step);
  if (masking) {
    const std::uint64_t key = stream_key(at.seed, "vit_mask_noise", step);
    d.mask_noise.resize(samples * tokens);
    for (std::int64_t s = 0; s < samples; ++s)
      for (std::int64_t t = 0; t < tokens; ++t)
        d.mask_noise[s * tokens + t] =
            uniform53(key, static_cast<std::uint64_t>((at.first_sample + s) * tokens + t));
  }
  const std::int64_t depth = static_cast<std::int64_t>(rates.size());
  const std::uint64_t key = stream_key(at.seed, "vit_drop_path", step);
  d.drop_path_keep.resize(depth * 2 * samples);
  for (std::int64_t b = 0; b < depth; ++b)
    for (std::int64_t branch = 0; branch < 2; ++branch)
      for (std::int64_t s = 0; s < samples; ++s) {
        const auto index =
            static_cast<std::uint64_t>(((at.first_sample + s) * depth + b) * 2 + branch);
        d.drop_path_keep[(b * 2 + branch) * samples + s] = uniform53(key, index) < 1.0 - rates[b];
      }
  return d;
}

TokenSplit split_tokens(const std::vector<double>& noise, std::int64_t samples,
                        std::int64_t tokens, std::int64_t kept) {
  PFC_CHECK(static_cast<std::int64_t>(noise.size()) == samples * tokens && kept <= tokens,
            "masking: {} noise values for {} samples of {} tokens", noise.size(), samples, tokens);
  TokenSplit split;
  std::vector<std::int64_t> order(tokens);
  for (std::int64_t s = 0; s < samples; ++s) {
    const double* n = noise.data() + s * tokens;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t a, std::int64_t b) { return n[a] < n[b]; });
    for (std::int64_t i = 0; i < tokens; ++i)
      (i < kept ? split.kept : split.dropped).push_back(s * tokens + order[i]);
  }
  return split;
}

}  // namespace pfc
