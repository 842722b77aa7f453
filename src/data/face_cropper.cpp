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
  int width = 0;
  int height = 0;
  if (!decoder_.decode_rgb(bytes_, rgb_, width, height, why)) return false;
  const int size = static_cast<int>(image_size_);
  warp_affine_bilinear(rgb_.data(), width, height, 3, to_crop, out, size, size);
  return true;
}

}  // namespace pfc
