#include "data/synthetic_data_source.h"

#include <cstring>

#include "core/counter_rng.h"
#include "core/error.h"
#include "data/face_image_decoder.h"

namespace pfc {

SyntheticDataSource::SyntheticDataSource(const SyntheticSourceOptions& options, int rank,
                                         int world_size, Allocator& batch_allocator)
    : options_(options),
      sampler_(options.num_image, options.batch_size, rank, world_size, options.seed) {
  if (options.labels == SyntheticLabels::constant && options.num_classes < 2)
    throw UsageError(fmt::format("synthetic_labels = \"constant\" uses label 1, so num_classes "
                                 "must be at least 2 (it is {})",
                                 options.num_classes));
  PFC_CHECK(options.num_classes > 0, "num_classes {} must be positive", options.num_classes);
  const std::int64_t s = options.image_size;
  images_ = Tensor::empty({options.batch_size, s, s, 3}, DType::f32, batch_allocator,
                          MemoryPurpose::data);
  // A plan's batch buffers have a size and no memory (meta): its images need no pixels, but the
  // classifier reads the labels, which take host memory of the same size instead.
  const bool planned = batch_allocator.device() == DeviceKind::meta;
  labels_ = Tensor::empty({options.batch_size}, DType::i64,
                          planned ? host_allocator() : batch_allocator, MemoryPurpose::data);
  if (planned) return;

  // torch.randint(0, 255, (3, s, s)) in spirit: pixel i of the CHW image from the counter RNG.
  const std::uint64_t key = stream_key(options.seed, "synthetic_image");
  float* image = images_.data<float>();
  for (std::int64_t c = 0; c < 3; ++c)
    for (std::int64_t y = 0; y < s; ++y)
      for (std::int64_t x = 0; x < s; ++x) {
        const std::uint64_t chw = static_cast<std::uint64_t>((c * s + y) * s + x);
        const auto pixel = static_cast<std::uint8_t>(uniform24(key, chw) * 255.0);
        image[(y * s + x) * 3 + c] = normalise_pixel(pixel);
      }
  const std::size_t image_bytes = static_cast<std::size_t>(s * s * 3) * sizeof(float);
  for (std::int64_t i = 1; i < options.batch_size; ++i)
    std::memcpy(image + i * s * s * 3, image, image_bytes);
}

std::int64_t SyntheticDataSource::label(std::int64_t epoch, std::int64_t index) const {
  if (options_.labels == SyntheticLabels::constant) return 1;
  const std::uint64_t key = stream_key(options_.seed, "synthetic_labels");
  const auto global = static_cast<std::uint64_t>(epoch * options_.num_image + index);
  return static_cast<std::int64_t>(splitmix64(key + global) %
                                    static_cast<std::uint64_t>(options_.num_classes));
}

void SyntheticDataSource::next(Batch& out) {
  const GlobalBatch global = sampler_.locate(position_, 0);
  const std::int64_t begin = sampler_.rank_begin(global);
  std::int64_t* labels = labels_.data<std::int64_t>();
  for (std::int64_t i = 0; i < options_.batch_size; ++i) labels[i] = label(global.epoch, begin + i);
  position_ = sampler_.after(global);
  out.images = images_;
  out.labels = labels_;
}

void SyntheticDataSource::seek(const DataPosition& position) {
  sampler_.check(position);
  position_ = position;
}

}  // namespace pfc
