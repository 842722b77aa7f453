// Encoded images of the other kinds a face file may hold, for the decoder tests: PNG through
// libpng's simplified writer, BMP written byte by byte, and CMYK (YCCK) JPEG through
// libjpeg-turbo.
#pragma once

#include <cstdint>
#include <vector>

namespace pfc::test {

using Bytes = std::vector<std::uint8_t>;

// `samples` holds width x height pixels of `channels` (1 grey, 3 RGB, 4 RGBA) samples of
// `bits` (8 or 16, native-endian 16-bit values) each.
Bytes encode_png(const std::vector<std::uint16_t>& samples, int width, int height, int channels,
                 int bits);
// An 8-bit palette PNG: each pixel an index into `palette` (RGB triples).
Bytes encode_palette_png(const Bytes& indices, const Bytes& palette, int width, int height);
// RGB rows top to bottom as a BMP of 24 or 32 bits per pixel (bottom-up rows unless top_down;
// a 32-bit one's fourth byte is `pad`).
Bytes encode_bmp(const Bytes& rgb, int width, int height, int bits, bool top_down,
                 std::uint8_t pad = 0);
// An 8-bit palette BMP (palette: RGB triples).
Bytes encode_palette_bmp(const Bytes& indices, const Bytes& palette, int width, int height);
// C, M, Y, K bytes per pixel as a JPEG (libjpeg-turbo writes them as YCCK with Adobe's marker).
Bytes encode_cmyk_jpeg(const Bytes& cmyk, int width, int height);
// A test pattern with sharp edges (which cubic resizing overshoots): pixel (x, y) channel c.
Bytes pattern_rgb(int width, int height);

}  // namespace pfc::test
