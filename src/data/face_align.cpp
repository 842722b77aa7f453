#include "data/face_align.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace pfc {

namespace {

constexpr FivePoints kArcfaceTemplate112 = {{{38.2946, 51.6963},
                                             {73.5318, 51.5014},
                                             {56.0252, 71.7366},
                                             {41.5493, 92.3655},
                                             {70.7299, 92.2041}}};

// OpenCV's fixed-point warp: source positions in 1/1024 pixel steps while they are summed
// along a row, then 1/32 pixel (the interpolation table's 32 x 32 sub-pixel cells).
constexpr int kCoordBits = 10;
constexpr int kTableBits = 5;
constexpr int kTableSize = 1 << kTableBits;
constexpr int kWeightBits = 15;

// cvRound of a double into an int: nearest, ties to even; saturated to int's range.
int round_to_int(double v) {
  constexpr double lo = std::numeric_limits<int>::min();
  constexpr double hi = std::numeric_limits<int>::max();
  if (!(v > lo)) return std::numeric_limits<int>::min();
  if (!(v < hi)) return std::numeric_limits<int>::max();
  return static_cast<int>(std::nearbyint(v));
}

int saturate_to_short(std::int64_t v) {
  return static_cast<int>(std::clamp<std::int64_t>(v, -32768, 32767));
}

// The weights of the four neighbours (x, y), (x + 1, y), (x, y + 1), (x + 1, y + 1) for the
// sub-pixel cell (fx, fy), in units of 2^-15, as OpenCV's table holds them: products of the
// 1-D weights rounded to short. The cell (0, 0) would need 32768, which saturates to 32767;
// OpenCV then gives the missing unit to the (x + 1, y + 1) weight, its correction step
// looking only at that entry for a 2 x 2 kernel.
struct BilinearTable {
  std::array<std::array<int, 4>, kTableSize * kTableSize> w{};
  BilinearTable() {
    for (int fy = 0; fy < kTableSize; ++fy) {
      for (int fx = 0; fx < kTableSize; ++fx) {
        const int wy[2] = {kTableSize - fy, fy};
        const int wx[2] = {kTableSize - fx, fx};
        std::array<int, 4>& cell = w[static_cast<std::size_t>(fy * kTableSize + fx)];
        int sum = 0;
        for (int k = 0; k < 4; ++k) {
          // (1 - t) and t are exact in f32 at t = i / 32, and so is their product times 2^15.
          cell[static_cast<std::size_t>(k)] =
              saturate_to_short(wy[k / 2] * wx[k % 2] * (1 << (kWeightBits - 2 * kTableBits)));
          sum += cell[static_cast<std::size_t>(k)];
        }
        cell[3] += (1 << kWeightBits) - sum;
      }
    }
  }
};

const BilinearTable kBilinear;

std::uint8_t weighted_pixel(int v0, int v1, int v2, int v3, const std::array<int, 4>& w) {
  const int sum = v0 * w[0] + v1 * w[1] + v2 * w[2] + v3 * w[3];
  return static_cast<std::uint8_t>(
      std::clamp((sum + (1 << (kWeightBits - 1))) >> kWeightBits, 0, 255));
}

}  // namespace

FivePoints arcface_template(std::int64_t image_size) {
  double ratio = static_cast<double>(image_size) / 112.0;
  double shift_x = 0.0;
  if (image_size % 112 != 0 && image_size % 128 == 0) {
    ratio = static_cast<double>(image_size) / 128.0;
    shift_x = 8.0 * ratio;
  }
  // In f32, as insightface holds the template (an np.float32 array, scaled in place).
  const auto f32_ratio = static_cast<float>(ratio);
  FivePoints points{};
  for (std::size_t i = 0; i < points.size(); ++i) {
    points[i][0] = static_cast<float>(kArcfaceTemplate112[i][0]) * f32_ratio +
                   static_cast<float>(shift_x);
    points[i][1] = static_cast<float>(kArcfaceTemplate112[i][1]) * f32_ratio;
  }
  return points;
}

