// The counts of an insightface dataset: its header record (key 0, flag 2) announces them as
// float32 labels [end of image keys, end of identity keys], which past 2^24 keys are rounded
// (WebFace42M's 42 474 558 is stored as 42 474 560, so MXFaceDataset's
// `range(1, int(header.label[0]))` is off by a few there). The counts are taken from the index
// and the records instead: the image keys end where the first identity record (a record with
// no image) is, among the keys that float32 rounds to label[0]; the identities are the keys
// after them. A header within float32's rounding of those counts is accepted; one that holds
// no count (inf, NaN, a fraction, beyond the index) is refused by name.
#pragma once

#include <cstdint>
#include <string>

#include "data/image_record.h"
#include "data/recordio.h"

namespace pfc {

struct DatasetCounts {
  std::int64_t images = 0;    // image keys 1..images
  std::int64_t classes = -1;  // identities, or -1 when the header announces none
};

// `header` is the parsed record at key 0 (flag > 0). Throws Error naming `rec` or `idx_path`
// when the header does not describe this index and record file.
DatasetCounts read_dataset_counts(const ImageRecordHeader& header, const RecordIOIndex& index,
                                  const RecordIOFile& rec, const std::string& idx_path);

}  // namespace pfc
