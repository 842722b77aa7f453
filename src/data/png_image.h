// PNG images through Debian's libpng, decoded as OpenCV's imdecode(IMREAD_COLOR) decodes them
// for mxnet (and so for insightface's loaders): 16-bit samples keep their high byte, alpha is
// dropped (not composited), palettes and grey levels become RGB, interlacing is undone.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "data/rgb_image.h"

namespace pfc {

bool is_png(std::span<const std::uint8_t> bytes);
// Width and height from the header alone; false with the reason in `why`.
bool read_png_size(std::span<const std::uint8_t> bytes, int& width, int& height,
                   std::string& why);
// The whole image; false with libpng's reason in `why` (a truncated or damaged file).
bool decode_png(std::span<const std::uint8_t> bytes, RgbImage& out, std::string& why);

}  // namespace pfc
