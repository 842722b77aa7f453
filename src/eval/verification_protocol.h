// The face-verification protocol of insightface's arcface_torch eval/verification.py, exactly:
// embeddings of each image and of its left-right mirror image summed and L2-normalised;
// squared L2 distance per pair (images 2i, 2i + 1); 10 consecutive folds (sklearn KFold,
// shuffle=False); in each fold the threshold of np.arange(0, 4, 0.01) with the best accuracy
// on the other nine folds, applied to this one; accuracy mean and (population) std over the
// folds. Also XNorm (mean L2 norm of the unnormalised embeddings, mirrored and not), VAL at
// FAR = 1e-3 as calculate_val computes it (thresholds np.arange(0, 4, 0.001), scipy's
// 'slinear' interpolation of the threshold at the FAR), and the same accuracy without the
// mirror images. Everything in f64 on the host, as numpy computes it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace pfc {

// verification.py's nrof_folds: every fold needs a pair, so a file needs this many at least.
inline constexpr int kVerificationFolds = 10;

struct VerificationResult {
  std::int64_t pairs = 0;
  std::int64_t folds = 0;
  double accuracy = 0, accuracy_std = 0;                // Accuracy-Flip
  double accuracy_noflip = 0, accuracy_noflip_std = 0;  // the images alone
  double xnorm = 0;
  double best_threshold = 0;  // mean over folds of the threshold chosen on the other folds
  double val = 0, val_std = 0, far = 0;  // VAL at FAR = 1e-3 (NaN when a fold has no pair
                                         // of one kind, where verification.py divides by 0)
};

// embeddings and mirrored: host [2 * pairs, d] f32 or f64, row i the image i of the file.
VerificationResult evaluate_verification(const Tensor& embeddings, const Tensor& mirrored,
                                         const std::vector<bool>& issame,
                                         int folds = kVerificationFolds);

// The pieces, for tests against hand computations.
struct FoldAccuracy {
  std::vector<double> accuracy;        // per fold, at the threshold chosen on the others
  std::vector<double> best_threshold;  // per fold
};
// Squared L2 distances of the pairs of normalised rows (2i, 2i + 1).
std::vector<double> pair_distances(const std::vector<double>& normalised, std::int64_t rows,
                                   std::int64_t dim);
// calculate_roc's accuracy part.
FoldAccuracy fold_accuracy(const std::vector<double>& distance, const std::vector<bool>& issame,
                           int folds);
// calculate_val: mean VAL, its std, mean FAR over the folds, at `far_target`.
struct ValAtFar {
  double val = 0, val_std = 0, far = 0;
};
ValAtFar val_at_far(const std::vector<double>& distance, const std::vector<bool>& issame,
                    double far_target, int folds);
// np.sum of the values, in numpy's pairwise order (np.mean and np.std over the folds use it).
double numpy_sum(const std::vector<double>& values);
// sklearn's KFold(n_splits=folds, shuffle=False): the [begin, end) of each test fold.
std::vector<std::pair<std::int64_t, std::int64_t>> kfold_ranges(std::int64_t n, int folds);

}  // namespace pfc
