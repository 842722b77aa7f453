// One photo file to its aligned face: the image decoded whatever its size, then warped by a
// transform from data/face_align.h to an image_size x image_size RGB crop. The step both
// `pfc ijb` (loose crops and their landmarks) and `pfc pack --landmarks` (raw photos) take
// before a face is embedded or stored. One per thread: it owns a decoder and its buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/face_align.h"
#include "data/face_image_decoder.h"

namespace pfc {

class FaceCropper {
 public:
  explicit FaceCropper(std::int64_t image_size);

  // Writes [image_size, image_size, 3] RGB bytes to `out`. False, with the reason in `why`,
  // when the file cannot be read or is not a clean image.
  bool crop(const std::string& path, const AffineMatrix& to_crop, std::uint8_t* out,
            std::string& why);
  std::int64_t image_size() const { return image_size_; }

 private:
  std::int64_t image_size_;
  FaceImageDecoder decoder_;
  std::vector<std::uint8_t> bytes_;
  RgbImage photo_;
};

}  // namespace pfc
