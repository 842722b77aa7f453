#include "eval/verification_protocol.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace pfc {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// np.arange(0, stop, step) for a float step: ceil(stop / step) values start + i * delta,
// delta = (start + step) - start, as numpy fills them.
std::vector<double> arange(double stop, double step) {
  const auto n = static_cast<std::int64_t>(std::ceil(stop / step));
  const double delta = (0.0 + step) - 0.0;
  std::vector<double> values(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = 0.0 + i * delta;
  return values;
}

// The distances of one subset of pairs, split by kind and sorted, so that "how many are below
// a threshold" (np.less) is a binary search.
struct SortedDistances {
  std::vector<double> same, different;

  std::int64_t size() const { return static_cast<std::int64_t>(same.size() + different.size()); }
  static std::int64_t below(const std::vector<double>& sorted, double threshold) {
    return std::lower_bound(sorted.begin(), sorted.end(), threshold) - sorted.begin();
  }
  // calculate_accuracy's acc = (tp + tn) / n.
  double accuracy(double threshold) const {
    const std::int64_t tp = below(same, threshold);
    const std::int64_t tn = static_cast<std::int64_t>(different.size()) - below(different,
                                                                                threshold);
    return static_cast<double>(tp + tn) / static_cast<double>(size());
  }
  // calculate_val_far's (val, far); a division by zero (no pair of a kind) gives NaN where
  // verification.py would raise.
  std::pair<double, double> val_far(double threshold) const {
    const auto ratio = [](std::int64_t n, std::size_t d) {
      return d == 0 ? kNaN : static_cast<double>(n) / static_cast<double>(d);
    };
    return {ratio(below(same, threshold), same.size()),
            ratio(below(different, threshold), different.size())};
  }
};

// The pairs of fold `fold` (test) or of every other fold (train).
SortedDistances subset(const std::vector<double>& distance, const std::vector<bool>& issame,
                       const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges,
                       std::size_t fold, bool train) {
  SortedDistances s;
  for (std::size_t f = 0; f < ranges.size(); ++f) {
    if ((f == fold) == train) continue;
    for (std::int64_t i = ranges[f].first; i < ranges[f].second; ++i)
      (issame[static_cast<std::size_t>(i)] ? s.same : s.different)
          .push_back(distance[static_cast<std::size_t>(i)]);
  }
  std::sort(s.same.begin(), s.same.end());
  std::sort(s.different.begin(), s.different.end());
  return s;
}

// numpy's pairwise summation of n values (pairwise_sum in loops_utils.h), which np.mean and
// np.std use: eight running sums below 128 values, halves above.
double pairwise_sum(const double* a, std::size_t n) {
  if (n < 8) {
    double sum = 0.;
    for (std::size_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= 128) {
    double r[8];
    for (std::size_t j = 0; j < 8; ++j) r[j] = a[j];
    std::size_t i = 8;
    for (; i < n - n % 8; i += 8)
      for (std::size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  std::size_t half = n / 2;
  half -= half % 8;
  return pairwise_sum(a, half) + pairwise_sum(a + half, n - half);
}

double mean(const std::vector<double>& v) {
  return numpy_sum(v) / static_cast<double>(v.size());
}

// np.std: the population standard deviation, sqrt(mean((x - mean(x))^2)).
double population_std(const std::vector<double>& v) {
  const double m = mean(v);
  std::vector<double> squares;
  for (const double x : v) squares.push_back((x - m) * (x - m));
  return std::sqrt(numpy_sum(squares) / static_cast<double>(v.size()));
}

// scipy's interp1d(x, y, kind='slinear')(at) for a non-decreasing x that brackets `at`: a
// degree-1 B-spline with knots [x0, x, x_last], evaluated as scipy's de Boor recursion does,
// including its choice of interval among repeated x values and its 0 on an empty interval.
double slinear(const std::vector<double>& x, const std::vector<double>& y, double at) {
  std::size_t j = 1;
  while (j < x.size() - 1 && !(x[j] > at)) ++j;
  const double xa = x[j - 1], xb = x[j];
  if (xb == xa) return 0.0;
  const double w = 1.0 / (xb - xa);
  const double h0 = 0.0 + w * (xb - at);
  const double h1 = w * (at - xa);
  return (0.0 + y[j - 1] * h0) + y[j] * h1;
}

// Rows of a host f32/f64 [rows, dim] tensor as f64 (numpy's float64 copy).
std::vector<double> as_f64(const Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  if (t.dtype() == DType::f32) {
    const float* p = t.data<float>();
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else {
    const double* p = t.data<double>();
    std::copy(p, p + v.size(), v.begin());
  }
  return v;
}

double row_norm(const double* row, std::int64_t dim) {
  double s = 0;
  for (std::int64_t k = 0; k < dim; ++k) s += row[k] * row[k];
  return std::sqrt(s);
}

// sklearn.preprocessing.normalize: each row divided by its L2 norm, a zero row left as is.
std::vector<double> normalise_rows(std::vector<double> v, std::int64_t rows, std::int64_t dim) {
  for (std::int64_t r = 0; r < rows; ++r) {
    double* row = v.data() + r * dim;
    double norm = row_norm(row, dim);
    if (norm == 0.0) norm = 1.0;
    for (std::int64_t k = 0; k < dim; ++k) row[k] /= norm;
  }
  return v;
}

}  // namespace

double numpy_sum(const std::vector<double>& values) {
  return 0.0 + pairwise_sum(values.data(), values.size());
}

std::vector<std::pair<std::int64_t, std::int64_t>> kfold_ranges(std::int64_t n, int folds) {
  PFC_CHECK(folds >= 2 && n >= folds, "{} pairs cannot be split into {} folds", n, folds);
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  std::int64_t begin = 0;
  for (int f = 0; f < folds; ++f) {
    // KFold: the first n % folds folds hold one more.
    const std::int64_t size = n / folds + (f < n % folds ? 1 : 0);
    ranges.emplace_back(begin, begin + size);
    begin += size;
  }
  return ranges;
}

std::vector<double> pair_distances(const std::vector<double>& normalised, std::int64_t rows,
                                   std::int64_t dim) {
  std::vector<double> distance(static_cast<std::size_t>(rows / 2));
  for (std::int64_t p = 0; p < rows / 2; ++p) {
    const double* a = normalised.data() + 2 * p * dim;
    const double* b = a + dim;
    double s = 0;
    for (std::int64_t k = 0; k < dim; ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
    distance[static_cast<std::size_t>(p)] = s;
  }
  return distance;
}

FoldAccuracy fold_accuracy(const std::vector<double>& distance, const std::vector<bool>& issame,
                           int folds) {
  const std::vector<double> thresholds = arange(4.0, 0.01);
  const auto ranges = kfold_ranges(static_cast<std::int64_t>(distance.size()), folds);
  FoldAccuracy result;
  for (std::size_t f = 0; f < ranges.size(); ++f) {
    const SortedDistances train = subset(distance, issame, ranges, f, true);
    const SortedDistances test = subset(distance, issame, ranges, f, false);
    // np.argmax: the first of equal accuracies.
    std::size_t best = 0;
    double best_accuracy = -1;
    for (std::size_t t = 0; t < thresholds.size(); ++t) {
      const double a = train.accuracy(thresholds[t]);
      if (a > best_accuracy) {
        best_accuracy = a;
        best = t;
      }
    }
    result.accuracy.push_back(test.accuracy(thresholds[best]));
    result.best_threshold.push_back(thresholds[best]);
  }
  return result;
}

ValAtFar val_at_far(const std::vector<double>& distance, const std::vector<bool>& issame,
                    double far_target, int folds) {
  const std::vector<double> thresholds = arange(4.0, 0.001);
  const auto ranges = kfold_ranges(static_cast<std::int64_t>(distance.size()), folds);
  std::vector<double> vals, fars;
  for (std::size_t f = 0; f < ranges.size(); ++f) {
    const SortedDistances train = subset(distance, issame, ranges, f, true);
    const SortedDistances test = subset(distance, issame, ranges, f, false);
    std::vector<double> far_train(thresholds.size());
    double max_far = -1;
    for (std::size_t t = 0; t < thresholds.size(); ++t) {
      far_train[t] = train.val_far(thresholds[t]).second;
      max_far = std::max(max_far, far_train[t]);
    }
    // FAR grows with the threshold, so far_train is already in interp1d's sorted order.
    const double threshold =
        max_far >= far_target ? slinear(far_train, thresholds, far_target) : 0.0;
    const auto [val, far] = test.val_far(threshold);
    vals.push_back(val);
    fars.push_back(far);
  }
  return {mean(vals), population_std(vals), mean(fars)};
}

VerificationResult evaluate_verification(const Tensor& embeddings, const Tensor& mirrored,
                                         const std::vector<bool>& issame, int folds) {
  PFC_CHECK(embeddings.rank() == 2 && embeddings.shape() == mirrored.shape(),
            "verification: embeddings {} and mirrored {} must be the same [images, dim]",
            embeddings.describe(), mirrored.describe());
  const std::int64_t rows = embeddings.dim(0), dim = embeddings.dim(1);
  PFC_CHECK(rows == 2 * static_cast<std::int64_t>(issame.size()),
            "verification: {} embeddings for {} pairs", rows, issame.size());
  const std::vector<double> plain = as_f64(embeddings), flip = as_f64(mirrored);

  VerificationResult r;
  r.pairs = static_cast<std::int64_t>(issame.size());
  r.folds = folds;
  double norms = 0;
  for (const std::vector<double>* list : {&plain, &flip})
    for (std::int64_t i = 0; i < rows; ++i) norms += row_norm(list->data() + i * dim, dim);
  r.xnorm = norms / static_cast<double>(2 * rows);

  std::vector<double> sum(plain.size());
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = plain[i] + flip[i];
  const std::vector<double> distance = pair_distances(normalise_rows(sum, rows, dim), rows, dim);
  const FoldAccuracy with_flip = fold_accuracy(distance, issame, folds);
  r.accuracy = mean(with_flip.accuracy);
  r.accuracy_std = population_std(with_flip.accuracy);
  r.best_threshold = mean(with_flip.best_threshold);
  const ValAtFar val = val_at_far(distance, issame, 1e-3, folds);
  r.val = val.val;
  r.val_std = val.val_std;
  r.far = val.far;

  const FoldAccuracy alone =
      fold_accuracy(pair_distances(normalise_rows(plain, rows, dim), rows, dim), issame, folds);
  r.accuracy_noflip = mean(alone.accuracy);
  r.accuracy_noflip_std = population_std(alone.accuracy);
  return r;
}

}  // namespace pfc
