// Images to embed, whatever holds them: a verification .bin, a RecordIO dataset folder, or
// image files. Each decodes as the training pipeline does: RGB, image_size x image_size,
// (pixel/255 - 0.5)/0.5; only a verification file's images of another size are resized, as
// arcface_torch's load_bin resizes them (data/face_image_decoder.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/face_image_decoder.h"
#include "data/record_dataset.h"
#include "eval/verification_bin.h"

namespace pfc {

class ImageSource {
 public:
  virtual ~ImageSource() = default;
  virtual std::int64_t size() const = 0;
  // Image i as [image_size, image_size, 3] floats at `out`. An image that does not decode (or
  // has another size) is a UsageError naming it with describe(i).
  virtual void decode(std::int64_t i, float* out) = 0;
  // What names image i in messages: "'lfw.bin' image 17", "'DIR/train.rec' key 42", a path.
  virtual std::string describe(std::int64_t i) const = 0;
};

// The images of a verification file, in the file's order (pair p is images 2p and 2p + 1),
// resized as load_bin resizes them when their width is not image_size.
class BinImageSource final : public ImageSource {
 public:
  BinImageSource(std::shared_ptr<const VerificationBin> bin, std::int64_t image_size);
  std::int64_t size() const override { return bin_->images(); }
  void decode(std::int64_t i, float* out) override;
  std::string describe(std::int64_t i) const override;

 private:
  std::shared_ptr<const VerificationBin> bin_;
  FaceImageDecoder decoder_;
};

// Every sample of a dataset folder (train.rec + train.idx), in index order.
class RecordImageSource final : public ImageSource {
 public:
  RecordImageSource(const std::string& folder, std::int64_t image_size);
  std::int64_t size() const override { return dataset_.num_images(); }
  void decode(std::int64_t i, float* out) override;
  std::string describe(std::int64_t i) const override;
  std::int64_t key(std::int64_t i) const { return dataset_.key(i); }
  // The identity record i is labelled with, once decode(i) has read it (-1 before).
  std::int64_t label(std::int64_t i) const { return labels_.at(static_cast<std::size_t>(i)); }

 private:
  RecordDataset dataset_;
  FaceImageDecoder decoder_;
  std::vector<std::uint8_t> payload_;
  std::vector<std::int64_t> labels_;
};

// Image files, given one by one or as folders searched recursively (the extensions the decoder
// reads, any case: data/face_image_decoder.h; each folder's files in sorted order), in the
// order given. What else a folder holds is skipped, with a warning that counts it by extension.
class FileImageSource final : public ImageSource {
 public:
  FileImageSource(const std::vector<std::string>& paths, std::int64_t image_size);
  std::int64_t size() const override { return static_cast<std::int64_t>(files_.size()); }
  void decode(std::int64_t i, float* out) override;
  std::string describe(std::int64_t i) const override { return "'" + path(i) + "'"; }
  const std::string& path(std::int64_t i) const { return files_.at(static_cast<std::size_t>(i)); }

 private:
  std::vector<std::string> files_;
  FaceImageDecoder decoder_;
  std::vector<std::uint8_t> bytes_;
};

}  // namespace pfc
