// The ROC and the TAR at FAR table of eval_ijbc.py: sklearn.metrics.roc_curve(labels, scores)
// with its defaults, sklearn.metrics.auc on it, and the script's pick of the curve point whose
// FPR is nearest each target FAR.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace pfc {

struct RocCurve {
  std::vector<double> fpr, tpr, thresholds;
};

// sklearn's roc_curve with pos_label 1 and drop_intermediate=True: one point per distinct
// score, from the highest (true and false positives counted at or above it); of those, the
// points where the curve does not bend are dropped (the first and last are kept); then a
// first point (0, 0) with threshold +inf. FPR and TPR are the counts over the totals. Needs
// at least one genuine (label 1) and one impostor (label 0) pair.
RocCurve roc_curve(std::span<const double> scores, std::span<const std::uint8_t> labels);

// The area under the curve by the trapezoidal rule (sklearn's auc).
double roc_auc(const RocCurve& roc);

// The curve point eval_ijbc.py reports for `far`: the nearest FPR, and of equally near points
// the last in the curve's order (the script searches the flipped curve and keeps the first),
// so that of points with the same FPR the one with the highest TPR counts. Its index.
std::size_t nearest_fpr_point(const RocCurve& roc, double far);

}  // namespace pfc
