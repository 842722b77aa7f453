#include "data/recordio_data_source.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/counter_rng.h"
#include "core/error.h"

namespace pfc {

RecordIODataSource::RecordIODataSource(std::unique_ptr<RecordDataset> dataset,
                                       const RecordIOSourceOptions& options, int rank,
                                       int world_size, Allocator& batch_allocator)
    : dataset_(std::move(dataset)),
      options_(options),
      sampler_(dataset_->num_images(), options.batch_size, rank, world_size, options.seed),
      damaged_(new std::atomic<std::uint8_t>[static_cast<std::size_t>(dataset_->num_images())]) {
  PFC_CHECK(options.num_classes > 0, "num_classes {} must be positive", options.num_classes);
  check_records();
  for (std::int64_t i = 0; i < dataset_->num_images(); ++i) damaged_[i].store(0);
  const int workers = std::max(1, options.workers);
  for (int w = 0; w < workers; ++w) workers_.push_back(std::make_unique<Worker>(options.image_size));
  // Two buffers beyond one per worker: one lent to the trainer, one ready for the next step.
  std::vector<Batch> buffers(static_cast<std::size_t>(workers + 2));
  const std::int64_t s = options.image_size;
  for (auto& b : buffers) {
    b.images = Tensor::empty({options.batch_size, s, s, 3}, DType::f32, batch_allocator,
                             MemoryPurpose::data);
    b.labels =
        Tensor::empty({options.batch_size}, DType::i64, batch_allocator, MemoryPurpose::data);
  }
  pipeline_ = std::make_unique<BatchPipeline>(
      workers, std::move(buffers),
      [this](std::int64_t k, Batch& batch, int worker) { fill(k, batch, *workers_[worker]); });
}

RecordIODataSource::~RecordIODataSource() { pipeline_.reset(); }

void RecordIODataSource::check_records() const {
  // A few records spread over the dataset are enough: a dataset is packed at one size, and a
  // damaged record among them is passed over (training skips it too) unless all are.
  constexpr std::int64_t kProbes = 16;
  FaceImageDecoder decoder(options_.image_size);
  std::vector<std::uint8_t> payload;
  const std::int64_t n = dataset_->num_images();
  const std::int64_t probes = std::min(kProbes, n);
  std::vector<std::string> damage;
  for (std::int64_t p = 0; p < probes; ++p) {
    const std::int64_t sample = p * n / probes;
    float label = 0;
    std::span<const std::uint8_t> image;
    std::string why;
    int width = 0, height = 0;
    if (!dataset_->read(sample, payload, label, image, why) ||
        !decoder.read_size(image, width, height, why)) {
      damage.push_back(fmt::format("key {}: {}", dataset_->key(sample), why));
      continue;
    }
    if (width == options_.image_size && height == options_.image_size) return;
    throw UsageError(fmt::format(
        "{} holds {}x{} images (key {}), but image_size = {}; set image_size = {}, or "
        "pack the images at {}x{} (pfc pack --image-size {})",
        dataset_->rec_path(), width, height, dataset_->key(sample), options_.image_size, width,
        options_.image_size, options_.image_size, options_.image_size));
  }
  const auto named =
      damage.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(3, damage.size()));
  throw Error(fmt::format("{}: the {} records read across it at start-up are all damaged ({}{}); "
                          "check that train.idx belongs to train.rec and that the copy is "
                          "complete",
                          dataset_->rec_path(), probes, fmt::join(damage.begin(), named, "; "),
                          named == damage.end() ? "" : "; ..."));
}

bool RecordIODataSource::flipped(std::int64_t epoch, std::int64_t sample) const {
  const std::uint64_t key = stream_key(options_.seed, "flip", static_cast<std::uint64_t>(epoch));
  return uniform53(key, static_cast<std::uint64_t>(sample)) < 0.5;
}

std::int64_t damaged_records_tolerated(std::int64_t images) {
  return std::max(kDamagedRecordsFloor, images / kDamagedRecordsShare);
}

void RecordIODataSource::mark_damaged(std::int64_t sample, const std::string& why) {
  if (damaged_[sample].exchange(1) != 0) return;
  const std::int64_t damaged = skipped_.fetch_add(1) + 1;
  spdlog::warn("skipping damaged record: key {} of {}: {}", dataset_->key(sample),
               dataset_->rec_path(), why);
  const std::int64_t tolerated = damaged_records_tolerated(dataset_->num_images());
  if (damaged > tolerated)
    throw Error(fmt::format(
        "{}: {} of its {} images are damaged, more than a run skips ({}: 1 in {}, at least "
        "{}); the last: key {}: {}. Training on what is left would not be training on this "
        "dataset: check that train.idx belongs to train.rec and that the copy is complete",
        dataset_->rec_path(), damaged, dataset_->num_images(), tolerated, kDamagedRecordsShare,
        kDamagedRecordsFloor, dataset_->key(sample), why));
}

bool RecordIODataSource::load(std::int64_t epoch, std::int64_t sample, float* image,
                              std::int64_t& label, Worker& worker) {
  float raw_label = 0.0f;
  std::span<const std::uint8_t> jpeg;
  std::string why;
  if (!dataset_->read(sample, worker.payload, raw_label, jpeg, why)) {
    mark_damaged(sample, why);
    return false;
  }
  if (!std::isfinite(raw_label) || std::floor(raw_label) != raw_label || raw_label < 0.0f ||
      raw_label >= static_cast<float>(options_.num_classes)) {
    mark_damaged(sample, fmt::format("label {} is not a class in [0, {})", raw_label,
                                     options_.num_classes));
    return false;
  }
  if (!worker.decoder.decode(jpeg, flipped(epoch, sample), image, why)) {
    mark_damaged(sample, why);
    return false;
  }
  label = static_cast<std::int64_t>(raw_label);
  return true;
}

void RecordIODataSource::fill(std::int64_t k, Batch& batch, Worker& worker) {
  const GlobalBatch global = sampler_.locate(start_, k);
  const auto order = sampler_.order(global.epoch);
  const std::int64_t n = sampler_.num_samples();
  const std::int64_t begin = sampler_.rank_begin(global);
  const std::int64_t image_floats = options_.image_size * options_.image_size * 3;
  float* images = batch.images.data<float>();
  std::int64_t* labels = batch.labels.data<std::int64_t>();
  for (std::int64_t i = 0; i < options_.batch_size; ++i) {
    float* image = images + i * image_floats;
    std::int64_t tried = 0;
    for (std::int64_t p = begin + i;; ++p, ++tried) {
      if (tried == n)
        throw Error(fmt::format("every record of {} is damaged", dataset_->rec_path()));
      const std::int64_t sample = (*order)[p % n];
      if (damaged_[sample].load() == 0 && load(global.epoch, sample, image, labels[i], worker))
        break;
    }
  }
}

void RecordIODataSource::next(Batch& out) {
  const Batch& batch = pipeline_->next();
  out.images = batch.images;
  out.labels = batch.labels;
}

DataPosition RecordIODataSource::position() const {
  const std::int64_t delivered = pipeline_->delivered();
  if (delivered == 0) return start_;
  return sampler_.after(sampler_.locate(start_, delivered - 1));
}

void RecordIODataSource::seek(const DataPosition& position) {
  sampler_.check(position);
  pipeline_->stop();
  start_ = position;
  pipeline_->start();
}

}  // namespace pfc
