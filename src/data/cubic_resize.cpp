#include "data/cubic_resize.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace pfc {

namespace {

constexpr int kCoefBits = 11;  // OpenCV's INTER_RESIZE_COEF_BITS
constexpr int kCoefScale = 1 << kCoefBits;

// One output coordinate: the first of its four source taps (before clamping) and their weights.
struct Taps {
  int first = 0;
  std::array<int, 4> weight{};
};

// OpenCV's interpolateCubic (A = -0.75) in float, then saturate_cast<short>(w * 2048), which
// rounds to nearest even.
std::array<int, 4> cubic_weights(float x) {
  const float a = -0.75f;
  std::array<float, 4> c{};
  c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = 1.f - c[0] - c[1] - c[2];
  std::array<int, 4> w{};
  for (int k = 0; k < 4; ++k)
    w[k] = static_cast<int>(std::nearbyint(c[k] * static_cast<float>(kCoefScale)));
  return w;
}

std::vector<Taps> taps(int source, int target) {
  // cv::resize: scale = 1 / (target / source) in double, the position in float.
  const double scale = 1.0 / (static_cast<double>(target) / source);
  std::vector<Taps> out(static_cast<std::size_t>(target));
  for (int d = 0; d < target; ++d) {
    float f = static_cast<float>((d + 0.5) * scale - 0.5);
    const int s = static_cast<int>(std::floor(f));
    f -= static_cast<float>(s);
    out[static_cast<std::size_t>(d)] = {s - 1, cubic_weights(f)};
  }
  return out;
}

int clamp_index(int i, int size) { return std::clamp(i, 0, size - 1); }

// float32 product, rounded once however the compiler would fuse it (the double product of two
// floats is exact).
float product(float a, float b) {
  return static_cast<float>(static_cast<double>(a) * static_cast<double>(b));
}

}  // namespace

ImageSize resize_short_size(int width, int height, int size) {
  if (height > width) return {size, static_cast<int>(std::int64_t{size} * height / width)};
  return {static_cast<int>(std::int64_t{size} * width / height), size};
}

void resize_cubic(const RgbImage& in, int width, int height, RgbImage& out) {
  out.resize(width, height);
  if (width == in.width && height == in.height) {  // cv::resize copies
    out.pixels = in.pixels;
    return;
  }
  const std::vector<Taps> columns = taps(in.width, width);
  const std::vector<Taps> rows = taps(in.height, height);
  const int row_values = width * 3;

  // Horizontal pass over every source row, in integers (weights scaled by 2^11).
  std::vector<int> horizontal(static_cast<std::size_t>(in.height) * row_values);
  for (int y = 0; y < in.height; ++y) {
    const std::uint8_t* src = in.pixels.data() + static_cast<std::size_t>(y) * in.width * 3;
    int* dst = horizontal.data() + static_cast<std::size_t>(y) * row_values;
    for (int x = 0; x < width; ++x) {
      const Taps& t = columns[static_cast<std::size_t>(x)];
      for (int c = 0; c < 3; ++c) {
        int sum = 0;
        for (int k = 0; k < 4; ++k)
          sum += src[clamp_index(t.first + k, in.width) * 3 + c] * t.weight[k];
        dst[x * 3 + c] = sum;
      }
    }
  }

  // Vertical pass: OpenCV's SSE2 loop takes 8 values at a time in float32; the rest of the
  // row goes through its integer loop (rounding by adding 2^21 and shifting by 22).
  const float unscale = 1.f / static_cast<float>(kCoefScale * kCoefScale);
  const int vector_end = row_values - row_values % 8;
  for (int y = 0; y < height; ++y) {
    const Taps& t = rows[static_cast<std::size_t>(y)];
    const int* s[4];
    float b[4];
    for (int k = 0; k < 4; ++k) {
      s[k] = horizontal.data() +
             static_cast<std::size_t>(clamp_index(t.first + k, in.height)) * row_values;
      b[k] = static_cast<float>(t.weight[k]) * unscale;
    }
    std::uint8_t* dst = out.pixels.data() + static_cast<std::size_t>(y) * row_values;
    for (int x = 0; x < vector_end; ++x) {
      float sum = product(static_cast<float>(s[0][x]), b[0]) +
                  product(static_cast<float>(s[1][x]), b[1]);
      sum = sum + product(static_cast<float>(s[2][x]), b[2]);
      sum = sum + product(static_cast<float>(s[3][x]), b[3]);
      const long rounded = std::lrint(sum);  // _mm_cvtps_epi32: nearest, ties to even
      dst[x] = static_cast<std::uint8_t>(std::clamp<long>(rounded, 0, 255));
    }
    for (int x = vector_end; x < row_values; ++x) {
      const std::int64_t sum = std::int64_t{s[0][x]} * t.weight[0] +
                               std::int64_t{s[1][x]} * t.weight[1] +
                               std::int64_t{s[2][x]} * t.weight[2] +
                               std::int64_t{s[3][x]} * t.weight[3];
      dst[x] = static_cast<std::uint8_t>(
          std::clamp<std::int64_t>((sum + (1 << 21)) >> 22, 0, 255));
    }
  }
}

}  // namespace pfc
