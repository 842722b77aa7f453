#include "data/face_cropper.h"

#include "data/image_file.h"

namespace pfc {

FaceCropper::FaceCropper(std::int64_t image_size)
    : image_size_(image_size), decoder_(image_size) {}

bool FaceCropper::crop(const std::string& path, const AffineMatrix& to_crop, std::uint8_t* out,
                       std::string& why) {
  if (!read_image_file(path, bytes_, why)) return false;
  if (!decoder_.decode_photo(bytes_, photo_, why)) return false;
  const int size = static_cast<int>(image_size_);
  warp_affine_bilinear(photo_.pixels.data(), photo_.width, photo_.height, 3, to_crop, out, size,
                       size);
  return true;
}

}  // namespace pfc
