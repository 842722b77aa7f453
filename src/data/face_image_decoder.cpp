#include "data/face_image_decoder.h"

#include <fmt/format.h>
#include <turbojpeg.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/error.h"
#include "data/bmp_image.h"
#include "data/cubic_resize.h"
#include "data/png_image.h"

namespace pfc {

namespace {

std::array<float, 256> make_normalise_table() {
  std::array<float, 256> table{};
  for (int i = 0; i < 256; ++i) table[i] = (static_cast<float>(i) / 255.0f - 0.5f) / 0.5f;
  return table;
}

const std::array<float, 256> kNormalise = make_normalise_table();

bool is_jpeg(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8;
}

// OpenCV's icvCvt_CMYK2BGR_8u_C4C3R, which its JPEG decoder applies to what libjpeg gives for
// a CMYK or YCCK file (Adobe's inverted CMYK): each of C, M, Y becomes k - ((255 - v) * k >> 8).
void cmyk_to_rgb(const std::uint8_t* cmyk, std::size_t pixels, std::uint8_t* rgb) {
  for (std::size_t i = 0; i < pixels; ++i, cmyk += 4, rgb += 3) {
    const int k = cmyk[3];
    for (int c = 0; c < 3; ++c) rgb[c] = static_cast<std::uint8_t>(k - ((255 - cmyk[c]) * k >> 8));
  }
}

}  // namespace

float normalise_pixel(std::uint8_t pixel) { return kNormalise[pixel]; }

FaceImageDecoder::FaceImageDecoder(std::int64_t image_size, OtherSizes other)
    : handle_(tjInitDecompress()), image_size_(image_size), other_(other) {
  PFC_CHECK(handle_ != nullptr, "libjpeg-turbo: cannot create a decompressor: {}",
            tjGetErrorStr2(nullptr));
  PFC_CHECK(image_size > 0, "image size {} must be positive", image_size);
}

FaceImageDecoder::~FaceImageDecoder() { tjDestroy(static_cast<tjhandle>(handle_)); }

bool FaceImageDecoder::read_size(std::span<const std::uint8_t> bytes, int& width, int& height,
                                 std::string& why) {
  if (bytes.empty()) {
    why = "no image bytes";
    return false;
  }
  if (is_png(bytes)) return read_png_size(bytes, width, height, why);
  if (is_bmp(bytes)) return read_bmp_size(bytes, width, height, why);
  if (!is_jpeg(bytes)) {
    std::string start;
    for (std::size_t i = 0; i < std::min<std::size_t>(4, bytes.size()); ++i)
      start += fmt::format("{}{:02x}", i > 0 ? " " : "", bytes[i]);
    why = fmt::format("not a JPEG, PNG or BMP image (it starts with {})", start);
    return false;
  }
  int colorspace = 0;
  if (!read_jpeg_header(bytes, width, height, colorspace, why)) return false;
  if (width > kMaxImageSide || height > kMaxImageSide) {
    why = fmt::format("JPEG of {}x{}, beyond {} pixels a side", width, height, kMaxImageSide);
    return false;
  }
  return true;
}

bool FaceImageDecoder::accepts(int width, int height, std::string& why) const {
  const auto s = static_cast<int>(image_size_);
  if (width == s && height == s) return true;
  if (other_ == OtherSizes::refused) {
    why = fmt::format("image is {}x{}, expected {}x{}", width, height, s, s);
    return false;
  }
  // load_bin: `if img.shape[1] != image_size[0]: img = mx.image.resize_short(img, ...)`,
  // then the image must fill a [3, s, s] tensor.
  const ImageSize resized = width != s ? resize_short_size(width, height, s)
                                       : ImageSize{width, height};
  if (resized.width == s && resized.height == s) return true;
  why = fmt::format(
      "image is {}x{}, which arcface_torch's load_bin cannot make {}x{} either ({}); crop the "
      "images of this file to a square (or {}x{}) and write it again",
      width, height, s, s,
      width != s ? fmt::format("resizing its shorter side to {} gives {}x{}", s, resized.width,
                               resized.height)
                 : fmt::format("it resizes only images whose width is not {}", s),
      s, s);
  return false;
}

bool FaceImageDecoder::read_jpeg_header(std::span<const std::uint8_t> jpeg, int& width,
                                        int& height, int& colorspace, std::string& why) {
  int subsampling = 0;
  if (tjDecompressHeader3(static_cast<tjhandle>(handle_), jpeg.data(),
                          static_cast<unsigned long>(jpeg.size()), &width, &height, &subsampling,
                          &colorspace) == 0) {
    // A stream cut before its first frame can read as tables only, 0 x 0: no image.
    if (width >= 1 && height >= 1) return true;
    why = "not a readable JPEG: it holds no image";
    return false;
  }
  why = fmt::format("not a readable JPEG: {}", tjGetErrorStr2(static_cast<tjhandle>(handle_)));
  // A header that failed leaves libjpeg-turbo's decompressor inside the header, and the next
  // good image would read as 0 x 0: a fresh one for the next image.
  tjDestroy(static_cast<tjhandle>(handle_));
  handle_ = tjInitDecompress();
  PFC_CHECK(handle_ != nullptr, "libjpeg-turbo: cannot create a decompressor: {}",
            tjGetErrorStr2(nullptr));
  return false;
}

bool FaceImageDecoder::decode_jpeg(std::span<const std::uint8_t> jpeg, RgbImage& image,
                                   std::string& why) {
  int width = 0, height = 0, colorspace = 0;
  if (!read_jpeg_header(jpeg, width, height, colorspace, why)) return false;
  auto* handle = static_cast<tjhandle>(handle_);
  image.resize(width, height);
  // Room behind the last pixel: libjpeg-turbo's SIMD colour conversion stores whole vectors
  // and may write a few bytes past a row that is not a multiple of them (valgrind sees it).
  constexpr std::size_t kSimdSlack = 64;
  image.pixels.reserve(image.pixels.size() + kSimdSlack);
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  if (cmyk) cmyk_.resize(static_cast<std::size_t>(width) * height * 4);
  // Default flags: accurate integer DCT and smooth upsampling, as OpenCV's decoder uses.
  if (tjDecompress2(handle, jpeg.data(), static_cast<unsigned long>(jpeg.size()),
                    cmyk ? cmyk_.data() : image.pixels.data(), width, 0, height,
                    cmyk ? TJPF_CMYK : TJPF_RGB, 0) != 0) {
    why = fmt::format("JPEG {}: {}", tjGetErrorCode(handle) == TJERR_WARNING ? "damaged" : "error",
                      tjGetErrorStr2(handle));
    return false;
  }
  if (cmyk)
    cmyk_to_rgb(cmyk_.data(), static_cast<std::size_t>(width) * height, image.pixels.data());
  return true;
}

bool FaceImageDecoder::decode_rgb(std::span<const std::uint8_t> bytes, RgbImage& image,
                                  std::string& why) {
  if (is_png(bytes)) return decode_png(bytes, image, why);
  if (is_bmp(bytes)) return decode_bmp(bytes, image, why);
  return decode_jpeg(bytes, image, why);
}

bool FaceImageDecoder::decode_photo(std::span<const std::uint8_t> bytes, RgbImage& image,
                                    std::string& why) {
  if (bytes.empty()) {
    why = "no image bytes";
    return false;
  }
  if (is_jpeg(bytes)) {
    int width = 0, height = 0, colorspace = 0;
    if (!read_jpeg_header(bytes, width, height, colorspace, why)) return false;
    if (static_cast<long long>(width) * height > kMaxPhotoPixels) {
      why = fmt::format("JPEG of {}x{}, more than the {} pixels a photo may have", width,
                        height, kMaxPhotoPixels);
      return false;
    }
    return decode_jpeg(bytes, image, why);
  }
  int width = 0, height = 0;
  return read_size(bytes, width, height, why) && decode_rgb(bytes, image, why);
}

bool FaceImageDecoder::decode(std::span<const std::uint8_t> bytes, bool flip, float* out,
                              std::string& why) {
  int width = 0;
  int height = 0;
  if (!read_size(bytes, width, height, why) || !accepts(width, height, why)) return false;
  if (!decode_rgb(bytes, decoded_, why)) return false;
  const std::int64_t w = image_size_;
  const RgbImage* image = &decoded_;
  if (decoded_.width != w || decoded_.height != w) {
    resize_cubic(decoded_, static_cast<int>(w), static_cast<int>(w), resized_);
    image = &resized_;
  }
  const std::uint8_t* src = image->pixels.data();
  for (std::int64_t y = 0; y < w; ++y) {
    const std::uint8_t* row = src + y * w * 3;
    float* dst = out + y * w * 3;
    for (std::int64_t x = 0; x < w; ++x) {
      const std::uint8_t* px = row + (flip ? w - 1 - x : x) * 3;
      dst[3 * x + 0] = kNormalise[px[0]];
      dst[3 * x + 1] = kNormalise[px[1]];
      dst[3 * x + 2] = kNormalise[px[2]];
    }
  }
  return true;
}

std::span<const std::string_view> decodable_image_extensions() {
  static constexpr std::array<std::string_view, 2> kExtensions = {".jpg", ".jpeg"};
  return kExtensions;
}

bool is_decodable_image_name(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto known = decodable_image_extensions();
  return std::find(known.begin(), known.end(), ext) != known.end();
}

}  // namespace pfc
