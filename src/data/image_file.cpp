#include "data/image_file.h"

namespace pfc {

const InputFileLimit& image_file_limit() {
  static const InputFileLimit limit{kMaxImageFileBytes, "the 64 MiB pfc reads of an image file"};
  return limit;
}

bool read_image_file(const std::filesystem::path& path, std::vector<std::uint8_t>& bytes,
                     std::string& why) {
  return read_input_file(path, image_file_limit(), bytes, why);
}

}  // namespace pfc
