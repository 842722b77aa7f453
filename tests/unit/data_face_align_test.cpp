// Face alignment (data/face_align.h) against its definitions: the template's sizes, the
// similarity fit as the least-squares solution (its normal equations hold; a known
// similarity comes back exactly), refusals of points without a transform, and the warp
// against plain bilinear interpolation in f64 (within the one grey level OpenCV's 1/32-pixel
// grid allows), its identity and its zero border. The comparison with OpenCV and skimage
// themselves is tests/integration/ijb.sh.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "data/face_align.h"

namespace pfc {
namespace {

FivePoints moved(const FivePoints& p, double scale, double angle, double tx, double ty) {
  FivePoints out{};
  const double a = scale * std::cos(angle), b = scale * std::sin(angle);
  for (std::size_t i = 0; i < p.size(); ++i)
    out[i] = {a * p[i][0] - b * p[i][1] + tx, b * p[i][0] + a * p[i][1] + ty};
  return out;
}

TEST(FaceAlign, TemplateFollowsInsightfaceSizes) {
  // insightface's np.float32 values, scaled in f32.
  const FivePoints t112 = arcface_template(112);
  EXPECT_EQ(t112[0][0], 38.2946f);
  EXPECT_EQ(t112[4][1], 92.2041f);
  const FivePoints t224 = arcface_template(224);
  EXPECT_EQ(t224[2][0], 2 * 56.0252f);
  // estimate_norm's rule for 128: the 112 template moved right by 8.
  const FivePoints t128 = arcface_template(128);
  EXPECT_EQ(t128[0][0], 38.2946f + 8);
  EXPECT_EQ(t128[0][1], 51.6963f);
  const FivePoints t64 = arcface_template(64);
  EXPECT_EQ(t64[3][1], 92.3655f * static_cast<float>(64.0 / 112));
}

TEST(FaceAlign, KnownSimilarityComesBack) {
  const FivePoints crop = arcface_template(112);
  const FivePoints photo = moved(crop, 2.7, 0.4, 310.0, -45.5);
  AffineMatrix m{};
  std::string why;
  ASSERT_TRUE(fit_similarity(photo, crop, m, why)) << why;
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_NEAR(m[0] * photo[i][0] + m[1] * photo[i][1] + m[2], crop[i][0], 1e-9);
    EXPECT_NEAR(m[3] * photo[i][0] + m[4] * photo[i][1] + m[5], crop[i][1], 1e-9);
  }
  EXPECT_NEAR(m[0], std::cos(-0.4) / 2.7, 1e-12);
  EXPECT_DOUBLE_EQ(m[0], m[4]);
  EXPECT_DOUBLE_EQ(m[1], -m[3]);
}

TEST(FaceAlign, FitIsTheLeastSquaresSimilarity) {
  // The residual is linear in (a, b, tx, ty): at the minimum it is orthogonal to each
  // parameter's column.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> jitter(0.0, 3.0);
  const FivePoints crop = arcface_template(112);
  for (int trial = 0; trial < 20; ++trial) {
    FivePoints photo = moved(crop, 0.5 + trial * 0.2, -1.0 + trial * 0.1, 40.0 * trial, 7.0);
    for (auto& p : photo) p = {p[0] + jitter(rng), p[1] + jitter(rng)};
    AffineMatrix m{};
    std::string why;
    ASSERT_TRUE(fit_similarity(photo, crop, m, why)) << why;
    double g_a = 0, g_b = 0, g_tx = 0, g_ty = 0, scale_of_terms = 0;
    for (std::size_t i = 0; i < 5; ++i) {
      const double x = photo[i][0], y = photo[i][1];
      const double rx = m[0] * x + m[1] * y + m[2] - crop[i][0];
      const double ry = m[3] * x + m[4] * y + m[5] - crop[i][1];
      g_a += rx * x + ry * y;    // d/da of (a x - b y + tx, b x + a y + ty)
      g_b += -rx * y + ry * x;   // d/db
      g_tx += rx;
      g_ty += ry;
      scale_of_terms += std::fabs(x) + std::fabs(y);
    }
    EXPECT_NEAR(g_a / scale_of_terms, 0.0, 1e-10) << trial;
    EXPECT_NEAR(g_b / scale_of_terms, 0.0, 1e-10) << trial;
    EXPECT_NEAR(g_tx, 0.0, 1e-9) << trial;
    EXPECT_NEAR(g_ty, 0.0, 1e-9) << trial;
  }
}

TEST(FaceAlign, PointsWithoutATransformAreRefused) {
  const FivePoints crop = arcface_template(112);
  FivePoints same{};
  for (auto& p : same) p = {50.0, 60.0};
  AffineMatrix m{};
  std::string why;
  EXPECT_FALSE(fit_similarity(same, crop, m, why));
  EXPECT_NE(why.find("coincide"), std::string::npos) << why;
  FivePoints nan_point = crop;
  nan_point[2][1] = std::nan("");
  why.clear();
  EXPECT_FALSE(fit_similarity(nan_point, crop, m, why));
  EXPECT_NE(why.find("landmark 3"), std::string::npos) << why;
}

std::vector<std::uint8_t> smooth_image(int w, int h) {
  std::vector<std::uint8_t> image(static_cast<std::size_t>(w * h * 3));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        image[static_cast<std::size_t>((y * w + x) * 3 + c)] = static_cast<std::uint8_t>(
            127.5 + 120 * std::sin(0.11 * x + 0.7 * c) * std::cos(0.07 * y - 0.3 * c));
  return image;
}

// Bilinear interpolation of the inverse map in f64 with a zero border: the definition.
double reference(const std::vector<std::uint8_t>& src, int w, int h, const AffineMatrix& m,
                 int x, int y, int c) {
  const double det = m[0] * m[4] - m[1] * m[3];
  const double dx = x - m[2], dy = y - m[5];
  const double sx = (m[4] * dx - m[1] * dy) / det, sy = (-m[3] * dx + m[0] * dy) / det;
  const double fx = std::floor(sx), fy = std::floor(sy);
  const auto at = [&](int px, int py) -> double {
    if (px < 0 || py < 0 || px >= w || py >= h) return 0;
    return src[static_cast<std::size_t>((py * w + px) * 3 + c)];
  };
  const int ix = static_cast<int>(fx), iy = static_cast<int>(fy);
  const double ax = sx - fx, ay = sy - fy;
  return (1 - ay) * ((1 - ax) * at(ix, iy) + ax * at(ix + 1, iy)) +
         ay * ((1 - ax) * at(ix, iy + 1) + ax * at(ix + 1, iy + 1));
}

TEST(FaceAlign, WarpIsBilinearOnOpenCvsGrid) {
  const int w = 150, h = 130, size = 112;
  const std::vector<std::uint8_t> src = smooth_image(w, h);
  // Magnified 1.2 times and turned: the crop's centre on the image's, all of it inside.
  const double a = 1.2 * std::cos(0.3), b = 1.2 * std::sin(0.3);
  const AffineMatrix m = {a, -b, 56 - (a * 75 - b * 65), b, a, 56 - (b * 75 + a * 65)};
  std::vector<std::uint8_t> out(static_cast<std::size_t>(size * size * 3));
  warp_affine_bilinear(src.data(), w, h, 3, m, out.data(), size, size);
  double worst = 0;
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x)
      for (int c = 0; c < 3; ++c) {
        const double want = reference(src, w, h, m, x, y, c);
        const double got = out[static_cast<std::size_t>((y * size + x) * 3 + c)];
        worst = std::max(worst, std::fabs(got - want));
      }
  // Positions rounded to 1/32 pixel move each coordinate by at most 1/64 pixel, so a value by
  // that times the image's slopes (at most 13.2 grey levels a pixel along x, 8.4 along y),
  // plus the rounding of the result.
  EXPECT_LE(worst, 0.5 + (13.2 + 8.4) / 64 + 0.01);
}

