// eval_ijbc.py's ROC and table (eval/ijb_roc.h, eval/ijb_table.h): sklearn's roc_curve and
// auc on cases whose answers sklearn 1.9 printed (written here), its drop_intermediate rule
// against a transcription that keeps every point, the script's nearest-FPR pick with its
// ties, and the table as PrettyTable draws it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "eval/ijb_roc.h"
#include "eval/ijb_table.h"

namespace pfc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void expect_curve(const RocCurve& roc, const std::vector<double>& fpr,
                  const std::vector<double>& tpr, const std::vector<double>& thresholds) {
  EXPECT_EQ(roc.fpr, fpr);
  EXPECT_EQ(roc.tpr, tpr);
  EXPECT_EQ(roc.thresholds, thresholds);
}

TEST(IjbRoc, SklearnsDocumentationCase) {
  // roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
  const RocCurve roc = roc_curve(std::vector<double>{0.1, 0.4, 0.35, 0.8},
                                 std::vector<std::uint8_t>{0, 0, 1, 1});
  expect_curve(roc, {0, 0, 0.5, 0.5, 1}, {0, 0.5, 0.5, 1, 1}, {kInf, 0.8, 0.4, 0.35, 0.1});
  EXPECT_DOUBLE_EQ(roc_auc(roc), 0.75);
}

TEST(IjbRoc, StraightStretchesAreDroppedAndTiesShareAPoint) {
  // roc_curve([1, 1, 1, 0], [0.9, 0.8, 0.7, 0.6]): the point at 0.8 lies on a straight line.
  expect_curve(roc_curve(std::vector<double>{0.9, 0.8, 0.7, 0.6},
                         std::vector<std::uint8_t>{1, 1, 1, 0}),
               {0, 0, 0, 1}, {0, 1.0 / 3, 1, 1}, {kInf, 0.9, 0.7, 0.6});
  // roc_curve([1, 0, 1, 0, 1, 0], [0.5, 0.5, 0.9, 0.1, 0.3, 0.3]): tied scores are one point.
  const RocCurve roc = roc_curve(std::vector<double>{0.5, 0.5, 0.9, 0.1, 0.3, 0.3},
                                 std::vector<std::uint8_t>{1, 0, 1, 0, 1, 0});
  expect_curve(roc, {0, 0, 2.0 / 3, 1}, {0, 1.0 / 3, 1, 1}, {kInf, 0.9, 0.3, 0.1});
  EXPECT_NEAR(roc_auc(roc), 0.7777777777777778, 1e-15);
}

// Every distinct score's point, without dropping any: the area and the points that sklearn
// keeps must be those of this full curve.
RocCurve full_curve(const std::vector<double>& scores, const std::vector<std::uint8_t>& labels) {
  std::vector<std::size_t> order(scores.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return scores[a] > scores[b]; });
  double p = 0, n = 0, total_p = 0, total_n = 0;
  for (const auto l : labels) (l ? total_p : total_n) += 1;
  RocCurve roc{{0}, {0}, {kInf}};
  for (std::size_t i = 0; i < order.size(); ++i) {
    (labels[order[i]] ? p : n) += 1;
    if (i + 1 < order.size() && scores[order[i + 1]] == scores[order[i]]) continue;
    roc.fpr.push_back(n / total_n);
    roc.tpr.push_back(p / total_p);
    roc.thresholds.push_back(scores[order[i]]);
  }
  return roc;
}

TEST(IjbRoc, KeptPointsAreTheFullCurvesCorners) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<double> scores;
  std::vector<std::uint8_t> labels;
  for (int i = 0; i < 3000; ++i) {
    const bool genuine = i % 10 == 0;
    // Rounded, so that ties happen.
    scores.push_back(std::round((noise(rng) + (genuine ? 2.0 : 0.0)) * 20) / 20);
    labels.push_back(genuine ? 1 : 0);
  }
  const RocCurve roc = roc_curve(scores, labels);
  const RocCurve full = full_curve(scores, labels);
  EXPECT_NEAR(roc_auc(roc), roc_auc(full), 1e-12);
  EXPECT_LT(roc.fpr.size(), full.fpr.size());
  std::size_t j = 0;
  for (std::size_t i = 0; i < roc.fpr.size(); ++i) {
    while (j < full.fpr.size() && full.thresholds[j] != roc.thresholds[i]) ++j;
    ASSERT_LT(j, full.fpr.size()) << "threshold " << roc.thresholds[i] << " is not a full point";
    EXPECT_EQ(roc.fpr[i], full.fpr[j]);
    EXPECT_EQ(roc.tpr[i], full.tpr[j]);
  }
}

TEST(IjbRoc, NearestFprPickTakesTheLastOfEquallyNearPoints) {
  RocCurve roc;
  roc.fpr = {0.0, 0.0, 0.0, 0.1, 0.1, 0.3, 1.0};
  roc.tpr = {0.0, 0.2, 0.4, 0.5, 0.6, 0.9, 1.0};
  roc.thresholds.assign(7, 0.0);
  EXPECT_EQ(nearest_fpr_point(roc, 1e-6), 2u);  // of the three at 0, the highest TPR
  EXPECT_EQ(nearest_fpr_point(roc, 0.09), 4u);
  EXPECT_EQ(nearest_fpr_point(roc, 0.2), 5u);   // 0.1 and 0.3 are as near: the later one
  EXPECT_EQ(nearest_fpr_point(roc, 0.7), 6u);
}

TEST(IjbTable, PrintedAsPrettyTable) {
  EXPECT_EQ(format_tar_table("ijbc-IJBC", {0.8933, 0.9447, 0.96371, 0.97711, 0.98614, 0.99251}),
            "+-----------+-------+-------+--------+-------+-------+-------+\n"
            "|  Methods  | 1e-06 | 1e-05 | 0.0001 | 0.001 |  0.01 |  0.1  |\n"
            "+-----------+-------+-------+--------+-------+-------+-------+\n"
            "| ijbc-IJBC | 89.33 | 94.47 | 96.37  | 97.71 | 98.61 | 99.25 |\n"
            "+-----------+-------+-------+--------+-------+-------+-------+\n");
  EXPECT_NE(format_tar_table("ijbb-IJBB", {1, 1, 1, 1, 1, 1}).find("| 100.00 |"),
            std::string::npos);
}

}  // namespace
}  // namespace pfc
