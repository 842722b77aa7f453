// A decoded image as the decoders hand it over: height x width x 3 bytes, RGB, rows top to
// bottom (mxnet's imdecode order, which insightface's loaders see).
#pragma once

#include <cstdint>
#include <vector>

namespace pfc {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;

  // Sizes the image, keeping the buffer's capacity (decoders reuse one per thread).
  void resize(int w, int h) {
    width = w;
    height = h;
    pixels.resize(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 3);
  }
};

// No face crop is this large: a header that announces more is refused before anything is
// allocated (a 20-byte file can announce a 65535 x 65535 JPEG).
inline constexpr int kMaxImageSide = 4096;

}  // namespace pfc
