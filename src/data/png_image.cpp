#include "data/png_image.h"

#include <fmt/format.h>
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

namespace pfc {

namespace {

// What one pass of libpng over the bytes needs, and what it reports. A plain struct: libpng
// reports errors by longjmp, which must not cross anything with a destructor, so the pass
// runs in a function whose locals are all plain, and allocates nothing itself.
struct PngPass {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t read = 0;
  png_bytepp rows = nullptr;  // null: read the header only
  png_uint_32 width = 0, height = 0;
  int channels = 0;           // after the transformations
  char message[256] = {};
};

void read_bytes(png_structp png, png_bytep out, png_size_t n) {
  auto* pass = static_cast<PngPass*>(png_get_io_ptr(png));
  if (n > pass->size - pass->read) png_error(png, "the file ends early (truncated)");
  std::memcpy(out, pass->data + pass->read, n);
  pass->read += n;
}

void on_error(png_structp png, png_const_charp message) {
  auto* pass = static_cast<PngPass*>(png_get_error_ptr(png));
  std::snprintf(pass->message, sizeof pass->message, "%s", message);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // as OpenCV: a warning is not a failure

bool run(PngPass& pass) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &pass, on_error, on_warning);
  if (png == nullptr) {
    std::snprintf(pass.message, sizeof pass.message, "libpng cannot start");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    std::snprintf(pass.message, sizeof pass.message, "libpng cannot start");
    return false;
  }
  if (setjmp(png_jmpbuf(png)) != 0) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, &pass, read_bytes);
  png_read_info(png, info);
  int depth = 0, color = 0;
  png_get_IHDR(png, info, &pass.width, &pass.height, &depth, &color, nullptr, nullptr, nullptr);
  if (pass.rows != nullptr) {
    // OpenCV's PngDecoder::readData for an 8-bit, 3-channel result (its png_set_bgr aside:
    // mxnet turns OpenCV's BGR back into RGB).
    if (depth == 16) png_set_strip_16(png);
    png_set_strip_alpha(png);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if ((color & PNG_COLOR_MASK_COLOR) == 0 && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if ((color & PNG_COLOR_MASK_COLOR) == 0) png_set_gray_to_rgb(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    pass.channels = png_get_channels(png, info);
    if (pass.channels != 3) png_error(png, "does not decode to RGB");
    png_read_image(png, pass.rows);
    png_read_end(png, nullptr);
  }
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

}  // namespace

bool is_png(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 8 && png_sig_cmp(bytes.data(), 0, 8) == 0;
}

bool read_png_size(std::span<const std::uint8_t> bytes, int& width, int& height,
                   std::string& why) {
  PngPass pass;
  pass.data = bytes.data();
  pass.size = bytes.size();
  if (!run(pass)) {
    why = fmt::format("not a readable PNG: {}", pass.message);
    return false;
  }
  if (pass.width > kMaxImageSide || pass.height > kMaxImageSide) {
    why = fmt::format("PNG of {}x{}, beyond {} pixels a side", pass.width, pass.height,
                      kMaxImageSide);
    return false;
  }
  width = static_cast<int>(pass.width);
  height = static_cast<int>(pass.height);
  return true;
}

bool decode_png(std::span<const std::uint8_t> bytes, RgbImage& out, std::string& why) {
  int width = 0, height = 0;
  if (!read_png_size(bytes, width, height, why)) return false;
  out.resize(width, height);
  std::vector<png_bytep> rows(static_cast<std::size_t>(height));
  for (int y = 0; y < height; ++y)
    rows[static_cast<std::size_t>(y)] = out.pixels.data() + static_cast<std::size_t>(y) * width * 3;
  PngPass pass;
  pass.data = bytes.data();
  pass.size = bytes.size();
  pass.rows = rows.data();
  if (!run(pass)) {
    why = fmt::format("PNG damaged: {}", pass.message);
    return false;
  }
  return true;
}

}  // namespace pfc
