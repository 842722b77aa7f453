#include "data/aligned_photos.h"

#include <fmt/format.h>

#include <cmath>
#include <unordered_map>

#include "core/error.h"
#include "core/input_file.h"
#include "data/field_file.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

std::string canonical_key(const fs::path& path) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(path, ec);
  return (ec ? path.lexically_normal() : canonical).string();
}

// Whether `path` names something inside `folder`, by the names alone (".." and absolute paths
// resolved; links are not followed: the packer walks the folder's own entries).
bool lies_under(const fs::path& path, const fs::path& folder) {
  const fs::path relative =
      fs::absolute(path).lexically_normal().lexically_relative(
          fs::absolute(folder).lexically_normal());
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace

AlignedPhotos::AlignedPhotos(const std::string& landmark_file, const std::string& image_dir,
                             std::int64_t image_size)
    : landmark_file_(landmark_file), cropper_(image_size),
      crop_(static_cast<std::size_t>(image_size * image_size * 3)) {
  FieldFile in(landmark_file, "landmark file");
  const FivePoints crop_points = arcface_template(image_size);
  std::unordered_map<std::string, std::int64_t> line_of;
  while (in.next()) {
    const std::vector<std::string_view>& fields = in.fields();
    if (fields.size() < 11)
      in.fail(fmt::format("{} fields where a photo's path and 10 landmark coordinates are "
                          "expected (path x1 y1 x2 y2 x3 y3 x4 y4 x5 y5)",
                          fields.size()));
    const std::size_t first = fields.size() - 10;
    const std::string_view line = in.text();
    std::string_view name = line.substr(0, static_cast<std::size_t>(fields[first].data() -
                                                                    line.data()));
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
    while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.remove_prefix(1);
    FivePoints points{};
    for (std::size_t k = 0; k < 10; ++k) {
      const double value = in.number(first + k, k % 2 == 0 ? "x" : "y");
      if (!std::isfinite(value))
        in.fail(fmt::format("landmark {} has {} = {}", k / 2 + 1, k % 2 == 0 ? "x" : "y",
                            fields[first + k]));
      points[k / 2][k % 2] = value;
    }
    AffineMatrix to_crop{};
    std::string why;
    if (!fit_similarity(points, crop_points, to_crop, why)) in.fail(why);
    const fs::path photo = fs::path(image_dir) / fs::path(name);
    if (!lies_under(photo, image_dir))
      in.fail(fmt::format("photo '{}' lies outside the photo folder '{}', which is all pfc pack "
                          "reads: its line would be ignored",
                          photo.string(), image_dir));
    if (const std::string kind = non_file_kind(photo); !kind.empty())
      in.fail(fmt::format("photo '{}' {}", photo.string(), kind));
    const std::string key = canonical_key(photo);
    const auto [at, inserted] = line_of.emplace(key, in.line_number());
    if (!inserted)
      in.fail(fmt::format("photo '{}' is listed a second time (first on line {})",
                          photo.string(), at->second));
    to_crop_.emplace(key, to_crop);
  }
  if (to_crop_.empty())
    throw UsageError(fmt::format("landmark file '{}' lists no photos", landmark_file));
}

const AffineMatrix* AlignedPhotos::transform_of(const fs::path& file) const {
  const auto at = to_crop_.find(canonical_key(file));
  return at == to_crop_.end() ? nullptr : &at->second;
}

bool AlignedPhotos::check(const fs::path& file, std::string& why) {
  const AffineMatrix* to_crop = transform_of(file);
  if (to_crop == nullptr) {
    why = fmt::format("no landmarks for it in '{}'", landmark_file_);
    return false;
  }
  return cropper_.crop(file.string(), *to_crop, crop_.data(), why);
}

std::vector<std::uint8_t> AlignedPhotos::bytes(const fs::path& file) {
  const AffineMatrix* to_crop = transform_of(file);
  std::string why;
  if (to_crop == nullptr || !cropper_.crop(file.string(), *to_crop, crop_.data(), why))
    throw Error(fmt::format("'{}' changed since it was checked: {}", file.string(), why));
  const int size = static_cast<int>(cropper_.image_size());
  return encoder_.encode(crop_.data(), size, size);
}

}  // namespace pfc
