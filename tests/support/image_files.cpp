#include "support/image_files.h"

#include <png.h>
#include <turbojpeg.h>

#include <stdexcept>
#include <string>

namespace pfc::test {

namespace {

void put16(Bytes& b, std::size_t at, std::uint32_t v) {
  b[at] = static_cast<std::uint8_t>(v);
  b[at + 1] = static_cast<std::uint8_t>(v >> 8);
}
void put32(Bytes& b, std::size_t at, std::uint32_t v) {
  put16(b, at, v & 0xFFFF);
  put16(b, at + 2, v >> 16);
}

Bytes write_png(png_image& image, const void* buffer, const void* colormap) {
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, buffer, 0, colormap))
    throw std::runtime_error(std::string("libpng: ") + image.message);
  Bytes out(size);
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, buffer, 0, colormap))
    throw std::runtime_error(std::string("libpng: ") + image.message);
  out.resize(size);
  return out;
}

// BITMAPFILEHEADER + BITMAPINFOHEADER for `bits` per pixel, `palette` entries.
Bytes bmp_headers(int width, int height, int bits, bool top_down, int palette,
                  std::size_t row_bytes) {
  const std::size_t pixels_at = 14 + 40 + 4 * static_cast<std::size_t>(palette);
  Bytes b(pixels_at + row_bytes * static_cast<std::size_t>(height), 0);
  b[0] = 'B';
  b[1] = 'M';
  put32(b, 2, static_cast<std::uint32_t>(b.size()));
  put32(b, 10, static_cast<std::uint32_t>(pixels_at));
  put32(b, 14, 40);
  put32(b, 18, static_cast<std::uint32_t>(width));
  put32(b, 22, static_cast<std::uint32_t>(top_down ? -height : height));
  put16(b, 26, 1);
  put16(b, 28, static_cast<std::uint32_t>(bits));
  put32(b, 46, static_cast<std::uint32_t>(palette));
  return b;
}

}  // namespace

Bytes encode_png(const std::vector<std::uint16_t>& samples, int width, int height, int channels,
                 int bits) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = channels == 1   ? PNG_FORMAT_GRAY
                 : channels == 3 ? PNG_FORMAT_RGB
                                 : PNG_FORMAT_RGBA;
  if (bits == 16) {
    image.format |= PNG_FORMAT_FLAG_LINEAR;
    return write_png(image, samples.data(), nullptr);
  }
  const Bytes narrow(samples.begin(), samples.end());
  return write_png(image, narrow.data(), nullptr);
}

Bytes encode_palette_png(const Bytes& indices, const Bytes& palette, int width, int height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = PNG_FORMAT_RGB_COLORMAP;
  image.colormap_entries = static_cast<png_uint_32>(palette.size() / 3);
  return write_png(image, indices.data(), palette.data());
}

Bytes encode_bmp(const Bytes& rgb, int width, int height, int bits, bool top_down,
                 std::uint8_t pad) {
  const int bytes_per_pixel = bits / 8;
  const std::size_t row_bytes = (static_cast<std::size_t>(width) * bits + 31) / 32 * 4;
  Bytes b = bmp_headers(width, height, bits, top_down, 0, row_bytes);
  const std::size_t pixels_at = b.size() - row_bytes * height;
  for (int y = 0; y < height; ++y) {
    const int stored = top_down ? y : height - 1 - y;
    for (int x = 0; x < width; ++x) {
      std::uint8_t* p = b.data() + pixels_at + stored * row_bytes + x * bytes_per_pixel;
      const std::uint8_t* src = rgb.data() + (static_cast<std::size_t>(y) * width + x) * 3;
      p[0] = src[2];
      p[1] = src[1];
      p[2] = src[0];
      if (bytes_per_pixel == 4) p[3] = pad;
    }
  }
  return b;
}

Bytes encode_palette_bmp(const Bytes& indices, const Bytes& palette, int width, int height) {
  const std::size_t row_bytes = (static_cast<std::size_t>(width) * 8 + 31) / 32 * 4;
  const int entries = static_cast<int>(palette.size() / 3);
  Bytes b = bmp_headers(width, height, 8, false, entries, row_bytes);
  for (int i = 0; i < entries; ++i) {
    b[54 + 4 * i + 0] = palette[3 * i + 2];
    b[54 + 4 * i + 1] = palette[3 * i + 1];
    b[54 + 4 * i + 2] = palette[3 * i + 0];
  }
  const std::size_t pixels_at = b.size() - row_bytes * height;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      b[pixels_at + (height - 1 - y) * row_bytes + x] =
          indices[static_cast<std::size_t>(y) * width + x];
  return b;
}

Bytes encode_cmyk_jpeg(const Bytes& cmyk, int width, int height) {
  tjhandle handle = tjInitCompress();
  if (!handle) throw std::runtime_error("tjInitCompress failed");
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  const int rc = tjCompress2(handle, cmyk.data(), width, 0, height, TJPF_CMYK, &out, &out_size,
                             TJSAMP_444, 95, TJFLAG_ACCURATEDCT);
  const std::string error = rc == 0 ? "" : tjGetErrorStr2(handle);
  Bytes jpeg;
  if (rc == 0) jpeg.assign(out, out + out_size);
  tjFree(out);
  tjDestroy(handle);
  if (rc != 0) throw std::runtime_error("tjCompress2 failed: " + error);
  return jpeg;
}

Bytes pattern_rgb(int width, int height) {
  Bytes out(static_cast<std::size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c)
        out[(static_cast<std::size_t>(y) * width + x) * 3 + c] = static_cast<std::uint8_t>(
            (x * 7 + y * 13 + c * 50 + (x * y) % 31 + ((x / 5 + y / 3) % 2) * 90) & 255);
  return out;
}

}  // namespace pfc::test
