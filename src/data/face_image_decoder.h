// An encoded face image -> one normalised image: the bytes decode as mxnet's imdecode (OpenCV)
// decodes them for insightface's loaders, to RGB: JPEG through libjpeg-turbo (CMYK and YCCK
// ones converted as OpenCV converts them), PNG through libpng, BMP through bmp_image. Then an
// optional left-right flip and (pixel/255 - 0.5)/0.5 as torchvision's ToTensor +
// Normalize(0.5, 0.5) compute it in f32. One decoder per thread: it owns a TurboJPEG handle
// and scratch buffers.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/rgb_image.h"

namespace pfc {

// (pixel / 255 - 0.5) / 0.5 in f32, exactly as the reference pipeline rounds it.
float normalise_pixel(std::uint8_t pixel);

// What an image of another size than image_size x image_size is.
enum class OtherSizes {
  // Damage: training data (MXFaceDataset does not resize; faces come aligned 112x112).
  refused,
  // Resized as arcface_torch's eval/verification.py load_bin does: an image whose width is
  // not image_size goes through mx.image.resize_short(img, image_size), OpenCV's bicubic
  // (cubic_resize.h); what that does not make image_size x image_size (another aspect, or
  // only the height different), load_bin cannot load either, and is refused saying how to
  // convert it.
  resized_as_load_bin,
};

class FaceImageDecoder {
 public:
  explicit FaceImageDecoder(std::int64_t image_size, OtherSizes other = OtherSizes::refused);
  ~FaceImageDecoder();
  FaceImageDecoder(const FaceImageDecoder&) = delete;
  FaceImageDecoder& operator=(const FaceImageDecoder&) = delete;

  // Writes [image_size, image_size, 3] floats to `out`. Returns false with the reason in
  // `why` for anything that is not a clean image of a size it takes: libjpeg-turbo's
  // warnings (a truncated or corrupt stream it would fill with grey) count as damage too.
  bool decode(std::span<const std::uint8_t> bytes, bool flip, float* out, std::string& why);
  // A photo of any size, for faces aligned afterwards (data/face_align.h): its RGB pixels in
  // `image`, with the damage rules of decode(). JPEG photos may have up to kMaxPhotoPixels
  // (cameras' photos and IJB's loose crops exceed kMaxImageSide), PNG and BMP ones
  // kMaxImageSide a side.
  bool decode_photo(std::span<const std::uint8_t> bytes, RgbImage& image, std::string& why);
  // Width and height from the image's header alone.
  bool read_size(std::span<const std::uint8_t> bytes, int& width, int& height,
                 std::string& why);

 private:
  // The size decode() makes of a width x height image, or false with the reason.
  bool accepts(int width, int height, std::string& why) const;
  bool decode_rgb(std::span<const std::uint8_t> bytes, RgbImage& image, std::string& why);
  // The JPEG header's size and colour space; a fresh decompressor after a header it refused.
  bool read_jpeg_header(std::span<const std::uint8_t> jpeg, int& width, int& height,
                        int& colorspace, std::string& why);
  bool decode_jpeg(std::span<const std::uint8_t> jpeg, RgbImage& image, std::string& why);

  void* handle_;  // tjhandle
  std::int64_t image_size_;
  OtherSizes other_;
  RgbImage decoded_;
  RgbImage resized_;
  std::vector<std::uint8_t> cmyk_;
};

// The most pixels a JPEG photo may have: a damaged header can claim 65535 x 65535, and no
// camera makes photos beyond this.
inline constexpr long long kMaxPhotoPixels = 1LL << 26;

// The file name extensions (lower case, with the dot) of the formats FaceImageDecoder reads:
// what pfc pack and pfc embed take from a folder.
std::span<const std::string_view> decodable_image_extensions();
// Whether a file's extension, in any case, is one of them.
bool is_decodable_image_name(const std::filesystem::path& path);

}  // namespace pfc
