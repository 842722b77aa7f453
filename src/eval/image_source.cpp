#include "eval/image_source.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <vector>

#include "core/error.h"
#include "core/input_file.h"
#include "data/image_file.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

void decode_or_refuse(FaceImageDecoder& decoder, std::span<const std::uint8_t> jpeg, float* out,
                      const std::string& what) {
  std::string why;
  if (!decoder.decode(jpeg, false, out, why))
    throw UsageError(fmt::format("{} does not decode: {}", what, why));
}

// "2 .png, 1 .txt, 1 without an extension": what a folder holds besides decodable images.
std::string describe_skipped(const std::map<std::string, std::int64_t>& by_extension) {
  std::vector<std::string> parts;
  for (const auto& [extension, count] : by_extension)
    parts.push_back(extension.empty() ? fmt::format("{} without an extension", count)
                                      : fmt::format("{} {}", count, extension));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

BinImageSource::BinImageSource(std::shared_ptr<const VerificationBin> bin,
                               std::int64_t image_size)
    : bin_(std::move(bin)), decoder_(image_size, OtherSizes::resized_as_load_bin) {}

void BinImageSource::decode(std::int64_t i, float* out) {
  decode_or_refuse(decoder_, bin_->image(i), out, describe(i));
}

std::string BinImageSource::describe(std::int64_t i) const {
  return fmt::format("verification file '{}': image {} of {}", bin_->path(), i, bin_->images());
}

RecordImageSource::RecordImageSource(const std::string& folder, std::int64_t image_size)
    : dataset_(folder), decoder_(image_size),
      labels_(static_cast<std::size_t>(dataset_.num_images()), -1) {}

void RecordImageSource::decode(std::int64_t i, float* out) {
  float label = 0;
  std::span<const std::uint8_t> jpeg;
  std::string why;
  if (!dataset_.read(i, payload_, label, jpeg, why))
    throw UsageError(fmt::format("{} is damaged: {}", describe(i), why));
  // As pfc train takes labels: a whole number naming one of the dataset's identities.
  const std::int64_t classes = dataset_.num_classes();
  if (!std::isfinite(label) || std::floor(label) != label || label < 0 ||
      (classes > 0 && label >= static_cast<float>(classes)))
    throw UsageError(fmt::format(
        "{}: label {} is not an identity of the dataset ({}); pfc train skips this record as "
        "damaged",
        describe(i), label,
        classes > 0 ? fmt::format("a whole number in [0, {})", classes) : "a whole number >= 0"));
  labels_.at(static_cast<std::size_t>(i)) = static_cast<std::int64_t>(label);
  decode_or_refuse(decoder_, jpeg, out, describe(i));
}

std::string RecordImageSource::describe(std::int64_t i) const {
  return fmt::format("'{}' record key {}", dataset_.rec_path(), dataset_.key(i));
}

FileImageSource::FileImageSource(const std::vector<std::string>& paths, std::int64_t image_size)
    : decoder_(image_size) {
  for (const std::string& given : paths) {
    std::error_code ec;
    if (fs::is_regular_file(given, ec)) {
      files_.push_back(given);
      continue;
    }
    if (!fs::is_directory(given, ec))
      throw UsageError(fmt::format("'{}' {}: name image files or folders of them", given,
                                   non_file_kind(given)));
    std::vector<std::string> found;
    std::map<std::string, std::int64_t> skipped;
    for (const auto& entry : fs::recursive_directory_iterator(given)) {
      if (!entry.is_regular_file()) continue;
      if (is_decodable_image_name(entry.path()))
        found.push_back(entry.path().string());
      else
        ++skipped[entry.path().extension().string()];
    }
    const std::string readable = fmt::format("{}", fmt::join(decodable_image_extensions(), ", "));
    if (found.empty())
      throw UsageError(fmt::format("folder '{}' holds no image pfc reads ({}){}", given, readable,
                                   skipped.empty() ? "" : "; it holds " +
                                                              describe_skipped(skipped)));
    if (!skipped.empty())
      spdlog::warn("folder '{}': skipped the files that are not images pfc reads ({}): {}",
                   given, readable, describe_skipped(skipped));
    std::sort(found.begin(), found.end());
    files_.insert(files_.end(), found.begin(), found.end());
  }
}

void FileImageSource::decode(std::int64_t i, float* out) {
  std::string why;
  if (!read_image_file(path(i), bytes_, why))
    throw UsageError(fmt::format("{} {}", describe(i), why));
  decode_or_refuse(decoder_, bytes_, out, describe(i));
}

}  // namespace pfc
