// Embeddings of many images through a backbone in inference mode, a batch at a time: each
// batch is decoded on the host (with its left-right mirror images when asked: one decode, two
// images), sent to the device and embedded, so any number of images passes through a fixed
// amount of memory. The next batch is decoded while the device computes the current one.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "eval/image_source.h"
#include "model/backbone.h"

namespace pfc {

struct ImageRange {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
};

// The consecutive ranges of at most `batch_size` images that cover [0, count).
std::vector<ImageRange> batch_ranges(std::int64_t count, std::int64_t batch_size);

// Receives a batch's embeddings: device tensors [range.size(), emb] f32 of the images and,
// when mirrored ones were asked for, of their mirror images (else undefined). They are valid
// during the call.
using EmbeddingSink =
    std::function<void(const ImageRange& range, const Tensor& embeddings, const Tensor& mirrored)>;

// Embeds the images of each range in order and hands them to `sink`.
void embed_images(Backbone& backbone, ImageSource& source, const std::vector<ImageRange>& ranges,
                  bool with_mirrored, const EmbeddingSink& sink);

// [h, w, 3] floats mirrored left-right (mx.ndarray.flip(axis=2) on the CHW image).
void mirror_image(const float* image, std::int64_t size, float* out);

}  // namespace pfc
