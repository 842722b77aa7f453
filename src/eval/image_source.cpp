#include "eval/image_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace pfc {

namespace fs = std::filesystem;

namespace {

void decode_or_refuse(FaceImageDecoder& decoder, std::span<const std::uint8_t> jpeg, float* out,
                      const std::string& what) {
  std::string why;
  if (!decoder.decode(jpeg, false, out, why))
    throw UsageError(fmt::format("{} does not decode: {}", what, why));
}

bool is_jpeg_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg";
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
      throw UsageError(fmt::format("'{}' is neither an image file nor a folder", given));
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(given))
      if (entry.is_regular_file() && is_jpeg_name(entry.path()))
        found.push_back(entry.path().string());
    if (found.empty())
      throw UsageError(fmt::format("folder '{}' holds no .jpg or .jpeg file", given));
    std::sort(found.begin(), found.end());
    files_.insert(files_.end(), found.begin(), found.end());
  }
}

void FileImageSource::decode(std::int64_t i, float* out) {
  std::ifstream in(path(i), std::ios::binary);
  bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) throw UsageError(fmt::format("{} cannot be read", describe(i)));
  decode_or_refuse(decoder_, bytes_, out, describe(i));
}

}  // namespace pfc
