// Windows BMP images, read here (a few dozen lines; Debian's image libraries are far larger
// for one container of raw pixels): uncompressed 24- and 32-bit images and 8-bit palette
// images, bottom-up or top-down, as OpenCV's imdecode(IMREAD_COLOR) reads them for mxnet
// (32-bit: the fourth byte is dropped). Other kinds (RLE, 16-bit, 1- and 4-bit, OS/2 headers)
// are refused by name.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "data/rgb_image.h"

namespace pfc {

bool is_bmp(std::span<const std::uint8_t> bytes);
// Width and height from the headers; false with the reason in `why` for a BMP this reader
// does not take.
bool read_bmp_size(std::span<const std::uint8_t> bytes, int& width, int& height,
                   std::string& why);
bool decode_bmp(std::span<const std::uint8_t> bytes, RgbImage& out, std::string& why);

}  // namespace pfc
