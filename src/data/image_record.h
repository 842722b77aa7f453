// The payload of one image record, as mxnet.recordio.pack writes it (struct IRHeader):
//   uint32 flag; float32 label; uint64 id; uint64 id2      (24 bytes, little-endian)
//   flag float32 labels when flag > 0 (then the scalar label field is unused, written 0)
//   the image's bytes (a JPEG; empty for insightface's header and identity records)
//
// insightface's datasets use it this way:
//   key 0:            flag 2, labels [first identity key, end of identity keys); no image.
//                     The images are keys 1 .. labels[0] - 1 (MXFaceDataset:
//                     `header.flag > 0 -> imgidx = range(1, int(header.label[0]))`).
//   key 1 .. N:       flag 0, label = identity (0 .. C-1), id = key; a JPEG.
//   key N+1 .. N+C:   flag 2, labels [first image key, end image key) of identity key-N-1;
//                     no image.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pfc {

struct ImageRecordHeader {
  std::uint32_t flag = 0;
  float label = 0.0f;
  std::uint64_t id = 0;
  std::uint64_t id2 = 0;
  std::vector<float> labels;  // flag of them

  // The sample's class: labels[0] when there are several, else the scalar label.
  float primary_label() const { return flag > 0 ? labels.at(0) : label; }
};

inline constexpr std::size_t kImageRecordHeaderBytes = 24;

// Splits a payload into its header and image bytes (a view into `payload`). Returns false
// with the reason in `why` when the payload is too short for what its header announces.
bool parse_image_record(std::span<const std::uint8_t> payload, ImageRecordHeader& header,
                        std::span<const std::uint8_t>& image, std::string& why);

// The payload for `header` and `image`; flag is taken from header.labels.size().
std::vector<std::uint8_t> make_image_record(const ImageRecordHeader& header,
                                            std::span<const std::uint8_t> image);

}  // namespace pfc
