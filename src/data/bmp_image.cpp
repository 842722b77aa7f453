#include "data/bmp_image.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>

namespace pfc {

namespace {

constexpr std::size_t kFileHeaderBytes = 14;
constexpr std::uint32_t kUncompressed = 0;  // BI_RGB
constexpr std::uint32_t kBitFields = 3;     // BI_BITFIELDS

std::uint32_t u32(std::span<const std::uint8_t> b, std::size_t at) {
  return b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (std::uint32_t{b[at + 3]} << 24);
}
std::uint16_t u16(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint16_t>(b[at] | (b[at + 1] << 8));
}

struct BmpLayout {
  int width = 0, height = 0;
  bool top_down = false;
  int bits = 0;
  std::size_t pixels_at = 0;   // offset of the first stored row
  std::size_t row_bytes = 0;   // stored rows are padded to 4 bytes
  std::size_t palette_at = 0;  // 8-bit: BGRx entries
  std::size_t palette_size = 0;
};

bool layout(std::span<const std::uint8_t> b, BmpLayout& l, std::string& why) {
  if (b.size() < kFileHeaderBytes + 40) {
    why = "BMP too short for its headers";
    return false;
  }
  const std::uint32_t info_bytes = u32(b, 14);
  if (info_bytes < 40 || info_bytes > 124) {
    why = fmt::format("BMP with a {}-byte info header (OS/2 or unknown) is not read; convert "
                      "it to PNG or JPEG",
                      info_bytes);
    return false;
  }
  const auto w = static_cast<std::int32_t>(u32(b, 18));
  const auto h = static_cast<std::int32_t>(u32(b, 22));
  l.bits = u16(b, 28);
  const std::uint32_t compression = u32(b, 30);
  // 32-bit images may name their channel masks; the usual BGRx ones are plain pixels.
  const bool plain_masks = compression == kBitFields && l.bits == 32 &&
                           b.size() >= kFileHeaderBytes + 52 && u32(b, 54) == 0x00FF0000u &&
                           u32(b, 58) == 0x0000FF00u && u32(b, 62) == 0x000000FFu;
  if ((compression != kUncompressed && !plain_masks) ||
      (l.bits != 8 && l.bits != 24 && l.bits != 32)) {
    why = fmt::format("BMP of {} bits per pixel with compression {} is not read (8-, 24- and "
                      "32-bit uncompressed ones are); convert it to PNG or JPEG",
                      l.bits, compression);
    return false;
  }
  if (w <= 0 || h == 0 || h == INT32_MIN || w > kMaxImageSide || std::abs(h) > kMaxImageSide) {
    why = fmt::format("BMP of {}x{} pixels: not an image size (at most {} a side)", w, h,
                      kMaxImageSide);
    return false;
  }
  l.width = w;
  l.height = std::abs(h);
  l.top_down = h < 0;
  l.row_bytes = (static_cast<std::size_t>(l.width) * l.bits + 31) / 32 * 4;
  l.pixels_at = u32(b, 10);
  if (l.bits == 8) {
    const std::uint32_t used = u32(b, 46);
    l.palette_size = used == 0 || used > 256 ? 256 : used;
    l.palette_at = kFileHeaderBytes + info_bytes;
    if (l.palette_at + 4 * l.palette_size > b.size()) {
      why = "BMP palette runs past the end of the file (truncated)";
      return false;
    }
  }
  if (l.pixels_at > b.size() || b.size() - l.pixels_at < l.row_bytes * l.height) {
    why = fmt::format("BMP pixels run past the end of the file: {} rows of {} bytes from byte "
                      "{}, the file has {} (truncated)",
                      l.height, l.row_bytes, l.pixels_at, b.size());
    return false;
  }
  return true;
}

}  // namespace

bool is_bmp(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 'B' && bytes[1] == 'M';
}

bool read_bmp_size(std::span<const std::uint8_t> bytes, int& width, int& height,
                   std::string& why) {
  BmpLayout l;
  if (!layout(bytes, l, why)) return false;
  width = l.width;
  height = l.height;
  return true;
}

bool decode_bmp(std::span<const std::uint8_t> bytes, RgbImage& out, std::string& why) {
  BmpLayout l;
  if (!layout(bytes, l, why)) return false;
  out.resize(l.width, l.height);
  for (int y = 0; y < l.height; ++y) {
    const int stored = l.top_down ? y : l.height - 1 - y;
    const std::uint8_t* row =
        bytes.data() + l.pixels_at + static_cast<std::size_t>(stored) * l.row_bytes;
    std::uint8_t* dst = out.pixels.data() + static_cast<std::size_t>(y) * l.width * 3;
    for (int x = 0; x < l.width; ++x) {
      // An index past a short palette reads as OpenCV's zero-filled 256-entry one does.
      static constexpr std::uint8_t kBlack[3] = {0, 0, 0};
      const std::uint8_t* bgr =
          l.bits != 8 ? row + static_cast<std::size_t>(x) * (l.bits / 8)
          : row[x] < l.palette_size ? bytes.data() + l.palette_at + 4 * std::size_t{row[x]}
                                    : kBlack;
      dst[3 * x + 0] = bgr[2];
      dst[3 * x + 1] = bgr[1];
      dst[3 * x + 2] = bgr[0];
    }
  }
  return true;
}

}  // namespace pfc
