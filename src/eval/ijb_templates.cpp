#include "eval/ijb_templates.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace pfc {

std::vector<double> template_features(std::span<const float> features, std::int64_t emb,
                                      const IjbImages& images) {
  const std::int64_t n = images.size();
  PFC_CHECK(static_cast<std::int64_t>(features.size()) == n * emb,
            "{} feature values for {} images of {}", features.size(), n, emb);
  const auto e = static_cast<std::size_t>(emb);
  // The images grouped by template, then by media within it.
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
    if (images.template_index[ua] != images.template_index[ub])
      return images.template_index[ua] < images.template_index[ub];
    return images.media_ids[ua] < images.media_ids[ub];
  });
  // f32 as numpy computes them on the f32 features: each media's mean (its rows added in list
  // order, then divided by their count) and the sum over the medias (in ascending media id,
  // np.unique's order); only the normalisation and the scores are f64.
  std::vector<float> sums(images.templates.size() * e, 0.0f);
  std::vector<float> media(e);
  for (std::size_t g = 0; g < order.size();) {
    const auto first = static_cast<std::size_t>(order[g]);
    const std::int32_t t = images.template_index[first];
    const std::int64_t m = images.media_ids[first];
    std::fill(media.begin(), media.end(), 0.0f);
    std::size_t count = 0;
    for (; g < order.size(); ++g, ++count) {
      const auto i = static_cast<std::size_t>(order[g]);
      if (images.template_index[i] != t || images.media_ids[i] != m) break;
      const float* f = features.data() + i * e;
      for (std::size_t k = 0; k < e; ++k) media[k] += f[k] * images.faceness[i];
    }
    float* out = sums.data() + static_cast<std::size_t>(t) * e;
    for (std::size_t k = 0; k < e; ++k) out[k] += media[k] / static_cast<float>(count);
  }
  std::vector<double> templates(sums.begin(), sums.end());
  for (std::size_t t = 0; t < images.templates.size(); ++t) {
    double* row = templates.data() + t * e;
    double norm = 0;
    for (std::size_t k = 0; k < e; ++k) norm += row[k] * row[k];
    norm = std::sqrt(norm);
    if (norm > 0)
      for (std::size_t k = 0; k < e; ++k) row[k] /= norm;
  }
  return templates;
}

std::int64_t weightless_templates(const IjbImages& images) {
  std::vector<bool> weighted(images.templates.size(), false);
  for (std::size_t i = 0; i < images.faceness.size(); ++i)
    if (images.faceness[i] != 0.0f)
      weighted[static_cast<std::size_t>(images.template_index[i])] = true;
  return static_cast<std::int64_t>(std::count(weighted.begin(), weighted.end(), false));
}

void score_pairs(std::span<const double> templates, std::int64_t emb, const IjbPairs& pairs,
                 std::int64_t begin, std::int64_t end, std::span<double> scores) {
  PFC_CHECK(begin >= 0 && begin <= end && end <= pairs.size() &&
                static_cast<std::int64_t>(scores.size()) >= end - begin,
            "pairs [{}, {}) of {} into {} scores", begin, end, pairs.size(), scores.size());
  const auto e = static_cast<std::size_t>(emb);
  for (std::int64_t p = begin; p < end; ++p) {
    const double* a =
        templates.data() + static_cast<std::size_t>(pairs.first[static_cast<std::size_t>(p)]) * e;
    const double* b = templates.data() +
                      static_cast<std::size_t>(pairs.second[static_cast<std::size_t>(p)]) * e;
    double dot = 0;
    for (std::size_t k = 0; k < e; ++k) dot += a[k] * b[k];
    scores[static_cast<std::size_t>(p - begin)] = dot;
  }
}

}  // namespace pfc
