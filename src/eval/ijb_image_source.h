// The images of an IJB list as the network sees them: each loose crop decoded, aligned onto
// arcface's template by its landmarks' transform (data/face_cropper.h) and normalised as
// training images are, RGB (eval_ijbc.py reads BGR, warps, then converts to RGB: the same
// crop). A batch is aligned on several threads when its first image is asked for, so that
// decoding keeps up with a GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/face_cropper.h"
#include "eval/embedding_extractor.h"
#include "eval/ijb_protocol.h"
#include "eval/image_source.h"

namespace pfc {

class IjbImageSource final : public ImageSource {
 public:
  // `batch_size`: the images aligned together (embed_images' batches: the ranges start at
  // multiples of it). The lists must outlive the source.
  IjbImageSource(const IjbFiles& files, const IjbImages& images, std::int64_t image_size,
                 std::int64_t batch_size, int threads);

  std::int64_t size() const override { return images_.size(); }
  void decode(std::int64_t i, float* out) override;
  // "'ROOT/loose_crop/NAME' (line L of 'ROOT/meta/..._name_5pts_score.txt')".
  std::string describe(std::int64_t i) const override;

  // Decodes and aligns every image of `ranges` without keeping them; the first that fails is
  // a UsageError naming it (and how many more failed), before any embedding is done. A stop
  // request (SIGTERM, SIGUSR1: core/stop_signals.h) ends it with a pfc::Error.
  void check(const std::vector<ImageRange>& ranges);

 private:
  // Aligns [begin, end) into the batch buffer; a failure's reason is kept per image.
  void prepare(std::int64_t begin, std::int64_t end);
  std::string failure(std::int64_t i) const;

  const IjbFiles& files_;
  const IjbImages& images_;
  std::int64_t image_size_;
  std::int64_t batch_size_;
  std::vector<std::unique_ptr<FaceCropper>> croppers_;  // one per thread
  std::vector<std::uint8_t> crops_;    // [batch_size, image_size, image_size, 3]
  std::vector<std::string> errors_;    // per image of the batch; empty: aligned
  std::int64_t prepared_begin_ = 0, prepared_end_ = 0;
};

}  // namespace pfc
