#include "data/record_dataset.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "data/dataset_header.h"
#include "data/image_record.h"

namespace pfc {

namespace fs = std::filesystem;

RecordDataset::Paths RecordDataset::paths_in(const std::string& folder) {
  if (!fs::is_directory(folder))
    throw UsageError(fmt::format("rec = \"{}\": no such folder (expected \"synthetic\" or a "
                                 "folder holding train.rec and train.idx)",
                                 folder));
  Paths paths{(fs::path(folder) / "train.rec").string(), (fs::path(folder) / "train.idx").string()};
  for (const std::string& path : {paths.rec, paths.idx})
    if (!fs::is_regular_file(path))
      throw UsageError(fmt::format("rec = \"{}\": {} is missing (a dataset folder holds "
                                   "train.rec and train.idx; `pfc pack` writes them)",
                                   folder, path));
  return paths;
}

RecordDataset::RecordDataset(const std::string& folder) : RecordDataset(paths_in(folder)) {}

RecordDataset::RecordDataset(const Paths& paths)
    : index_(RecordIOIndex::load(paths.idx)), rec_(paths.rec) {
  const std::string& idx_path = paths.idx;
  const std::int64_t header_offset = index_.find(0);
  if (header_offset < 0)
    throw Error(fmt::format("{} has no key 0, the header record of an insightface dataset",
                            idx_path));
  std::vector<std::uint8_t> payload;
  std::string why;
  ImageRecordHeader header;
  std::span<const std::uint8_t> image;
  if (!rec_.read(static_cast<std::uint64_t>(header_offset), payload, why) ||
      !parse_image_record(payload, header, image, why))
    throw Error(fmt::format("{}: the header record (key 0 at offset {} by {}) is unreadable: {}",
                            rec_.path(), header_offset, idx_path, why));

  if (header.flag > 0) {
    // insightface: images are keys 1 .. labels[0] - 1; identities follow up to labels[1].
    has_header_ = true;
    const DatasetCounts counts = read_dataset_counts(header, index_, rec_, idx_path);
    num_images_ = counts.images;
    num_classes_ = counts.classes;
    first_entry_ = 0;
    while (first_entry_ < index_.size() && index_.entry(first_entry_).first < 1) ++first_entry_;
  } else {
    // No header: every record is an image (MXFaceDataset: imgidx = all keys), as in a dataset
    // rewritten by arcface_torch's shuffle_rec.py.
    first_entry_ = 0;
    num_images_ = static_cast<std::int64_t>(index_.size());
  }
  if (num_images_ == 0) throw Error(fmt::format("{} holds no images", rec_.path()));

  // An index written for another file points into the middle of records; a truncated file
  // merely ends early (its missing records are skipped as damaged while reading).
  for (std::int64_t sample : {std::int64_t{0}, num_images_ - 1}) {
    const auto [key, offset] = index_.entry(first_entry_ + sample);
    if (offset <= rec_.size() && rec_.size() - offset >= 8 && !rec_.has_record_at(offset))
      throw Error(fmt::format("{} does not match {}: key {} points at offset {}, where no "
                              "record starts",
                              idx_path, rec_.path(), key, offset));
  }
}

std::string RecordDataset::describe() const {
  if (!has_header_)
    return fmt::format("{}: {} images, no header record", rec_.path(), num_images_);
  return fmt::format("{}: {} images (keys 1..{}), {} identities", rec_.path(), num_images_,
                     num_images_, num_classes_ < 0 ? std::string("unknown") : std::to_string(num_classes_));
}

bool RecordDataset::read(std::int64_t sample, std::vector<std::uint8_t>& payload, float& label,
                         std::span<const std::uint8_t>& jpeg, std::string& why) const {
  const auto [key, offset] = index_.entry(first_entry_ + sample);
  ImageRecordHeader header;
  if (!rec_.read(offset, payload, why) || !parse_image_record(payload, header, jpeg, why))
    return false;
  // The record's id is not checked against its key: MXFaceDataset never reads it, and a
  // dataset rewritten by shuffle_rec.py keeps each record's original id under a new key. An
  // index that points every key at one record is refused when it is loaded instead.
  label = header.primary_label();
  return true;
}

}  // namespace pfc
