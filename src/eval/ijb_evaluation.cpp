#include "eval/ijb_evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "eval/ijb_roc.h"
#include "eval/ijb_templates.h"

namespace pfc {

namespace {

// Pairs scored together: their scores are all the memory scoring needs beyond the templates.
constexpr std::int64_t kPairBlock = std::int64_t{1} << 16;

template <class T>
Tensor host_copy(const std::vector<T>& values, DType dtype) {
  Tensor t = Tensor::host({static_cast<std::int64_t>(values.size())}, dtype);
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

}  // namespace

IjbResult evaluate_ijb(const IjbImages& images, const IjbPairs& pairs, Tensor features) {
  const std::int64_t n = images.size();
  const std::int64_t emb = features.dim(1);
  const std::span<const float> values(features.data<float>(), static_cast<std::size_t>(n * emb));
  for (std::size_t k = 0; k < values.size(); ++k)
    if (!std::isfinite(values[k]))
      throw Error(fmt::format("the feature of image '{}' (line {}) is not finite: the network's "
                              "weights or inputs give NaN or infinity",
                              images.names[k / static_cast<std::size_t>(emb)],
                              k / static_cast<std::size_t>(emb) + 1));

  IjbResult r;
  r.embedding_size = emb;
  r.image_names = images.names;
  r.image_features = features;
  r.faceness_scores = host_copy(images.faceness, DType::f32);
  r.image_templates = host_copy(images.template_ids, DType::i64);
  r.image_medias = host_copy(images.media_ids, DType::i64);
  r.templates = host_copy(images.templates, DType::i64);

  const std::vector<double> templates = template_features(values, emb, images);
  r.template_features = host_copy(templates, DType::f64)
                            .reshape({static_cast<std::int64_t>(images.templates.size()), emb});
  r.scores = Tensor::host({pairs.size()}, DType::f64);
  const std::span<double> scores(r.scores.data<double>(), static_cast<std::size_t>(pairs.size()));
  for (std::int64_t begin = 0; begin < pairs.size(); begin += kPairBlock) {
    const std::int64_t end = std::min(pairs.size(), begin + kPairBlock);
    score_pairs(templates, emb, pairs, begin, end, scores.subspan(static_cast<std::size_t>(begin)));
  }
  r.labels = host_copy(pairs.labels, DType::u8);

  const RocCurve roc = roc_curve(scores, pairs.labels);
  r.fpr = host_copy(roc.fpr, DType::f64);
  r.tpr = host_copy(roc.tpr, DType::f64);
  r.thresholds = host_copy(roc.thresholds, DType::f64);
  IjbSummary& s = r.summary;
  s.images = n;
  s.templates = static_cast<std::int64_t>(images.templates.size());
  s.pairs = pairs.size();
  s.genuine_pairs = pairs.genuine;
  for (std::size_t k = 0; k < kIjbFars.size(); ++k)
    s.tar_at_far[k] = roc.tpr[nearest_fpr_point(roc, kIjbFars[k])];
  s.auc = roc_auc(roc);
  return r;
}

}  // namespace pfc
