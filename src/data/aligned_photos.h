// `pfc pack IMAGE_DIR OUT_PREFIX --landmarks FILE`: raw photos of any size, aligned into
// image_size x image_size training records the way insightface aligns faces (data/face_align.h)
// and stored as JPEGs of quality 95. FILE holds a line per photo,
//   path x1 y1 x2 y2 x3 y3 x4 y4 x5 y5
// the photo (relative to IMAGE_DIR, or absolute inside it: a line naming a photo outside
// IMAGE_DIR is refused, as pack would never read it; the last ten fields are the landmarks, so
// a path may hold spaces) and its landmarks in insightface's order: left eye, right eye, nose
// tip, left and right mouth corner, in pixels of the photo. A photo of IMAGE_DIR without a
// line is left out with a warning, as an unreadable one is.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "data/dataset_packer.h"
#include "data/face_cropper.h"
#include "data/jpeg_encoder.h"

namespace pfc {

class AlignedPhotos final : public PackedImageMaker {
 public:
  // Reads and checks every line of FILE (field count, numbers, finite landmarks that give a
  // similarity transform, a photo in IMAGE_DIR that is a regular file, no photo twice): a
  // UsageError names the line.
  AlignedPhotos(const std::string& landmark_file, const std::string& image_dir,
                std::int64_t image_size);

  // The photo has a line and decodes; it is aligned (and the crop dropped) to know.
  bool check(const std::filesystem::path& file, std::string& why) override;
  // Decoded and aligned again, then encoded.
  std::vector<std::uint8_t> bytes(const std::filesystem::path& file) override;

  std::int64_t listed() const { return static_cast<std::int64_t>(to_crop_.size()); }

 private:
  const AffineMatrix* transform_of(const std::filesystem::path& file) const;

  std::string landmark_file_;
  std::unordered_map<std::string, AffineMatrix> to_crop_;  // by canonical path
  FaceCropper cropper_;
  JpegEncoder encoder_;
  std::vector<std::uint8_t> crop_;
};

}  // namespace pfc