TEST(FaceAlign, IdentityWarpKeepsTheImageAndTheBorderIsZero) {
  const int w = 40, h = 30;
  const std::vector<std::uint8_t> src = smooth_image(w, h);
  std::vector<std::uint8_t> out(src.size());
  warp_affine_bilinear(src.data(), w, h, 3, {1, 0, 0, 0, 1, 0}, out.data(), w, h);
  EXPECT_EQ(out, src);
  // Moved 100 pixels right: nothing of the image is left in view.
  warp_affine_bilinear(src.data(), w, h, 3, {1, 0, 100, 0, 1, 0}, out.data(), w, h);
  for (const std::uint8_t v : out) EXPECT_EQ(v, 0);
  // Half a pixel: the mean of two neighbours, rounded half up.
  warp_affine_bilinear(src.data(), w, h, 3, {1, 0, -0.5, 0, 1, 0}, out.data(), w, h);
  for (int x = 0; x + 1 < w; ++x) {
    const int a = src[static_cast<std::size_t>((5 * w + x) * 3)];
    const int b = src[static_cast<std::size_t>((5 * w + x + 1) * 3)];
    EXPECT_EQ(out[static_cast<std::size_t>((5 * w + x) * 3)], (a + b + 1) / 2) << x;
  }
}

}  // namespace
}  // namespace pfc
