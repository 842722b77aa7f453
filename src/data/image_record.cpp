#include "data/image_record.h"

#include <fmt/format.h>

#include <cstring>

namespace pfc {

bool parse_image_record(std::span<const std::uint8_t> payload, ImageRecordHeader& header,
                        std::span<const std::uint8_t>& image, std::string& why) {
  if (payload.size() < kImageRecordHeaderBytes) {
    why = fmt::format("record of {} bytes is shorter than the {}-byte image header",
                      payload.size(), kImageRecordHeaderBytes);
    return false;
  }
  const std::uint8_t* p = payload.data();
  std::memcpy(&header.flag, p, 4);
  std::memcpy(&header.label, p + 4, 4);
  std::memcpy(&header.id, p + 8, 8);
  std::memcpy(&header.id2, p + 16, 8);
  const std::size_t label_bytes = std::size_t{header.flag} * 4;
  if (payload.size() - kImageRecordHeaderBytes < label_bytes) {
    why = fmt::format("header announces {} labels but the record has only {} bytes after it",
                      header.flag, payload.size() - kImageRecordHeaderBytes);
    return false;
  }
  header.labels.resize(header.flag);
  if (label_bytes > 0) std::memcpy(header.labels.data(), p + kImageRecordHeaderBytes, label_bytes);
  image = payload.subspan(kImageRecordHeaderBytes + label_bytes);
  return true;
}

std::vector<std::uint8_t> make_image_record(const ImageRecordHeader& header,
                                            std::span<const std::uint8_t> image) {
  // As mxnet.recordio.pack: a label array sets flag to its length and the scalar label to 0.
  const auto flag = static_cast<std::uint32_t>(header.labels.size());
  const float label = flag > 0 ? 0.0f : header.label;
  std::vector<std::uint8_t> out(kImageRecordHeaderBytes + flag * 4 + image.size());
  std::uint8_t* p = out.data();
  std::memcpy(p, &flag, 4);
  std::memcpy(p + 4, &label, 4);
  std::memcpy(p + 8, &header.id, 8);
  std::memcpy(p + 16, &header.id2, 8);
  if (flag > 0) std::memcpy(p + kImageRecordHeaderBytes, header.labels.data(), flag * 4);
  if (!image.empty()) std::memcpy(p + kImageRecordHeaderBytes + flag * 4, image.data(), image.size());
  return out;
}

}  // namespace pfc
