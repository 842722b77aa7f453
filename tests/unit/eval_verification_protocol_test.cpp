// The protocol of arcface_torch's eval/verification.py: sklearn's KFold split, the threshold
// grid np.arange(0, 4, 0.01) with np.less and np.argmax's first maximum, calculate_val's
// threshold interpolation, XNorm and the flip sum; against hand-computed cases and against a
// literal, loop-by-loop transcription of verification.py (the plain reference beside the
// sorted-count implementation).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "eval/verification_protocol.h"

namespace pfc {
namespace {

// ---- the literal transcription of verification.py -------------------------------------

struct Sets {
  std::vector<std::int64_t> train, test;
};

std::vector<Sets> literal_kfold(std::int64_t n, int folds) {
  std::vector<Sets> sets;
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(folds), n / folds);
  for (std::int64_t f = 0; f < n % folds; ++f) ++sizes[static_cast<std::size_t>(f)];
  std::int64_t start = 0;
  for (const std::int64_t size : sizes) {
    Sets s;
    for (std::int64_t i = 0; i < n; ++i)
      (i >= start && i < start + size ? s.test : s.train).push_back(i);
    sets.push_back(s);
    start += size;
  }
  return sets;
}

struct Counts {
  double tpr, fpr, acc, val, far;
};

Counts calculate(double threshold, const std::vector<double>& dist,
                 const std::vector<bool>& same, const std::vector<std::int64_t>& set) {
  std::int64_t tp = 0, fp = 0, tn = 0, fn = 0;
  for (const std::int64_t i : set) {
    const bool predict = dist[static_cast<std::size_t>(i)] < threshold;
    const bool actual = same[static_cast<std::size_t>(i)];
    tp += predict && actual;
    fp += predict && !actual;
    tn += !predict && !actual;
    fn += !predict && actual;
  }
  const double n = static_cast<double>(set.size());
  return {tp + fn ? double(tp) / double(tp + fn) : 0, fp + tn ? double(fp) / double(fp + tn) : 0,
          double(tp + tn) / n, double(tp) / double(tp + fn), double(fp) / double(fp + tn)};
}

std::vector<double> literal_arange(int n, double step) {
  std::vector<double> t;
  for (int i = 0; i < n; ++i) t.push_back(i * step);
  return t;
}

std::vector<double> literal_roc(const std::vector<double>& dist, const std::vector<bool>& same) {
  const std::vector<double> thresholds = literal_arange(400, 0.01);
  std::vector<double> accuracy;
  for (const Sets& s : literal_kfold(static_cast<std::int64_t>(dist.size()), 10)) {
    std::size_t best = 0;
    for (std::size_t t = 0; t < thresholds.size(); ++t)
      if (calculate(thresholds[t], dist, same, s.train).acc >
          calculate(thresholds[best], dist, same, s.train).acc)
        best = t;
    accuracy.push_back(calculate(thresholds[best], dist, same, s.test).acc);
  }
  return accuracy;
}

// scipy: BSpline(t = [x0, x..., xn], c = y, k = 1) at `at`, by find_interval and de Boor.
double literal_slinear(const std::vector<double>& x, const std::vector<double>& y, double at) {
  std::vector<double> t{x.front()};
  t.insert(t.end(), x.begin(), x.end());
  t.push_back(x.back());
  const std::size_t n = x.size();
  std::size_t l = 2;
  while (at >= t[l] && l != n) ++l;
  const std::size_t interval = l - 1;
  const double xb = t[interval + 1], xa = t[interval];
  double h0 = 0, h1 = 0;
  if (xb != xa) {
    const double w = 1.0 / (xb - xa);
    h0 += w * (xb - at);
    h1 = w * (at - xa);
  }
  return 0.0 + y[interval - 1] * h0 + y[interval] * h1;
}

ValAtFar literal_val(const std::vector<double>& dist, const std::vector<bool>& same) {
  const std::vector<double> thresholds = literal_arange(4000, 0.001);
  std::vector<double> val, far;
  for (const Sets& s : literal_kfold(static_cast<std::int64_t>(dist.size()), 10)) {
    std::vector<double> far_train;
    double max_far = 0;
    for (const double t : thresholds) {
      far_train.push_back(calculate(t, dist, same, s.train).far);
      max_far = std::max(max_far, far_train.back());
    }
    const double threshold = max_far >= 1e-3 ? literal_slinear(far_train, thresholds, 1e-3) : 0;
    const Counts c = calculate(threshold, dist, same, s.test);
    val.push_back(c.val);
    far.push_back(c.far);
  }
  double vm = 0, fm = 0, vs = 0;
  for (std::size_t i = 0; i < val.size(); ++i) {
    vm += val[i] / 10;
    fm += far[i] / 10;
  }
  for (const double v : val) vs += (v - vm) * (v - vm) / 10;
  return {vm, std::sqrt(vs), fm};
}

// ---- the tests ------------------------------------------------------------------------------

TEST(VerificationProtocol, FoldsAreSklearnsKFold) {
  const auto ranges = kfold_ranges(25, 10);
  const std::int64_t sizes[] = {3, 3, 3, 3, 3, 2, 2, 2, 2, 2};
  std::int64_t begin = 0;
  for (std::size_t f = 0; f < 10; ++f) {
    EXPECT_EQ(ranges[f].first, begin);
    EXPECT_EQ(ranges[f].second - ranges[f].first, sizes[f]);
    begin = ranges[f].second;
  }
  EXPECT_EQ(begin, 25);
}

TEST(VerificationProtocol, ThresholdsAreNumpysGridAndNpLessIsStrict) {
  // Same pairs at 0.305, different ones at 1.7: the first perfect threshold is 0.31.
  std::vector<double> dist;
  std::vector<bool> same;
  for (int i = 0; i < 40; ++i) {
    same.push_back(i % 2 == 0);
    dist.push_back(i % 2 == 0 ? 0.305 : 1.7);
  }
  FoldAccuracy a = fold_accuracy(dist, same, 10);
  for (std::size_t f = 0; f < 10; ++f) {
    EXPECT_EQ(a.accuracy[f], 1.0);
    EXPECT_EQ(a.best_threshold[f], 31 * 0.01);
  }
  // At exactly 0.5 (np.arange(0, 4, 0.01)[50]) a pair is not below 0.5 (np.less): the first
  // perfect threshold is the next one.
  for (std::size_t i = 0; i < dist.size(); i += 2) dist[i] = 50 * 0.01;
  a = fold_accuracy(dist, same, 10);
  EXPECT_EQ(a.best_threshold[0], 51 * 0.01);
}

TEST(VerificationProtocol, ValInterpolatesTheThresholdAtTheFar) {
  // Every different pair at 1.2345: FAR on the training folds is 0 up to threshold 1.234 and 1
  // from 1.235, so the threshold is 1.234 + 0.001 * 0.001 and no test pair is falsely accepted.
  std::vector<double> dist;
  std::vector<bool> same;
  for (int i = 0; i < 100; ++i) {
    same.push_back(i % 2 == 0);
    dist.push_back(i % 2 == 0 ? 0.5 : 1.2345);
  }
  const ValAtFar v = val_at_far(dist, same, 1e-3, 10);
  EXPECT_EQ(v.val, 1.0);
  EXPECT_EQ(v.val_std, 0.0);
  EXPECT_EQ(v.far, 0.0);
  // Antipodal different pairs (distance 4) never reach the FAR: the threshold is 0, VAL 0.
  for (std::size_t i = 1; i < dist.size(); i += 2) dist[i] = 4.0;
  const ValAtFar none = val_at_far(dist, same, 1e-3, 10);
  EXPECT_EQ(none.val, 0.0);
  EXPECT_EQ(none.far, 0.0);
}

TEST(VerificationProtocol, MatchesTheLiteralTranscriptionOnRandomPairs) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (const std::int64_t pairs : {60, 137, 600}) {
    std::vector<double> dist;
    std::vector<bool> same;
    for (std::int64_t p = 0; p < pairs; ++p) {
      same.push_back(rng() % 2 == 0);
      // Overlapping distributions, so that thresholds and folds matter.
      dist.push_back(std::clamp((same.back() ? 0.9 : 1.4) + 0.35 * noise(rng), 0.0, 4.0));
    }
    SCOPED_TRACE(pairs);
    EXPECT_EQ(fold_accuracy(dist, same, 10).accuracy, literal_roc(dist, same));
    const ValAtFar ours = val_at_far(dist, same, 1e-3, 10);
    const ValAtFar literal = literal_val(dist, same);
    // The means differ from the literal loop's by numpy's summation order only.
    EXPECT_DOUBLE_EQ(ours.val, literal.val);
    EXPECT_DOUBLE_EQ(ours.val_std, literal.val_std);
    EXPECT_DOUBLE_EQ(ours.far, literal.far);
  }
}

