#include "data/dataset_header.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace pfc {

namespace {

// float32 holds every integer up to 2^24 exactly; past it a header's count may be rounded.
constexpr float kExactIntegers = 16777216.0f;

enum class RecordKind { absent, unreadable, identity, image };

RecordKind record_kind(const RecordIOIndex& index, const RecordIOFile& rec, std::int64_t key) {
  const std::int64_t offset = index.find(key);
  if (offset < 0) return RecordKind::absent;
  std::vector<std::uint8_t> payload;
  std::string why;
  ImageRecordHeader header;
  std::span<const std::uint8_t> image;
  if (!rec.read(static_cast<std::uint64_t>(offset), payload, why) ||
      !parse_image_record(payload, header, image, why))
    return RecordKind::unreadable;
  return image.empty() ? RecordKind::identity : RecordKind::image;
}

std::string_view kind_words(RecordKind kind) {
  switch (kind) {
    case RecordKind::absent: return "not in the index";
    case RecordKind::unreadable: return "an unreadable record";
    case RecordKind::identity: return "an identity record (no image)";
    case RecordKind::image: return "an image record";
  }
  return "";
}

class HeaderReader {
 public:
  HeaderReader(const RecordIOIndex& index, const RecordIOFile& rec, const std::string& idx_path)
      : index_(index), rec_(rec), idx_path_(idx_path),
        last_key_(index.entry(index.size() - 1).first) {}

  // label[which] as a whole number >= 1 no larger than the key after the index's last, or a
  // message saying what it holds instead.
  void check_label(float value, int which, const char* meaning) const {
    if (!std::isfinite(value) || value < 1.0f || std::floor(value) != value)
      refuse(fmt::format("the header record's label[{}] is {}; it should be {}", which, value,
                         meaning));
    if (value > static_cast<float>(last_key_ + 1))
      refuse(fmt::format("the header record's label[{}] is {}, beyond the last key of {} ({}): "
                         "the index lacks some image keys, or does not belong to this file",
                         which, value, idx_path_, last_key_));
  }

  // The key after the last image: label[0] itself when float32 holds it exactly, else the key
  // among those that round to it where the image records end (an identity record, or the end
  // of the index, follows an image).
  std::int64_t end_of_images(float label) const {
    if (label <= kExactIntegers) return static_cast<std::int64_t>(label);
    const double spacing =
        static_cast<double>(std::nextafter(label, std::numeric_limits<float>::infinity())) -
        static_cast<double>(label);
    const auto lo = static_cast<std::int64_t>(static_cast<double>(label) - spacing);
    const auto hi = static_cast<std::int64_t>(static_cast<double>(label) + spacing);
    std::int64_t first_candidate = -1, last_candidate = -1;
    for (std::int64_t end = lo; end <= hi; ++end) {
      if (static_cast<float>(end) != label) continue;
      if (first_candidate < 0) first_candidate = end;
      last_candidate = end;
      const RecordKind before = record_kind(index_, rec_, end - 1);
      const RecordKind at = record_kind(index_, rec_, end);
      if (before != RecordKind::absent && before != RecordKind::identity &&
          (at == RecordKind::absent || at == RecordKind::identity))
        return end;
    }
    refuse(fmt::format(
        "the header record's label[0] = {} (1 + the number of images, a float32) fits none of the "
        "keys that round to it, {}..{}: no image record there is followed by an identity record "
        "or the end of {} (key {} is {}, key {} is {})",
        label, first_candidate, last_candidate, idx_path_, first_candidate - 1,
        kind_words(record_kind(index_, rec_, first_candidate - 1)), first_candidate,
        kind_words(record_kind(index_, rec_, first_candidate))));
  }

  // The identities: the index's keys after the images when label[1] is within float32's
  // rounding of their end, else label[1]'s own count where float32 holds it exactly (an index
  // without the identity records).
  std::int64_t identities(float label, std::int64_t images, std::size_t first_image_entry) const {
    const auto after_images =
        static_cast<std::int64_t>(index_.size() - first_image_entry) - images;
    if (after_images > 0 && static_cast<float>(images + 1 + after_images) == label)
      return after_images;
    if (label <= kExactIntegers) return static_cast<std::int64_t>(label) - (images + 1);
    refuse(fmt::format("the header record's label[1] = {} (the key after the last identity "
                       "record, a float32) is not within float32's rounding of {}, where the "
                       "keys of {} end",
                       label, images + 1 + after_images, idx_path_));
  }

  [[noreturn]] void refuse(const std::string& why) const {
    throw Error(fmt::format("{}: {}", rec_.path(), why));
  }

 private:
  const RecordIOIndex& index_;
  const RecordIOFile& rec_;
  const std::string& idx_path_;
  std::int64_t last_key_;
};

}  // namespace

DatasetCounts read_dataset_counts(const ImageRecordHeader& header, const RecordIOIndex& index,
                                  const RecordIOFile& rec, const std::string& idx_path) {
  const HeaderReader reader(index, rec, idx_path);
  reader.check_label(header.labels.at(0), 0,
                     "1 + the number of images (the key after the last image record)");
  DatasetCounts counts;
  counts.images = reader.end_of_images(header.labels[0]) - 1;

  // Keys are sorted and unique, so keys 1..N are all there iff N entries lie in [1, N].
  std::size_t first = 0;
  while (first < index.size() && index.entry(first).first < 1) ++first;
  const auto wanted = static_cast<std::size_t>(counts.images);
  if (wanted > 0 && (first + wanted > index.size() ||
                     index.entry(first + wanted - 1).first != counts.images))
    throw Error(fmt::format("{} lacks some image keys: the header record of {} says images are "
                            "keys 1..{}; the index does not belong to this file",
                            idx_path, rec.path(), counts.images));

  if (header.flag >= 2) {
    const float end_identity = header.labels[1];
    if (!std::isfinite(end_identity) || std::floor(end_identity) != end_identity)
      reader.refuse(fmt::format("the header record's label[1] is {}; it should be the key "
                                "after the last identity record",
                                end_identity));
    if (end_identity > header.labels[0])
      counts.classes = reader.identities(end_identity, counts.images, first);
  }
  return counts;
}

}  // namespace pfc
