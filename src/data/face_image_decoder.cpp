#include "data/face_image_decoder.h"

#include <fmt/format.h>
#include <turbojpeg.h>

#include <array>

#include "core/error.h"

namespace pfc {

namespace {

std::array<float, 256> make_normalise_table() {
  std::array<float, 256> table{};
  for (int i = 0; i < 256; ++i) table[i] = (static_cast<float>(i) / 255.0f - 0.5f) / 0.5f;
  return table;
}

const std::array<float, 256> kNormalise = make_normalise_table();

}  // namespace

float normalise_pixel(std::uint8_t pixel) { return kNormalise[pixel]; }

FaceImageDecoder::FaceImageDecoder(std::int64_t image_size)
    : handle_(tjInitDecompress()), image_size_(image_size) {
  PFC_CHECK(handle_ != nullptr, "libjpeg-turbo: cannot create a decompressor: {}",
            tjGetErrorStr2(nullptr));
  PFC_CHECK(image_size > 0, "image size {} must be positive", image_size);
  rgb_.resize(static_cast<std::size_t>(image_size * image_size * 3));
}

FaceImageDecoder::~FaceImageDecoder() { tjDestroy(static_cast<tjhandle>(handle_)); }

bool FaceImageDecoder::read_size(std::span<const std::uint8_t> jpeg, int& width, int& height,
                                 std::string& why) {
  int subsampling = 0;
  int colorspace = 0;
  if (jpeg.empty() ||
      tjDecompressHeader3(static_cast<tjhandle>(handle_), jpeg.data(),
                          static_cast<unsigned long>(jpeg.size()), &width, &height, &subsampling,
                          &colorspace) != 0) {
    why = jpeg.empty() ? std::string("no image bytes")
                       : fmt::format("not a readable JPEG: {}",
                                     tjGetErrorStr2(static_cast<tjhandle>(handle_)));
    // A header that failed leaves libjpeg-turbo's decompressor inside the header, and the next
    // good image would read as 0 x 0: a fresh one for the next image.
    if (!jpeg.empty()) {
      tjDestroy(static_cast<tjhandle>(handle_));
      handle_ = tjInitDecompress();
      PFC_CHECK(handle_ != nullptr, "libjpeg-turbo: cannot create a decompressor: {}",
                tjGetErrorStr2(nullptr));
    }
    return false;
  }
  return true;
}

bool FaceImageDecoder::decode(std::span<const std::uint8_t> jpeg, bool flip, float* out,
                              std::string& why) {
  int width = 0;
  int height = 0;
  if (!read_size(jpeg, width, height, why)) return false;
  if (width != image_size_ || height != image_size_) {
    why = fmt::format("image is {}x{}, expected {}x{}", width, height, image_size_, image_size_);
    return false;
  }
  auto* handle = static_cast<tjhandle>(handle_);
  // Default flags: accurate integer DCT and smooth upsampling, as OpenCV's decoder uses.
  if (tjDecompress2(handle, jpeg.data(), static_cast<unsigned long>(jpeg.size()), rgb_.data(),
                    width, 0, height, TJPF_RGB, 0) != 0) {
    why = fmt::format("JPEG {}: {}", tjGetErrorCode(handle) == TJERR_WARNING ? "damaged" : "error",
                      tjGetErrorStr2(handle));
    return false;
  }
  const std::uint8_t* src = rgb_.data();
  const std::int64_t w = image_size_;
  for (std::int64_t y = 0; y < image_size_; ++y) {
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

bool FaceImageDecoder::decode_rgb(std::span<const std::uint8_t> jpeg,
                                  std::vector<std::uint8_t>& rgb, int& width, int& height,
                                  std::string& why) {
  if (!read_size(jpeg, width, height, why)) return false;
  // A stream cut before its first frame can read as tables only, 0 x 0: no image to decode
  // (and TurboJPEG would take 0 x 0 for "the image's own size").
  if (width < 1 || height < 1) {
    why = "not a readable JPEG: it holds no image";
    return false;
  }
  // A damaged header can claim 65535 x 65535; no camera makes photos beyond this.
  constexpr long long kMaxPixels = 1LL << 26;
  if (static_cast<long long>(width) * height > kMaxPixels) {
    why = fmt::format("image is {}x{}, more than the {} pixels a photo may have", width, height,
                      kMaxPixels);
    return false;
  }
  // Room behind the last pixel: libjpeg-turbo's SIMD colour conversion stores whole vectors
  // and may write a few bytes past a row that is not a multiple of them (valgrind sees it).
  constexpr std::size_t kSimdSlack = 64;
  rgb.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3 + kSimdSlack);
  auto* handle = static_cast<tjhandle>(handle_);
  if (tjDecompress2(handle, jpeg.data(), static_cast<unsigned long>(jpeg.size()), rgb.data(),
                    width, 0, height, TJPF_RGB, 0) == 0)
    return true;
  why = fmt::format("JPEG {}: {}", tjGetErrorCode(handle) == TJERR_WARNING ? "damaged" : "error",
                    tjGetErrorStr2(handle));
  return false;
}

}  // namespace pfc
