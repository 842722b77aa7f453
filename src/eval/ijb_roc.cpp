#include "eval/ijb_roc.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"

namespace pfc {

RocCurve roc_curve(std::span<const double> scores, std::span<const std::uint8_t> labels) {
  PFC_CHECK(scores.size() == labels.size(), "{} scores for {} labels", scores.size(),
            labels.size());
  const std::size_t n = scores.size();
  for (std::size_t i = 0; i < n; ++i)
    PFC_CHECK(std::isfinite(scores[i]), "score {} of pair {} is not finite", scores[i], i);
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return scores[a] > scores[b]; });
  // Cumulative counts at the last pair of each distinct score.
  std::vector<double> tps, fps, thresholds;
  double positives = 0;
  for (std::size_t i = 0; i < n; ++i) {
    positives += labels[order[i]] != 0 ? 1.0 : 0.0;
    if (i + 1 == n || scores[order[i + 1]] != scores[order[i]]) {
      tps.push_back(positives);
      fps.push_back(static_cast<double>(i + 1) - positives);
      thresholds.push_back(scores[order[i]]);
    }
  }
  PFC_CHECK(!tps.empty() && tps.back() > 0 && fps.back() > 0,
            "a ROC needs genuine and impostor pairs ({} genuine of {})", positives, n);
  RocCurve roc;
  const std::size_t points = tps.size();
  const auto keep = [&](std::size_t i) {
    // sklearn keeps a point where the second difference of fps or tps is not zero.
    if (points <= 2 || i == 0 || i + 1 == points) return true;
    return fps[i - 1] - 2 * fps[i] + fps[i + 1] != 0 || tps[i - 1] - 2 * tps[i] + tps[i + 1] != 0;
  };
  roc.fpr.push_back(0.0);
  roc.tpr.push_back(0.0);
  roc.thresholds.push_back(std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < points; ++i) {
    if (!keep(i)) continue;
    roc.fpr.push_back(fps[i] / fps.back());
    roc.tpr.push_back(tps[i] / tps.back());
    roc.thresholds.push_back(thresholds[i]);
  }
  return roc;
}

double roc_auc(const RocCurve& roc) {
  double area = 0;
  for (std::size_t i = 1; i < roc.fpr.size(); ++i)
    area += (roc.fpr[i] - roc.fpr[i - 1]) * (roc.tpr[i] + roc.tpr[i - 1]) / 2.0;
  return area;
}

std::size_t nearest_fpr_point(const RocCurve& roc, double far) {
  PFC_CHECK(!roc.fpr.empty(), "an empty ROC");
  std::size_t best = 0;
  for (std::size_t i = 0; i < roc.fpr.size(); ++i)
    if (std::fabs(roc.fpr[i] - far) <= std::fabs(roc.fpr[best] - far)) best = i;
  return best;
}

}  // namespace pfc
