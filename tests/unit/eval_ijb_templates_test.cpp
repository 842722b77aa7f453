// eval_ijbc.py's pooling (eval/ijb_templates.h) on a hand-made list: the faceness weight, the
// mean within a media, the sum over medias, the normalisation (a zero template stays zero),
// and pair scores that do not depend on the block they are computed in.
#include <gtest/gtest.h>

#include <cmath>

#include "eval/ijb_templates.h"

namespace pfc {
namespace {

IjbImages three_templates() {
  IjbImages images;
  // Template 20: media 5 (two frames), media 3 (one); template 7: one image; template 9: one
  // image whose faceness is 0.
  images.names = {"1.jpg", "2.jpg", "3.jpg", "4.jpg", "5.jpg"};
  images.template_ids = {20, 7, 20, 20, 9};
  images.media_ids = {5, 1, 3, 5, 2};
  images.faceness = {0.5f, 1.0f, 2.0f, 0.25f, 0.0f};
  images.templates = {7, 9, 20};
  images.template_index = {2, 0, 2, 2, 1};
  return images;
}

TEST(IjbTemplates, PoolsAsEvalIjbc) {
  const IjbImages images = three_templates();
  const std::vector<float> f = {1, 2,    // image 1 (template 20, media 5)
                                3, -1,   // image 2 (template 7)
                                0, 4,    // image 3 (template 20, media 3)
                                2, 0,    // image 4 (template 20, media 5)
                                8, 6};   // image 5 (template 9, faceness 0)
  const std::vector<double> t = template_features(f, 2, images);
  ASSERT_EQ(t.size(), 6u);
  // Template 7: (3, -1) normalised.
  EXPECT_NEAR(t[0], 3 / std::sqrt(10.0), 1e-15);
  EXPECT_NEAR(t[1], -1 / std::sqrt(10.0), 1e-15);
  // Template 9: zero stays zero.
  EXPECT_EQ(t[2], 0.0);
  EXPECT_EQ(t[3], 0.0);
  // Template 20: mean((0.5, 1), (0.5, 0)) + (0, 8) = (0.5, 8.5), normalised.
  const double norm = std::sqrt(0.25 + 72.25);
  EXPECT_NEAR(t[4], 0.5 / norm, 1e-15);
  EXPECT_NEAR(t[5], 8.5 / norm, 1e-15);
}

TEST(IjbTemplates, ScoresDoNotDependOnTheBlock) {
  const IjbImages images = three_templates();
  const std::vector<float> f = {1, 2, 3, -1, 0, 4, 2, 0, 8, 6};
  const std::vector<double> t = template_features(f, 2, images);
  IjbPairs pairs;
  pairs.first = {0, 2, 1, 2, 0};
  pairs.second = {2, 2, 2, 0, 1};
  pairs.labels = {0, 1, 0, 0, 0};
  std::vector<double> all(5), parts(5);
  score_pairs(t, 2, pairs, 0, 5, all);
  score_pairs(t, 2, pairs, 0, 2, std::span<double>(parts).subspan(0));
  score_pairs(t, 2, pairs, 2, 5, std::span<double>(parts).subspan(2));
  EXPECT_EQ(all, parts);
  EXPECT_NEAR(all[1], 1.0, 1e-15);  // a template against itself
  EXPECT_EQ(all[2], 0.0);           // the zero template
  EXPECT_EQ(all[0], all[3]);        // both orders
}

}  // namespace
}  // namespace pfc
