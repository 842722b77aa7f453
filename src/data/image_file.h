// An image file's bytes, read through core/input_file.h: a regular file of at most 64 MiB
// (a face photo is far smaller; the bound keeps a mistaken name, a video or a disk image, from
// filling memory on every decoding thread). `pfc pack`, `pfc embed` and `pfc ijb` read their
// images here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/input_file.h"

namespace pfc {

constexpr std::uint64_t kMaxImageFileBytes = std::uint64_t{64} << 20;

const InputFileLimit& image_file_limit();

// False with `why` ("is a folder, not a file", "holds ... bytes, more than the 64 MiB pfc
// reads of an image file", a read failure).
bool read_image_file(const std::filesystem::path& path, std::vector<std::uint8_t>& bytes,
                     std::string& why);

}  // namespace pfc