TEST(VerificationProtocol, MeansSumInNumpysOrder) {
  // np.sum([0.1] * 10) is 1.0; a plain loop gives 0.9999999999999999.
  const std::vector<double> tenths(10, 0.1);
  EXPECT_EQ(numpy_sum(tenths), 1.0);
  double loop = 0;
  for (const double x : tenths) loop += x;
  EXPECT_NE(loop, 1.0);
  // Above 128 values numpy splits the sum in halves (multiples of 8).
  std::vector<double> many;
  for (int i = 0; i < 300; ++i) many.push_back(0.1 * (i % 7));
  double halves = 0;
  const auto part = [&](std::size_t begin, std::size_t end) {
    return numpy_sum(std::vector<double>(many.begin() + static_cast<std::ptrdiff_t>(begin),
                                         many.begin() + static_cast<std::ptrdiff_t>(end)));
  };
  halves = part(0, 144) + (part(144, 216) + part(216, 300));
  EXPECT_EQ(numpy_sum(many), halves);
}

TEST(VerificationProtocol, FlipSumXNormAndNoFlip) {
  // 10 pairs in 2-D: image 2p at (3, 0); image 2p + 1 at (3, 0) when the pair is the same
  // person, at (0, 3) when not. Mirror images equal the images.
  const std::int64_t pairs = 10;
  Tensor plain = Tensor::host({2 * pairs, 2}, DType::f32);
  Tensor mirrored = Tensor::host({2 * pairs, 2}, DType::f32);
  std::vector<bool> same;
  for (std::int64_t p = 0; p < pairs; ++p) {
    same.push_back(p % 2 == 0);
    float* a = plain.data<float>() + 4 * p;
    float* m = mirrored.data<float>() + 4 * p;
    a[0] = 3, a[1] = 0, a[2] = same.back() ? 3.f : 0.f, a[3] = same.back() ? 0.f : 3.f;
    for (int k = 0; k < 4; ++k) m[k] = a[k];
  }
  const VerificationResult r = evaluate_verification(plain, mirrored, same);
  EXPECT_EQ(r.pairs, pairs);
  EXPECT_DOUBLE_EQ(r.xnorm, 3.0);
  EXPECT_EQ(r.accuracy, 1.0);
  EXPECT_EQ(r.accuracy_std, 0.0);
  EXPECT_EQ(r.accuracy_noflip, 1.0);
  // Same pairs at distance 0, different ones at 2: the first threshold above 0 wins.
  EXPECT_DOUBLE_EQ(r.best_threshold, 0.01);

  // Mirror images that pull the same pairs' second images to (-3, 0.3) after the sum: the
  // same pairs now lie further apart than the different ones. Accuracy-Flip, which sees the
  // sum, falls; the accuracy of the images alone does not.
  for (std::int64_t p = 0; p < pairs; p += 2) {
    float* m = mirrored.data<float>() + 4 * p;
    m[2] = -6, m[3] = 0.3f;
  }
  const VerificationResult flipped = evaluate_verification(plain, mirrored, same);
  EXPECT_EQ(flipped.accuracy_noflip, 1.0);
  EXPECT_LT(flipped.accuracy, 0.9);
}

}  // namespace
}  // namespace pfc
