#include "data/dataset_packer.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "data/face_image_decoder.h"
#include "data/image_file.h"
#include "data/image_record.h"
#include "data/recordio.h"

namespace pfc {

namespace {

namespace fs = std::filesystem;

// Labels and key ranges are stored as float32, exact up to 2^24.
constexpr std::int64_t kMaxKeys = std::int64_t{1} << 24;

struct Identity {
  std::string name;
  std::vector<fs::path> images;
};

std::vector<std::uint8_t> read_file(const fs::path& path) {
  std::vector<std::uint8_t> bytes;
  std::string why;
  if (!read_image_file(path, bytes, why))
    throw Error(fmt::format("'{}' changed since it was checked: it {}", path.string(), why));
  return bytes;
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  return entries;
}

// Lists the identities and their decodable images, leaving out (and counting) the rest.
std::vector<Identity> scan(const fs::path& image_dir, std::int64_t image_size,
                           PackedImageMaker* maker, PackSummary& summary) {
  FaceImageDecoder decoder(image_size);
  std::vector<float> scratch(static_cast<std::size_t>(image_size * image_size * 3));
  std::vector<std::uint8_t> bytes;
  std::vector<Identity> identities;
  std::int64_t not_jpeg = 0;
  for (const fs::path& folder : sorted_entries(image_dir)) {
    if (!fs::is_directory(folder)) continue;
    Identity identity{folder.filename().string(), {}};
    for (const fs::path& file : sorted_entries(folder)) {
      if (!fs::is_regular_file(file) || !is_decodable_image_name(file)) {
        ++not_jpeg;
        continue;
      }
      std::string why;
      if (maker ? !maker->check(file, why)
                : !(read_image_file(file, bytes, why) &&
                    decoder.decode(bytes, false, scratch.data(), why))) {
        spdlog::warn("leaving out {}: {}", file.string(), why);
        ++summary.left_out;
        continue;
      }
      identity.images.push_back(file);
    }
    if (identity.images.empty())
      spdlog::warn("identity {} (label {}) has no images", identity.name, identities.size());
    identities.push_back(std::move(identity));
  }
  if (not_jpeg > 0)
    spdlog::warn("ignored {} entries that are not {} files", not_jpeg,
                 fmt::join(decodable_image_extensions(), "/"));
  return identities;
}

}  // namespace

PackSummary pack_image_folder(const std::string& image_dir, const PackFiles& files,
                              std::int64_t image_size, PackedImageMaker* maker) {
  if (!fs::is_directory(image_dir))
    throw UsageError(fmt::format("pack: IMAGE_DIR \"{}\" is not a folder", image_dir));
  if (image_size < 1)
    throw UsageError(fmt::format("pack: image size {} must be positive", image_size));
  PackSummary summary;
  const std::vector<Identity> identities = scan(image_dir, image_size, maker, summary);
  summary.identities = static_cast<std::int64_t>(identities.size());
  for (const Identity& identity : identities)
    summary.images += static_cast<std::int64_t>(identity.images.size());
  if (summary.identities == 0 || summary.images == 0)
    throw UsageError(fmt::format("pack: \"{}\" has no identity folders holding {}x{} JPEGs "
                                 "(expected IMAGE_DIR/<identity>/<image>.jpg)",
                                 image_dir, image_size, image_size));
  const std::int64_t n = summary.images;
  const std::int64_t c = summary.identities;
  if (n + c + 1 > kMaxKeys)
    throw UsageError(fmt::format("pack: {} images and {} identities need {} keys; the format's "
                                 "float32 labels hold at most 2^24 = {}",
                                 n, c, n + c + 1, kMaxKeys));

  RecordIOWriter writer(files.rec_path, files.idx_path);

  ImageRecordHeader header;
  header.labels = {static_cast<float>(n + 1), static_cast<float>(n + 1 + c)};
  writer.write(0, make_image_record(header, {}));

  std::int64_t key = 1;
  for (std::size_t label = 0; label < identities.size(); ++label) {
    for (const fs::path& file : identities[label].images) {
      ImageRecordHeader image_header;
      image_header.label = static_cast<float>(label);
      image_header.id = static_cast<std::uint64_t>(key);
      writer.write(key,
                   make_image_record(image_header, maker ? maker->bytes(file) : read_file(file)));
      ++key;
    }
  }
  std::int64_t first_image_key = 1;
  for (const Identity& identity : identities) {
    const auto end_image_key = first_image_key + static_cast<std::int64_t>(identity.images.size());
    ImageRecordHeader identity_header;
    identity_header.labels = {static_cast<float>(first_image_key),
                              static_cast<float>(end_image_key)};
    identity_header.id = static_cast<std::uint64_t>(key);
    writer.write(key, make_image_record(identity_header, {}));
    ++key;
    first_image_key = end_image_key;
  }
  summary.split_records = writer.split_records();
  writer.close();
  return summary;
}

PackSummary pack_image_folder(const std::string& image_dir, const std::string& out_prefix,
                              std::int64_t image_size, PackedImageMaker* maker) {
  const fs::path parent = fs::path(out_prefix).parent_path();
  if (!parent.empty()) fs::create_directories(parent);
  return pack_image_folder(image_dir, PackFiles{out_prefix + ".rec", out_prefix + ".idx"},
                           image_size, maker);
}

}  // namespace pfc