bool fit_similarity(const FivePoints& from, const FivePoints& to, AffineMatrix& out,
                    std::string& why) {
  for (std::size_t i = 0; i < from.size(); ++i)
    if (!std::isfinite(from[i][0]) || !std::isfinite(from[i][1])) {
      why = fmt::format("landmark {} ({}, {}) is not a finite number", i + 1, from[i][0],
                        from[i][1]);
      return false;
    }
  const double n = static_cast<double>(from.size());
  double fx = 0, fy = 0, tx = 0, ty = 0;
  for (std::size_t i = 0; i < from.size(); ++i) {
    fx += from[i][0];
    fy += from[i][1];
    tx += to[i][0];
    ty += to[i][1];
  }
  fx /= n, fy /= n, tx /= n, ty /= n;
  // Umeyama: with A = sum q p^T over the centred points (p from, q to) and A = U S V^T, the
  // rotation is U D V^T (D flips the last axis where a reflection would fit better) and the
  // scale tr(D S) / sum |p|^2. In two dimensions the best proper rotation's cosine and sine
  // are proportional to A00 + A11 and A10 - A01, and scale times them is that over sum |p|^2:
  // the same transform without a decomposition.
  double spread = 0, dot = 0, cross = 0;
  for (std::size_t i = 0; i < from.size(); ++i) {
    const double px = from[i][0] - fx, py = from[i][1] - fy;
    const double qx = to[i][0] - tx, qy = to[i][1] - ty;
    spread += px * px + py * py;
    dot += qx * px + qy * py;
    cross += qy * px - qx * py;
  }
  if (!(spread > 0)) {
    why = "the five landmarks coincide: no similarity transform maps them onto the template";
    return false;
  }
  const double a = dot / spread, b = cross / spread;
  out = {a, -b, tx - (a * fx - b * fy), b, a, ty - (b * fx + a * fy)};
  for (const double v : out)
    if (!std::isfinite(v)) {
      why = "the landmarks give a transform that is not finite";
      return false;
    }
  return true;
}

void warp_affine_bilinear(const std::uint8_t* src, int src_width, int src_height, int channels,
                          const AffineMatrix& m, std::uint8_t* dst, int dst_width,
                          int dst_height) {
  // Destination pixels look up their source position: the inverse of m, as OpenCV inverts it.
  double det = m[0] * m[4] - m[1] * m[3];
  det = det != 0 ? 1.0 / det : 0.0;
  const double i0 = m[4] * det, i1 = -m[1] * det, i3 = -m[3] * det, i4 = m[0] * det;
  const double i2 = -i0 * m[2] - i1 * m[5], i5 = -i3 * m[2] - i4 * m[5];

  constexpr int scale = 1 << kCoordBits;
  // Half of a table cell, so that the shift below rounds to the nearest 1/32 pixel.
  constexpr int round_delta = scale / kTableSize / 2;
  std::vector<int> x_step(static_cast<std::size_t>(dst_width));
  std::vector<int> y_step(static_cast<std::size_t>(dst_width));
  for (int x = 0; x < dst_width; ++x) {
    x_step[static_cast<std::size_t>(x)] = round_to_int(i0 * x * scale);
    y_step[static_cast<std::size_t>(x)] = round_to_int(i3 * x * scale);
  }
  const auto sw = static_cast<std::size_t>(src_width);
  const auto cn = static_cast<std::size_t>(channels);
  const auto pixel = [&](int x, int y, int c) -> int {
    if (x < 0 || y < 0 || x >= src_width || y >= src_height) return 0;
    return src[(static_cast<std::size_t>(y) * sw + static_cast<std::size_t>(x)) * cn +
               static_cast<std::size_t>(c)];
  };
  for (int y = 0; y < dst_height; ++y) {
    // 64 bits: a transform that throws the crop far outside the image must not overflow.
    const std::int64_t x0 = std::int64_t{round_to_int((i1 * y + i2) * scale)} + round_delta;
    const std::int64_t y0 = std::int64_t{round_to_int((i4 * y + i5) * scale)} + round_delta;
    std::uint8_t* out = dst + static_cast<std::size_t>(y) * dst_width * cn;
    for (int x = 0; x < dst_width; ++x, out += cn) {
      const auto at = static_cast<std::size_t>(x);
      const std::int64_t px = (x0 + x_step[at]) >> (kCoordBits - kTableBits);
      const std::int64_t py = (y0 + y_step[at]) >> (kCoordBits - kTableBits);
      const int sx = saturate_to_short(px >> kTableBits);
      const int sy = saturate_to_short(py >> kTableBits);
      const std::array<int, 4>& w =
          kBilinear.w[static_cast<std::size_t>((py & (kTableSize - 1)) * kTableSize +
                                               (px & (kTableSize - 1)))];
      if (sx >= 0 && sy >= 0 && sx < src_width - 1 && sy < src_height - 1) {
        const std::uint8_t* s = src + (static_cast<std::size_t>(sy) * sw + sx) * cn;
        const std::uint8_t* below = s + sw * cn;
        for (std::size_t c = 0; c < cn; ++c)
          out[c] = weighted_pixel(s[c], s[c + cn], below[c], below[c + cn], w);
      } else if (sx >= src_width || sx + 1 < 0 || sy >= src_height || sy + 1 < 0) {
        std::fill(out, out + cn, std::uint8_t{0});
      } else {
        // On the border: the neighbours outside the image count as the border value 0.
        for (int c = 0; c < channels; ++c)
          out[c] = weighted_pixel(pixel(sx, sy, c), pixel(sx + 1, sy, c), pixel(sx, sy + 1, c),
                                  pixel(sx + 1, sy + 1, c), w);
      }
    }
  }
}

}  // namespace pfc
