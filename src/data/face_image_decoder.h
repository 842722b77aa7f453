// JPEG -> one normalised training image: libjpeg-turbo decodes to RGB (the channel order
// mxnet's imdecode gives insightface), an optional left-right flip, then
// (pixel/255 - 0.5)/0.5 as torchvision's ToTensor + Normalize(0.5, 0.5) compute it in f32.
// One decoder per thread: it owns a TurboJPEG handle and a scratch buffer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pfc {

// (pixel / 255 - 0.5) / 0.5 in f32, exactly as the reference pipeline rounds it.
float normalise_pixel(std::uint8_t pixel);

class FaceImageDecoder {
 public:
  // Images must be image_size x image_size; no resizing is done (faces come aligned 112x112).
  explicit FaceImageDecoder(std::int64_t image_size);
  ~FaceImageDecoder();
  FaceImageDecoder(const FaceImageDecoder&) = delete;
  FaceImageDecoder& operator=(const FaceImageDecoder&) = delete;

  // Writes [image_size, image_size, 3] floats to `out`. Returns false with the reason in
  // `why` for anything that is not a clean JPEG of the right size: libjpeg-turbo's warnings
  // (a truncated or corrupt stream it would fill with grey) count as damage too.
  bool decode(std::span<const std::uint8_t> jpeg, bool flip, float* out, std::string& why);
  // A photo of any size, for faces aligned afterwards (data/face_align.h): its RGB bytes
  // [height, width, 3] at the start of `rgb` (which may be longer), with the damage rules of
  // decode().
  bool decode_rgb(std::span<const std::uint8_t> jpeg, std::vector<std::uint8_t>& rgb, int& width,
                  int& height, std::string& why);
  // Width and height from the JPEG header alone.
  bool read_size(std::span<const std::uint8_t> jpeg, int& width, int& height, std::string& why);

 private:
  void* handle_;  // tjhandle
  std::int64_t image_size_;
  std::vector<std::uint8_t> rgb_;
};

}  // namespace pfc
