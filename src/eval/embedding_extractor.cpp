#include "eval/embedding_extractor.h"

#include <algorithm>

namespace pfc {

namespace {

// Host images [2 * batch, s, s, 3]: a batch's images, then their mirror images.
struct StagedBatch {
  Tensor host;
  ImageRange range;
};

void decode_batch(ImageSource& source, const ImageRange& range, bool with_mirrored,
                  std::int64_t image_size, StagedBatch& staged) {
  const std::int64_t pixels = image_size * image_size * 3;
  float* images = staged.host.data<float>();
  float* mirrored = images + range.size() * pixels;
  for (std::int64_t i = 0; i < range.size(); ++i) {
    source.decode(range.begin + i, images + i * pixels);
    if (with_mirrored) mirror_image(images + i * pixels, image_size, mirrored + i * pixels);
  }
  staged.range = range;
}

}  // namespace

std::vector<ImageRange> batch_ranges(std::int64_t count, std::int64_t batch_size) {
  PFC_CHECK(batch_size > 0, "batch size {} must be positive", batch_size);
  std::vector<ImageRange> ranges;
  for (std::int64_t begin = 0; begin < count; begin += batch_size)
    ranges.push_back({begin, std::min(count, begin + batch_size)});
  return ranges;
}

void mirror_image(const float* image, std::int64_t size, float* out) {
  for (std::int64_t y = 0; y < size; ++y) {
    const float* row = image + y * size * 3;
    float* dst = out + y * size * 3;
    for (std::int64_t x = 0; x < size; ++x)
      std::copy(row + (size - 1 - x) * 3, row + (size - x) * 3, dst + x * 3);
  }
}

void embed_images(Backbone& backbone, ImageSource& source, const std::vector<ImageRange>& ranges,
                  bool with_mirrored, const EmbeddingSink& sink) {
  if (ranges.empty()) return;
  Backend& backend = backbone.backend();
  const std::int64_t s = backbone.image_size();
  std::int64_t largest = 0;
  for (const ImageRange& r : ranges) largest = std::max(largest, r.size());
  const std::int64_t copies = with_mirrored ? 2 : 1;
  // Two host buffers: one being decoded while the other's batch is on the device.
  StagedBatch staged[2];
  for (StagedBatch& b : staged)
    b.host = Tensor::empty({copies * largest, s, s, 3}, DType::f32, backend.staging_allocator(),
                           MemoryPurpose::data);
  decode_batch(source, ranges[0], with_mirrored, s, staged[0]);
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    StagedBatch& current = staged[k % 2];
    const std::int64_t n = current.range.size();
    const Tensor host = current.host.rows(0, copies * n);
    Tensor images = backend.empty(host.shape(), DType::f32, MemoryPurpose::data);
    backend.copy(host, images);
    Tensor embeddings = backbone.infer(images);
    if (embeddings.dtype() != DType::f32) {
      Tensor f32 = backend.empty(embeddings.shape(), DType::f32, MemoryPurpose::activations);
      backend.cast(embeddings, f32);
      embeddings = f32;
    }
    if (k + 1 < ranges.size()) decode_batch(source, ranges[k + 1], with_mirrored, s,
                                            staged[(k + 1) % 2]);
    sink(current.range, embeddings.rows(0, n),
         with_mirrored ? embeddings.rows(n, 2 * n) : Tensor());
    // The buffer just sent is decoded into again next: its copy must have finished.
    backend.synchronize();
  }
}

}  // namespace pfc
