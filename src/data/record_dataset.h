// A RecordIO dataset folder as insightface ships it (train.rec + train.idx): which records
// hold the images, how many identities the header announces, and reading one sample's
// record. The record layout is described in data/image_record.h.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/recordio.h"

namespace pfc {

class RecordDataset {
 public:
  // Throws UsageError when the folder or one of its two files is missing, and Error when
  // the index does not fit the record file (missing image keys, a header that holds no count
  // or another dataset's, offsets that point at no record, keys that share an offset).
  explicit RecordDataset(const std::string& folder);

  std::int64_t num_images() const { return num_images_; }
  // Identities (labels [0, num_classes)): the identity records the header announces, or -1
  // when there is no header or it names none.
  std::int64_t num_classes() const { return num_classes_; }
  // The RecordIO key of sample `sample` in [0, num_images).
  std::int64_t key(std::int64_t sample) const { return index_.entry(first_entry_ + sample).first; }
  const std::string& rec_path() const { return rec_.path(); }
  // A one-line description of the header: key ranges and counts.
  std::string describe() const;

  // Reads sample `sample`: its label and a view of its image bytes inside `payload`. Returns
  // false with the reason in `why` when the record is damaged (unreadable).
  bool read(std::int64_t sample, std::vector<std::uint8_t>& payload, float& label,
            std::span<const std::uint8_t>& jpeg, std::string& why) const;

 private:
  struct Paths {
    std::string rec;
    std::string idx;
  };
  static Paths paths_in(const std::string& folder);
  explicit RecordDataset(const Paths& paths);

  RecordIOIndex index_;
  RecordIOFile rec_;
  std::size_t first_entry_ = 0;  // index entry of sample 0; samples are consecutive entries
  std::int64_t num_images_ = 0;
  std::int64_t num_classes_ = -1;
  bool has_header_ = false;
};

}  // namespace pfc
