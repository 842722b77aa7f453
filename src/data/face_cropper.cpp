#include "data/face_cropper.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace pfc {

FaceCropper::FaceCropper(std::int64_t image_size)
    : image_size_(image_size), decoder_(image_size) {}

bool FaceCropper::crop(const std::string& path, const AffineMatrix& to_crop, std::uint8_t* out,
                       std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = std::string("cannot be read: ") + std::strerror(errno);
    return false;
  }
  bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    why = std::string("reading failed: ") + std::strerror(errno);
    return false;
  }
  if (!decoder_.decode_photo(bytes_, photo_, why)) return false;
  const int size = static_cast<int>(image_size_);
  warp_affine_bilinear(photo_.pixels.data(), photo_.width, photo_.height, 3, to_crop, out, size,
                       size);
  return true;
}

}  // namespace pfc
